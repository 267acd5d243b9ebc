"""``Handle``: what a plugin may reach beyond its arguments (upstream's ``framework.Handle``).

A plugin's factory receives the handle once; the plugin keeps it. Everything here is
read-only or goes through the scheduler's own paths (waiting pods, activation, the
cluster client), so no plugin can put the cache or the queue in a state the
scheduler did not make.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, Mapping, Protocol, runtime_checkable

from ..objects.pod import PodInfo
from ..objects.podgroup import PodGroup, PodGroupCondition
from .features import Features
from .podgroups import PodGroupManager
from .views import PodObserver, SnapshotView

__all__ = [
    "ClusterClient",
    "EventRecorder",
    "Handle",
    "JSONObject",
    "ObjectHandler",
    "ObjectStore",
    "PodEventHandler",
    "PodGroupStatusWriter",
    "ResourceClaimWriter",
    "WaitingPod",
]

JSONObject = Mapping[str, object]
"""A Kubernetes object as decoded JSON, for kinds the scheduler does not model."""


class EventRecorder(Protocol):
    """Records a Kubernetes Event about a pod (``Normal``/``Warning``, a reason, a message)."""

    def record_event(self, pod: PodInfo, event_type: str, reason: str, message: str) -> None: ...


class ClusterClient(EventRecorder, Protocol):
    """The calls the scheduler makes to the cluster: the API server live, memory in ``simulate``."""

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """Bind ``pod`` to ``node_name`` (``pods/binding``); raises when the cluster refuses."""
        ...

    def update_pod_condition(self, pod: PodInfo, reason: str, message: str, nominated_node_name: str | None) -> None:
        """Set the pod's ``PodScheduled=False`` condition (and ``nominatedNodeName``)."""
        ...


@runtime_checkable
class ResourceClaimWriter(Protocol):
    """The cluster client's side of DynamicResources (upstream's clientset calls in its PreBind,
    Unreserve and PostFilter): ResourceClaims written through the API server in ``run``, into
    the claim store at once in ``simulate`` (which plays the API server and its controllers).

    Claims are resource.k8s.io/v1 ResourceClaim documents as the object store holds them.
    Blocking calls raise when the API server refuses (after upstream's retries on conflict);
    the ``*_in_background`` calls never raise and may finish later.
    """

    def create_resource_claim(self, claim: JSONObject) -> JSONObject:
        """POST a claim (``metadata.generateName`` set; name, uid and status dropped); the claim as created."""
        ...

    def bind_resource_claim(self, claim: JSONObject, allocation: JSONObject | None, consumer: JSONObject, *,
                            set_allocation_timestamp: bool = True) -> JSONObject:
        """upstream's ``bindClaim``: re-read on conflict; fail when the claim is being deleted or, with
        ``allocation``, got allocated meanwhile; add the ``resource.kubernetes.io/delete-protection``
        finalizer (an update), then write ``status.allocation`` (when given; stamped with
        ``allocationTimestamp`` when asked and unset) and append ``consumer`` (``{resource, name,
        uid}``) to ``status.reservedFor``. The claim as stored. Blocking (PreBind)."""
        ...

    def patch_pod_extended_resource_claim_status(self, pod: PodInfo, status: JSONObject) -> None:
        """Set the pod's ``status.extendedResourceClaimStatus`` (``requestMappings``, ``resourceClaimName``)."""
        ...

    def delete_resource_claim(self, claim: JSONObject) -> None:
        """upstream's ``deleteClaim``: the delete-protection finalizer removed, then the claim deleted.
        Blocking (PostFilter, from the scheduling cycle)."""
        ...

    def unreserve_resource_claim(self, claim: JSONObject, pod_uid: str) -> None:
        """Remove the pod from the claim's ``status.reservedFor`` (background; never raises)."""
        ...

    def deallocate_resource_claim(self, claim: JSONObject) -> None:
        """Clear the claim's ``reservedFor``, ``allocation`` and ``devices`` with a status update of
        the claim as given (its ``resourceVersion``: a claim changed meanwhile is a conflict, raised).
        Blocking (PostFilter, from the scheduling cycle, as upstream's waits for its write)."""
        ...

    def delete_resource_claim_in_background(self, claim: JSONObject) -> None:
        """``delete_resource_claim`` without waiting (Unreserve of a created extended-resource claim)."""
        ...


@runtime_checkable
class PodGroupStatusWriter(Protocol):
    """The cluster client's side of workload-aware scheduling: the ``PodGroupScheduled``
    condition written after a pod-group cycle (upstream's ``util.PatchPodGroupStatus``).

    The scheduler decides the new condition list (``SetStatusCondition`` semantics, and never
    a True condition regressed to False); the writer sends the difference from ``group``'s
    stored status as a strategic-merge patch of ``pods/status``'s sibling, the PodGroup's
    ``status`` subresource, in ``run``, and stores it at once in ``simulate``. Never raises:
    a refused write is logged, as upstream's is.
    """

    def patch_pod_group_conditions(self, group: PodGroup, conditions: tuple[PodGroupCondition, ...]) -> None: ...


class WaitingPod(Protocol):
    """A pod held at Permit (upstream's ``WaitingPod``): assumed on ``node_name``, bound once
    every plugin that answered Wait allows it, failed as soon as one rejects it."""

    @property
    def pod(self) -> PodInfo: ...

    @property
    def node_name(self) -> str: ...

    @property
    def pending_plugins(self) -> list[str]:
        """Plugins that have not allowed the pod yet."""
        ...

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...


class PodEventHandler(Protocol):
    """Told of every pod the scheduler's informer sees, pending or bound, any scheduler's."""

    def on_pod_add(self, pod: PodInfo) -> None: ...

    def on_pod_update(self, old: PodInfo | None, new: PodInfo) -> None: ...

    def on_pod_delete(self, pod: PodInfo) -> None: ...


class ObjectHandler(Protocol):
    """Told of changes to objects of one kind (see ``Handle.object_store``)."""

    def on_object_add(self, obj: JSONObject) -> None: ...

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None: ...

    def on_object_delete(self, obj: JSONObject) -> None: ...


class ObjectStore(Protocol):
    """Objects of one kind the scheduler does not model (a PodGroup, say): read from the
    snapshot in ``simulate``, through an informer in ``run``."""

    @property
    def api_version(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def resource(self) -> str:
        """The cluster-event resource of changes to these objects: ``<plural>.<version>.<group>``."""
        ...

    def get(self, namespace: str, name: str) -> JSONObject | None: ...

    def list(self, namespace: str | None = None) -> list[JSONObject]: ...

    def add_handler(self, handler: ObjectHandler) -> None: ...


class Handle(Protocol):
    """What the framework hands each plugin's factory."""

    @property
    def profile_name(self) -> str:
        """The scheduler name of the profile the plugin is built for."""
        ...

    @property
    def features(self) -> Features:
        """The feature gates plugins read (upstream's ``feature.Features``), from ``--feature-gates``."""
        ...

    def snapshot(self) -> SnapshotView:
        """The cluster as the current cycle sees it."""
        ...

    def now(self) -> float:
        """The scheduler's clock, in seconds (virtual in ``simulate``)."""
        ...

    # -- pods held at Permit ----------------------------------------------------
    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]: ...

    def reject_waiting_pod(self, uid: str, plugin: str, message: str) -> bool:
        """Reject a waiting pod; False when no pod of that uid is waiting."""
        ...

    # -- the queue ----------------------------------------------------------------
    def activate(self, pods: Iterable[PodInfo]) -> None:
        """Move these pending pods to the active queue (upstream's ``PodActivator``)."""
        ...

    # -- the cluster --------------------------------------------------------------
    @property
    def event_recorder(self) -> EventRecorder: ...

    @property
    def client(self) -> ClusterClient | None:
        """The cluster's client, where there is one."""
        ...

    # -- watching -----------------------------------------------------------------
    def add_pod_observer(self, observer: PodObserver) -> None:
        """Keep an incremental index over placed pods; see ``PodObserver``."""
        ...

    def add_pod_handler(self, handler: PodEventHandler) -> None:
        """Be told of every pod add, update and delete the scheduler sees."""
        ...

    def object_store(self, api_version: str, kind: str, plural: str) -> ObjectStore:
        """The store of objects of ``kind`` (one per kind, shared by plugins and profiles).

        Ask for it in your factory: a snapshot's objects of that kind are loaded into
        it, and the live mode watches them. Changes raise the cluster event
        ``ClusterEvent(store.resource, ADD | UPDATE | DELETE)`` for queueing hints.
        """
        ...

    # -- pod groups (GenericWorkload) -------------------------------------------------
    @property
    def pod_group_manager(self) -> PodGroupManager:
        """The PodGroups and their pods' state (upstream's ``PodGroupManager()`` and the
        PodGroup informer's lister). Inside a pod-group cycle the state includes the pods
        the cycle has assumed so far. With GenericWorkload off it knows no group."""
        ...


