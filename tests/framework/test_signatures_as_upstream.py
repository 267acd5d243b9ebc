"""Pod signatures (OpportunisticBatching) as upstream v1.36 makes them: two pods share a
signature exactly when upstream's ``frameworkImpl.SignPod`` gives them equal bytes (the
JSON of ``signers.go`` and every default plugin's ``SignPod``), so kubesched batches the
same pods. Each row is a pair of pods and upstream's answer, with the reason from its
source; the profile is the default one with PodTopologySpread ``defaultingType: List``
(the system default constraints would make every pod unsignable).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.framework.signing import (
    HOST_PORTS_SIGNER,
    RESOURCES_SIGNER,
    SCORING_DEFAULTS,
    TOLERATIONS_SIGNER,
    VOLUMES_SIGNER,
    host_ports_signer,
)
from kubesched.objects.pod import parse_pod
from kubesched.plugins.nodeports import NodePorts

from ..helpers import Cluster, framework, node

LIST_DEFAULTING = {"pluginConfig": [{"name": "PodTopologySpread", "args": {"defaultingType": "List"}}]}
FWK = framework(Cluster([node("n0")]), LIST_DEFAULTING)

Doc = dict[str, Any]
Change = Callable[[Doc], None]


def base() -> Doc:
    """A pending pod as the API server returns it (the tolerations its admission adds)."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "uid": "u", "labels": {"app": "web"}},
        "spec": {
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}}}],
            "schedulerName": "default-scheduler",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ],
        },
    }


def spec(doc: Doc) -> Doc:
    s: Doc = doc["spec"]
    return s


def app(doc: Doc) -> Doc:
    c: Doc = spec(doc)["containers"][0]
    return c


def ports(*entries: Doc) -> Change:
    return lambda d: app(d).__setitem__("ports", [dict(e) for e in entries])


def requests(**values: str) -> Change:
    return lambda d: app(d)["resources"].__setitem__("requests", {k.replace("_", "-"): v for k, v in values.items()})


def set_spec(key: str, value: Any) -> Change:
    return lambda d: spec(d).__setitem__(key, copy.deepcopy(value))


def containers(*images: str) -> Change:
    return lambda d: spec(d).__setitem__("containers", [{"name": f"c{i}", "image": im} for i, im in enumerate(images)])


def init_container(entry: Doc) -> Change:
    return lambda d: spec(d).__setitem__("initContainers", [{"name": "init", "image": "registry.k8s.io/pause:3.10", **entry}])


def volumes(*entries: Doc) -> Change:
    return set_spec("volumes", list(entries))


def meta(key: str, value: Any) -> Change:
    return lambda d: d["metadata"].__setitem__(key, copy.deepcopy(value))


def tolerations(*entries: Doc) -> Change:
    return set_spec("tolerations", list(entries))


def required(*terms: Doc) -> Change:
    return set_spec("affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": list(terms)}}})


def both(*changes: Change) -> Change:
    def apply(d: Doc) -> None:
        for change in changes:
            change(d)
    return apply


def nothing(d: Doc) -> None:
    return None


def ephemeral(storage: str) -> Doc:
    return {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "fast",
                                             "resources": {"requests": {"storage": storage}}}}}


TCP80 = {"containerPort": 80, "hostPort": 80, "protocol": "TCP"}
T_A = {"key": "a", "operator": "Equal", "value": "1", "effect": "NoSchedule"}
T_B = {"key": "b", "operator": "Exists", "effect": "NoSchedule"}
DISK = {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd", "nvme"]}]}
ZONE = {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}

EQUAL, DIFFERENT = True, False

# (what differs, change to the first pod, change to the second, upstream's answer)
CASES: list[tuple[str, Change, Change, bool]] = [
    # HostPortsSigner: the sorted set of hostPort numbers of containers and init containers
    ("a host port on another host IP", ports(TCP80), ports({**TCP80, "hostIP": "10.0.0.1"}), EQUAL),
    ("a host port over UDP instead of TCP", ports(TCP80), ports({**TCP80, "protocol": "UDP"}), EQUAL),
    ("another host port number", ports(TCP80), ports({**TCP80, "hostPort": 8080}), DIFFERENT),
    ("host ports in another order", ports(TCP80, {"containerPort": 81, "hostPort": 81}),
     ports({"containerPort": 81, "hostPort": 81}, TCP80), EQUAL),
    ("one host port asked twice", ports(TCP80), ports(TCP80, {**TCP80, "protocol": "UDP"}), EQUAL),
    ("a container port without a host port", nothing, ports({"containerPort": 80}), EQUAL),
    ("a host port of an init container", nothing, init_container({"ports": [TCP80]}), DIFFERENT),
    ("one host port on an init container or an app container", ports(TCP80),
     both(ports(TCP80), init_container({"ports": [TCP80]})), EQUAL),
    # ResourcesSigner: computePodResourceRequest, the requests only
    ("0 cpu asked explicitly, or no cpu", requests(memory="256Mi"), requests(cpu="0", memory="256Mi"), EQUAL),
    ("1 cpu written as 1000m", requests(cpu="1"), requests(cpu="1000m"), EQUAL),
    ("more cpu", requests(cpu="1"), requests(cpu="2"), DIFFERENT),
    ("an extended resource asked at 0", nothing,
     requests(cpu="500m", memory="256Mi", **{"example.com/gpu": "0"}), DIFFERENT),
    ("pod overhead", nothing, set_spec("overhead", {"cpu": "100m"}), DIFFERENT),
    ("a request split over two containers",
     set_spec("containers", [{"name": "a", "image": "x:1", "resources": {"requests": {"cpu": "1"}}}]),
     set_spec("containers", [{"name": "a", "image": "x:1", "resources": {"requests": {"cpu": "500m"}}},
                             {"name": "b", "image": "x:1", "resources": {"requests": {"cpu": "500m"}}}]), EQUAL),
    ("an init container asking less than the app", nothing,
     init_container({"resources": {"requests": {"cpu": "100m"}}}), EQUAL),
    # TolerationsSigner: every toleration as written, sorted by key then value
    ("tolerations in another order", tolerations(T_A, T_B), tolerations(T_B, T_A), EQUAL),
    ("other tolerationSeconds", nothing,
     tolerations({"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                  "tolerationSeconds": 600},
                 {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
                  "tolerationSeconds": 300}), DIFFERENT),
    ("the Equal operator written or left out", tolerations(T_A),
     tolerations({k: v for k, v in T_A.items() if k != "operator"}), DIFFERENT),
    ("one key and value with two effects, in another order",
     tolerations({**T_A, "effect": "NoSchedule"}, {**T_A, "effect": "NoExecute"}),
     tolerations({**T_A, "effect": "NoExecute"}, {**T_A, "effect": "NoSchedule"}), DIFFERENT),
    # VolumesSigner: every source but configMap and secret, without the volume's name
    ("a configMap volume", nothing, volumes({"name": "cfg", "configMap": {"name": "settings"}}), EQUAL),
    ("secret volumes of other secrets", volumes({"name": "s", "secret": {"secretName": "a"}}),
     volumes({"name": "s", "secret": {"secretName": "b"}}), EQUAL),
    ("an emptyDir volume", nothing, volumes({"name": "tmp", "emptyDir": {}}), DIFFERENT),
    ("one emptyDir under two names", volumes({"name": "a", "emptyDir": {}}), volumes({"name": "b", "emptyDir": {}}), EQUAL),
    ("hostPath volumes of other paths", volumes({"name": "h", "hostPath": {"path": "/a"}}),
     volumes({"name": "h", "hostPath": {"path": "/b"}}), DIFFERENT),
    ("claims of other names", volumes({"name": "d", "persistentVolumeClaim": {"claimName": "a"}}),
     volumes({"name": "d", "persistentVolumeClaim": {"claimName": "b"}}), DIFFERENT),
    ("one ephemeral template under two volume names", volumes({"name": "a", "ephemeral": ephemeral("1Gi")}),
     volumes({"name": "b", "ephemeral": ephemeral("1Gi")}), EQUAL),
    ("ephemeral templates of other sizes", volumes({"name": "a", "ephemeral": ephemeral("1Gi")}),
     volumes({"name": "a", "ephemeral": ephemeral("2Gi")}), DIFFERENT),
    ("a field written as null, or left out", volumes({"name": "h", "hostPath": {"path": "/a"}}),
     volumes({"name": "h", "hostPath": {"path": "/a", "type": None}}), EQUAL),
    ("volumes in another order", volumes({"name": "a", "emptyDir": {}}, {"name": "h", "hostPath": {"path": "/a"}}),
     volumes({"name": "h", "hostPath": {"path": "/a"}}, {"name": "a", "emptyDir": {}}), EQUAL),
    # LabelsSigner (InterPodAffinity), NodeAffinitySigner and the nodeSelector
    ("another label value", nothing, meta("labels", {"app": "db"}), DIFFERENT),
    ("labels in another order", meta("labels", {"a": "1", "b": "2"}), meta("labels", {"b": "2", "a": "1"}), EQUAL),
    ("another nodeSelector", set_spec("nodeSelector", {"disk": "ssd"}), set_spec("nodeSelector", {"disk": "hdd"}),
     DIFFERENT),
    ("required terms in another order", required(DISK, ZONE), required(ZONE, DISK), EQUAL),
    ("requirement values in another order", required(DISK),
     required({"matchExpressions": [{"key": "disk", "operator": "In", "values": ["nvme", "ssd"]}]}), EQUAL),
    ("a requirement value repeated", required(DISK),
     required({"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd", "nvme", "ssd"]}]}), DIFFERENT),
    ("a preferred term of another weight",
     set_spec("affinity", {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         {"weight": 1, "preference": DISK}]}}),
     set_spec("affinity", {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
         {"weight": 2, "preference": DISK}]}}), DIFFERENT),
    ("node affinity set with no term, or not set", nothing, set_spec("affinity", {"nodeAffinity": {}}), DIFFERENT),
    ("no affinity, or affinity with nothing in it", nothing, set_spec("affinity", {}), EQUAL),
    # ImageLocality: the set of normalised image names of containers and init containers
    ("images in another order", containers("a:1", "b:1"), containers("b:1", "a:1"), EQUAL),
    ("an image without a tag, or with :latest", containers("nginx"), containers("nginx:latest"), EQUAL),
    ("one image in two containers", containers("a:1"), containers("a:1", "a:1"), EQUAL),
    ("an init container's image", nothing, init_container({"image": "busybox:1"}), DIFFERENT),
    # NodeName and SchedulerName
    ("another scheduler name", nothing, set_spec("schedulerName", "other"), DIFFERENT),
    ("another nodeName", set_spec("nodeName", "n0"), set_spec("nodeName", "n1"), DIFFERENT),
    # what no signer reads
    ("another namespace", nothing, meta("namespace", "team-a"), EQUAL),
    ("other annotations", nothing, meta("annotations", {"a": "b"}), EQUAL),
    ("another priority", nothing, set_spec("priority", 1000), EQUAL),
]


def signature_of(change: Change) -> object:
    doc = base()
    change(doc)
    return FWK.sign_pod(parse_pod(doc))


@pytest.mark.parametrize(("first", "second", "equal"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pods_share_a_signature_exactly_when_upstreams_do(first: Change, second: Change, equal: bool) -> None:
    a, b = signature_of(first), signature_of(second)
    assert a is not None and b is not None
    assert (a == b) is equal


UNSIGNABLE: list[tuple[str, Change]] = [
    # InterPodAffinity: a non-nil podAffinity or podAntiAffinity, terms or not
    ("pod anti-affinity with no term", set_spec("affinity", {"podAntiAffinity": {}})),
    ("pod affinity with a term", set_spec("affinity", {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "zone", "labelSelector": {"matchLabels": {"app": "web"}}}]}})),
    # PodTopologySpread: constraints of its own
    ("a spread constraint", set_spec("topologySpreadConstraints", [
        {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
         "labelSelector": {"matchLabels": {"app": "web"}}}])),
    # DynamicResources: any resource claim
    ("a resource claim", set_spec("resourceClaims", [{"name": "gpu", "resourceClaimTemplateName": "gpu"}])),
]


@pytest.mark.parametrize("change", [c[1] for c in UNSIGNABLE], ids=[c[0] for c in UNSIGNABLE])
def test_pods_upstream_does_not_sign_have_no_signature(change: Change) -> None:
    assert signature_of(change) is None


def test_a_pod_without_pod_affinity_is_signed() -> None:
    assert signature_of(set_spec("affinity", {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [DISK]}}})) is not None


def test_fragments_hold_upstreams_values() -> None:
    doc = base()
    both(ports(TCP80, {**TCP80, "hostPort": 8080, "protocol": "UDP", "hostIP": "10.0.0.1"}),
         init_container({"ports": [{"containerPort": 9, "hostPort": 9}]}),
         requests(cpu="500m", memory="256Mi", **{"example.com/gpu": "0"}),
         volumes({"name": "cfg", "configMap": {"name": "x"}}, {"name": "t", "emptyDir": {"medium": "Memory"}}))(doc)
    signature = dict(FWK.sign_pod(parse_pod(doc)) or ())
    assert signature[HOST_PORTS_SIGNER] == (9, 80, 8080)
    assert signature[RESOURCES_SIGNER] == (500, 256 * 2**20, 0, (("example.com/gpu", 0),))
    assert signature[VOLUMES_SIGNER] == ('{"emptyDir":{"medium":"Memory"}}',)
    assert signature[TOLERATIONS_SIGNER] == (
        ("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300),
        ("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300))


def test_node_ports_declares_the_addresses_it_leaves_unsigned() -> None:
    # NodePorts answers 80/TCP and 80/UDP differently, yet signs both as port 80, as upstream
    doc = base()
    ports(TCP80, {**TCP80, "protocol": "UDP", "hostIP": "10.0.0.1"})(doc)
    pod = parse_pod(doc)
    assert host_ports_signer(pod) == (80,)
    erased = NodePorts.upstream_unsigned_reads[0].erase(pod)
    assert {(p.ip, p.protocol, p.port) for p in erased.host_ports} == {("0.0.0.0", "TCP", 80)}


def test_erasing_the_scoring_defaults_keeps_the_signed_requests() -> None:
    doc = base()
    requests(memory="256Mi")(doc)
    pod = parse_pod(doc)
    assert pod.requests.non_zero_milli_cpu == 100  # scoring counts a container without cpu as 100m
    erased = SCORING_DEFAULTS.erase(pod)
    assert erased.requests.non_zero_milli_cpu == 0 and erased.requests.requests == pod.requests.requests
