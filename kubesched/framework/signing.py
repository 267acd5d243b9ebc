"""Pod signatures for OpportunisticBatching (upstream's ``SignPlugin``, KEP-5598).

Two pods with equal signatures get the same Filter and Score answers on every node
of the same cluster state (but for what upstream knowingly leaves unsigned, below). After a scored placement the scheduler keeps the other
scored nodes; the next pod with the same signature may then take the next of them
without a walk or scoring (``scheduler/batching.py``). A plugin says which parts of
a pod its answers depend on by signing: ``sign_pod`` returns ``SignFragment``s (a key
naming the pod field it reads, and that field's value), or a rejecting ``Status`` when
its answer depends on more than the pod and the node (other pods' placements, for
pod affinity and topology spreading): such a pod is never batched.

Signing is optional, as upstream: a profile in which some PreFilter, Filter, PreScore
or Score plugin does not sign, or which has extenders, signs no pod (no batching).

Fragment keys are upstream's signer names, so plugins reading the same field share a
fragment (the framework keeps one per key). Values are immutable JSON-like data
(``SignValue``: strings, numbers, ``None`` and tuples of them), so signatures compare
with ``==`` and hash; lists whose order does not matter are sorted by the signer.

The in-tree signers sign exactly what upstream's do (``k8s.io/kube-scheduler/framework/
signers.go`` and each plugin's ``SignPod``): two pods share a signature here when they
share one upstream, so the same pods batch. Where upstream signs less than its plugin
reads (a host port's IP and protocol, the scoring defaults of a pod without requests,
repeated images, the namespace), the plugin declares it (``UnsignedRead``) and the
contract suite checks the rest of what it reads. The hint a twin gets is still checked
with every filter, so such a pod is never placed where it does not fit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeAlias, Union, runtime_checkable

from ..objects.pod import HostPort, PodInfo
from ..objects.resources import PodRequests
from ..objects.selectors import NodeSelector, NodeSelectorTerm, PreferredSchedulingTerm, Requirement
from ..objects.volumes import UNSIGNED_SOURCE
from .status import Code, Status

__all__ = [
    "SignValue",
    "SignFragment",
    "PodSignature",
    "SignPlugin",
    "UnsignedRead",
    "signature_digest",
    "DYNAMIC_RESOURCES_SIGNER",
    "IMAGE_NAMES_SIGNER",
    "LABELS_SIGNER",
    "NODE_NAME_SIGNER",
    "NODE_AFFINITY_SIGNER",
    "NODE_SELECTOR_SIGNER",
    "HOST_PORTS_SIGNER",
    "RESOURCES_SIGNER",
    "SCHEDULER_NAME_SIGNER",
    "TOLERATIONS_SIGNER",
    "VOLUMES_SIGNER",
    "FEATURES_SIGNER",
    "host_ports_signer",
    "tolerations_signer",
    "node_affinity_signer",
    "node_selector_signer",
    "labels_signer",
    "resources_signer",
    "volumes_signer",
    "sign_volumes",
    "image_names_signer",
    "HOST_PORT_ADDRESSES",
    "SCORING_DEFAULTS",
    "REPEATED_IMAGES",
    "UNSIGNED_NAMESPACE",
]

SignValue: TypeAlias = Union[str, int, float, bool, None, tuple["SignValue", ...]]
"""An immutable JSON-like value: compared with ``==``, hashable."""

# Upstream's signer names (``k8s.io/kube-scheduler/framework/signers.go``).
DYNAMIC_RESOURCES_SIGNER = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES_SIGNER = "v1.Pod.Spec.CanonicalImageNames()"
LABELS_SIGNER = "v1.Pod.Labels"
NODE_NAME_SIGNER = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR_SIGNER = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS_SIGNER = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME_SIGNER = "v1.Pod.Spec.SchedulerName"
TOLERATIONS_SIGNER = "v1.Pod.Spec.Tolerations"
VOLUMES_SIGNER = "v1.Pod.Spec.Volumes.NonSyntheticSources()"
FEATURES_SIGNER = "v1.Pod.Spec.RequiredFeatures()"


@dataclass(slots=True, frozen=True)
class SignFragment:
    """One part of a pod's signature: ``key`` names what was read (a signer name above,
    or one of your own), ``value`` is its value for this pod. Fragments with the same
    key must carry the same value for the same pod: the framework keeps one."""

    key: str
    value: SignValue


PodSignature: TypeAlias = tuple[tuple[str, SignValue], ...]
"""A pod's whole signature: its fragments sorted by key, the scheduler name among them
(upstream's ``SchedulerNameSignerName`` fragment). ``None`` where a pod has none."""


@runtime_checkable
class SignPlugin(Protocol):
    """Optional beside PreFilter, Filter, PreScore and Score (upstream's ``SignPlugin``).

    ``sign_pod`` returns the fragments covering every pod field the plugin's answers
    read, and ``None`` for the status; or a rejecting status (Unschedulable: "this pod
    cannot be batched", Error: the same, and logged) and no fragments. It is called once
    per scheduling attempt, must not depend on cluster state, and must be cheap.
    ``kubesched.testing`` checks that changing a pod field outside the fragments does not
    change the plugin's Filter or Score answers.
    """

    @property
    def name(self) -> str: ...

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]: ...


@dataclass(slots=True, frozen=True)
class UnsignedRead:
    """A pod field a plugin reads but signs only in part, because upstream's plugin does.

    Batching then treats pods that differ only in that part as twins although the plugin
    could answer them differently: a known imprecision kept so that the same pods batch as
    upstream's. A plugin declares these in ``upstream_unsigned_reads`` (a tuple of them);
    the contract suite (``assert_signature_covers_reads``) then compares the answers for two
    pods with equal signatures after ``erase`` has set that part to one canonical value in
    both, so the rest of the field must still be signed. A plugin that declares nothing is
    checked on every field in full.

    ``field``: the ``PodInfo`` field; ``reason``: why upstream signs less (reports show it);
    ``erase``: the pod with the unsigned part of ``field`` made canonical.
    """

    field: str
    reason: str
    erase: Callable[[PodInfo], PodInfo]


def signature_digest(signature: PodSignature | None) -> str:
    """Eight hex digits naming a signature in explain output; ``""`` for none."""
    if signature is None:
        return ""
    return hashlib.sha256(repr(signature).encode()).hexdigest()[:8]


# Common signers, shared by the plugins that read the same field (as upstream's).


def host_ports_signer(pod: PodInfo) -> SignValue:
    """The distinct host port numbers of every container, init containers included, sorted
    (upstream's ``HostPortsSigner``): neither the IP nor the protocol (``HOST_PORT_ADDRESSES``)."""
    ports = {hp.port for hp in pod.host_ports}
    ports.update(pod.init_host_ports)
    return tuple(sorted(ports))


def tolerations_signer(pod: PodInfo) -> SignValue:
    """Every toleration as written (an omitted operator is not ``Equal`` here, and the
    seconds count), sorted by key then value, others with the same key and value kept in
    their order (upstream's ``sort.Slice``, an insertion sort up to 12 tolerations; past
    that, its order among equal key and value may differ)."""
    ordered = sorted(pod.tolerations, key=lambda t: (t.key, t.value))
    return tuple((t.key, "" if t.operator_omitted else t.operator, t.value, t.effect, t.toleration_seconds)
                 for t in ordered)


def _requirements(reqs: tuple[Requirement, ...]) -> SignValue:
    """Each requirement with its values sorted, repeats kept; the list sorted (upstream's
    ``NodeSelectorRequirementsSigner``)."""
    return tuple(sorted(repr((r.key, r.operator, tuple(sorted(r.listed or r.values)))) for r in reqs))


def _term(term: NodeSelectorTerm) -> SignValue:
    return (_requirements(term.expressions), _requirements(term.fields))


def node_affinity_signer(pod: PodInfo) -> SignValue:
    """Required terms and weighted preferred terms, each list sorted (order does not matter);
    ``None`` without ``nodeAffinity``, two empty lists for ``nodeAffinity: {}`` (upstream's
    ``NodeAffinitySigner``)."""
    required: NodeSelector | None = pod.required_node_affinity
    preferred: tuple[PreferredSchedulingTerm, ...] = pod.preferred_node_affinity
    if required is None and not preferred:
        return ((), ()) if pod.node_affinity_set else None
    req = tuple(sorted((_term(t) for t in required.terms), key=repr)) if required is not None else ()
    pref = tuple(sorted(((p.weight, _term(p.term)) for p in preferred), key=repr))
    return (req, pref)


def node_selector_signer(pod: PodInfo) -> SignValue:
    return tuple(sorted(pod.node_selector.items()))


def labels_signer(pod: PodInfo) -> SignValue:
    return tuple(sorted(pod.labels.items()))


def resources_signer(pod: PodInfo) -> SignValue:
    """The pod's requests (containers, init containers, pod-level resources and overhead, as
    Fit computes them): cpu, memory, ephemeral storage and every scalar resource named, even
    at 0 (upstream's ``computePodResourceRequest``). Not the non-zero scoring defaults
    (``SCORING_DEFAULTS``)."""
    res = pod.requests.requests
    return (res.milli_cpu, res.memory, res.ephemeral_storage, tuple(sorted(res.scalar.items())))


def volumes_signer(pod: PodInfo) -> SignValue:
    """Every volume's source but configMap and secret ones, without the volume's name, sorted
    (upstream's ``VolumesSigner``: the JSON of each source, as the pod wrote it here, after the
    API server's defaulting there). ``None`` when the pod was parsed without its sources."""
    sources: list[str] = []
    for vol in pod.volumes:
        if vol.source is None:
            return None
        if vol.source != UNSIGNED_SOURCE:
            sources.append(vol.source)
    return tuple(sorted(sources))


def sign_volumes(pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
    """The volume plugins' ``sign_pod``: the volumes fragment, or no signature for a pod
    parsed without its volume sources (a bound pod's compact copy: never scheduled)."""
    value = volumes_signer(pod)
    if value is None:
        return [], Status(Code.UNSCHEDULABLE, "the pod's volume sources were not kept")
    return [SignFragment(VOLUMES_SIGNER, value)], None


def image_names_signer(pod: PodInfo) -> SignValue:
    """The normalised image names of every container, as a sorted set."""
    return tuple(sorted(set(pod.images)))


# What upstream's signers leave out of the fields their plugins read (see ``UnsignedRead``).

def _ports_without_addresses(pod: PodInfo) -> PodInfo:
    return pod.copy_with(host_ports=tuple(HostPort("0.0.0.0", "TCP", hp.port) for hp in pod.host_ports))


HOST_PORT_ADDRESSES = UnsignedRead(
    "host_ports",
    "upstream's HostPortsSigner signs port numbers only: pods asking for 8080/TCP and 8080/UDP, or for "
    "8080 on two host IPs, share a signature though NodePorts can answer them differently",
    _ports_without_addresses,
)


def _requests_without_defaults(pod: PodInfo) -> PodInfo:
    res = pod.requests.requests
    return pod.copy_with(requests=PodRequests(res, res.milli_cpu, res.memory, res.copy()))


SCORING_DEFAULTS = UnsignedRead(
    "requests",
    "upstream signs the requests only: a pod asking for 0 cpu and one asking for none share a "
    "signature though scoring counts 100m cpu (and 200Mi memory) for a container without a request",
    _requests_without_defaults,
)


def _distinct_images(pod: PodInfo) -> PodInfo:
    return pod.copy_with(images=tuple(sorted(set(pod.images))))


REPEATED_IMAGES = UnsignedRead(
    "images",
    "upstream signs the set of image names: two containers with one image share a signature with one "
    "container, though ImageLocality sums each container's image and divides by the container count",
    _distinct_images,
)


UNSIGNED_NAMESPACE = UnsignedRead(
    "namespace",
    "upstream signs no namespace: pods alike but for their namespace share a signature, though existing pods' "
    "affinity terms select pods by namespace and a volume's claim is looked up in the pod's namespace",
    lambda pod: pod.copy_with(namespace="default"),
)
