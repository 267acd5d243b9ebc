"""parse_pod parses what a spec gives a pod once per template: pods of one template share
it, and everything that differs between them (or between namespaces) is still their own."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import parse_pod


def replica(name: str, node: str, namespace: str = "default", cpu: str = "100m", **spec: Any) -> dict[str, Any]:
    token = f"kube-api-access-{name}"
    return {
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": cpu}},
                            "volumeMounts": [{"name": token, "mountPath": "/var/run/secrets"}]}],
            "volumes": [{"name": token, "projected": {"sources": []}}],
            "tolerations": [{"key": "k", "operator": "Exists"}],
            **spec,
        },
    }


def test_replicas_share_their_spec_and_keep_their_own_node_and_volumes() -> None:
    a, b = parse_pod(replica("a", "n1"), keep_raw=False), parse_pod(replica("b", "n2"), keep_raw=False)
    assert a.requests is b.requests and a.tolerations is b.tolerations and a.images is b.images
    assert (a.node_name, b.node_name) == ("n1", "n2")
    assert [v.name for v in a.volumes] == ["kube-api-access-a"]
    assert [v.name for v in b.volumes] == ["kube-api-access-b"]


def test_a_different_request_is_a_different_template() -> None:
    small = parse_pod(replica("a", "n1", cpu="100m"), keep_raw=False)
    large = parse_pod(replica("b", "n1", cpu="2"), keep_raw=False)
    assert (small.requests.requests.milli_cpu, large.requests.requests.milli_cpu) == (100, 2000)


def test_pod_affinity_terms_take_the_namespace_of_their_own_pod() -> None:
    affinity = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}]}}
    first = parse_pod(replica("a", "n1", namespace="team-a", affinity=affinity))
    second = parse_pod(replica("a", "n1", namespace="team-b", affinity=affinity))
    assert first.pod_affinity != second.pod_affinity


@pytest.mark.parametrize("attempt", [1, 2])
def test_a_bad_spec_is_an_error_every_time(attempt: int) -> None:
    with pytest.raises(ObjectError, match="cpu"):
        parse_pod(replica("a", "n1", cpu="lots"))
