"""Pod signatures for OpportunisticBatching (upstream's ``SignPlugin``, KEP-5598).

Two pods with equal signatures get the same Filter and Score answers on every node
of the same cluster state. After a scored placement the scheduler keeps the other
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
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol, TypeAlias, Union, runtime_checkable

from ..objects.pod import PodInfo
from ..objects.selectors import NodeSelector, NodeSelectorTerm, PreferredSchedulingTerm, Requirement
from .status import Status

__all__ = [
    "SignValue",
    "SignFragment",
    "PodSignature",
    "SignPlugin",
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
    "image_names_signer",
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


def signature_digest(signature: PodSignature | None) -> str:
    """Eight hex digits naming a signature in explain output; ``""`` for none."""
    if signature is None:
        return ""
    return hashlib.sha256(repr(signature).encode()).hexdigest()[:8]


# Common signers, shared by the plugins that read the same field (as upstream's).


def host_ports_signer(pod: PodInfo) -> SignValue:
    """The distinct host ports of every container (IP, protocol, port), sorted.

    Upstream signs the port numbers only, so pods asking for 8080/TCP and 8080/UDP share a
    signature there though NodePorts answers them differently; kubesched signs what
    NodePorts reads.
    """
    return tuple(sorted({(hp.ip, hp.protocol, hp.port) for hp in pod.host_ports if hp.port}))


def tolerations_signer(pod: PodInfo) -> SignValue:
    """Tolerations sorted by key then value (the order of others with the same key and value kept)."""
    ordered = sorted(pod.tolerations, key=lambda t: (t.key, t.value))
    return tuple((t.key, t.operator, t.value, t.effect) for t in ordered)


def _requirements(reqs: tuple[Requirement, ...]) -> SignValue:
    return tuple(sorted(repr((r.key, r.operator, tuple(sorted(r.values)), r.number)) for r in reqs))


def _term(term: NodeSelectorTerm) -> SignValue:
    return (_requirements(term.expressions), _requirements(term.fields))


def node_affinity_signer(pod: PodInfo) -> SignValue:
    """Required terms and weighted preferred terms, each list sorted (order does not matter)."""
    required: NodeSelector | None = pod.required_node_affinity
    preferred: tuple[PreferredSchedulingTerm, ...] = pod.preferred_node_affinity
    if required is None and not preferred:
        return None
    req = tuple(sorted((_term(t) for t in required.terms), key=repr)) if required is not None else ()
    pref = tuple(sorted(((p.weight, _term(p.term)) for p in preferred), key=repr))
    return (req, pref)


def node_selector_signer(pod: PodInfo) -> SignValue:
    return tuple(sorted(pod.node_selector.items()))


def labels_signer(pod: PodInfo) -> SignValue:
    return tuple(sorted(pod.labels.items()))


def resources_signer(pod: PodInfo) -> SignValue:
    """The pod's requests (containers, init containers and overhead, as Fit computes them),
    and the non-zero cpu and memory scoring counts for it.

    Upstream signs the requests only, so a pod asking explicitly for 0 cpu and one not
    asking share a signature there although scoring counts 100m for the second; kubesched
    signs what its scores read (``kubesched.testing`` checks that a signature covers it).
    """
    req = pod.requests
    res = req.requests
    return (res.milli_cpu, res.memory, res.ephemeral_storage, res.allowed_pod_number,
            tuple(sorted(res.scalar.items())), req.non_zero_milli_cpu, req.non_zero_memory,
            req.scoring.milli_cpu, req.scoring.memory)


def volumes_signer(pod: PodInfo) -> SignValue:
    """The volumes a plugin can tell apart (claims, ephemeral claims, in-tree disks), sorted.

    Upstream signs every source but configMap and secret, without the volume's name;
    kubesched keeps only the sources some plugin reads (``objects/volumes.py``), so a
    volume of any other kind signs as nothing (no plugin answers differently for it).
    A generic ephemeral volume signs as its volume name: its claim is named after the
    pod, and upstream signs the claim template, which pods of one template share.
    """
    out: list[SignValue] = []
    for vol in pod.volumes:
        disk = vol.disk
        if vol.ephemeral:
            out.append(("ephemeral", vol.name))
        elif vol.claim:
            out.append(("persistentVolumeClaim", vol.claim))
        elif disk is not None:
            out.append((disk.kind, disk.ident, disk.read_only, tuple(sorted(disk.monitors))))
    return tuple(sorted(out, key=repr))


def image_names_signer(pod: PodInfo) -> SignValue:
    """The normalised image names of every container, as a sorted set."""
    return tuple(sorted(set(pod.images)))
