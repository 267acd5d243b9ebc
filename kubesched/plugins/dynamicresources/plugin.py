"""DynamicResources (upstream's ``dynamicresources``): pods get the devices their ResourceClaims ask for.

What each extension point does is described in ``core.py``, the plugin's machinery (the DRA
manager, the structured allocator, CEL: some fifty modules). The scheduler holds this class,
which answers itself for a pod the plugin has nothing to do for, and loads the machinery by
name on first need (``importlib``, as ``kubesched.cel.engine`` loads the CEL engine):

* the first change in one of the DRA stores (a DeviceClass, ResourceClaim or ResourceSlice
  arriving): the DRA manager is made from what the stores hold then, and every later change
  is routed to it;
* the first pod with claims (its PreEnqueue or PreFilter), or anyone asking for the manager
  (NodeResourcesFit's DRA scoring through ``registered_dra_manager``).

Until then no DRA object has ever been seen, so no extended resource is DRA-backed and a
pod without claims gets what the machinery would answer: PreFilter skips it with an empty
state, and every later extension point reads that state and does nothing. Once loaded, every
call goes to the machinery. A cluster without DRA objects never loads it: about forty
milliseconds of every ``kubesched run``'s start-up.
"""

from __future__ import annotations

import importlib
import weakref
from typing import TYPE_CHECKING

from ...framework import (ActionType, ClusterEvent, ClusterEventWithHint, Code, CycleState, EventResource, Handle,
                          NodeToStatusReader, NodeVerdicts, PostFilterResult, PreFilterResult, QueueingHint, RowArray,
                          SnapshotView, Status)
from ...framework.features import Features
from ...framework.handle import JSONObject, ObjectStore
from ...framework.signing import SignFragment
from ...framework.views import BoolArray, IntArray
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .args import DynamicResourcesArgs
from .extended_index import extended_resource_index
from .names import (API_VERSION, DEFAULT_BINDING_TIMEOUT_SECONDS, DEVICE_CLASS, ERR_NOTHING_TO_DEALLOCATE, NAME, PLURALS,
                    RESOURCE_CLAIM, RESOURCE_SLICE)
from .skipped import PRE_BIND_SKIP, zero_scores
from .state import NO_CLAIMS, STATE, DraState
from .statuses import SKIP

if TYPE_CHECKING:
    from ...objects.dra import ResourceClaim
    from ...cel import CelCache
    from ...structured import Features as AllocatorFeatures
    from .core import DynamicResourcesCore
    from .manager import DraManager

__all__ = ["DynamicResources", "allocator_features", "front_over", "new"]

CORE_MODULE = f"{__package__}.core"


def _core_module() -> object:
    return importlib.import_module(CORE_MODULE)


def allocator_features(features: Features) -> AllocatorFeatures:
    """upstream's ``AllocatorFeatures``: the structured allocator's switches from the gates."""
    made: AllocatorFeatures = getattr(_core_module(), "allocator_features")(features)
    return made


class _Changes:
    """One DRA store's changes, routed to the DRA manager; the first one makes it (from what
    the stores hold then, this change included). A store that already holds objects when the
    plugin is made tells of them at once (``add_handler``): the first makes the manager,
    which takes every store as it is, so none of them is routed again."""

    def __init__(self, front: "DynamicResources", kind: str) -> None:
        self._front = front
        self._kind = kind

    def on_object_add(self, obj: JSONObject) -> None:
        core = self._front.loaded
        if core is None:
            self._front.core()
        elif not self._front.registering:
            core.manager.handler(self._kind).on_object_add(obj)

    def on_object_update(self, old: JSONObject, new: JSONObject) -> None:
        core = self._front.loaded
        if core is None:
            self._front.core()
        else:
            core.manager.handler(self._kind).on_object_update(old, new)

    def on_object_delete(self, obj: JSONObject) -> None:
        core = self._front.loaded
        if core is None:
            self._front.core()
        else:
            core.manager.handler(self._kind).on_object_delete(obj)


_FRONTS: "weakref.WeakKeyDictionary[ObjectStore, DynamicResources]" = weakref.WeakKeyDictionary()


def front_over(claim_store: ObjectStore) -> DynamicResources | None:
    """The DynamicResources made last over this ResourceClaim store (``registered_dra_manager``)."""
    return _FRONTS.get(claim_store)


class DynamicResources:
    """The plugin as the scheduler holds it (see the module's docstring)."""

    name = NAME

    def __init__(self, handle: Handle, features: Features) -> None:
        self.handle = handle
        self.features = features
        self.enabled = features.enable_dynamic_resource_allocation
        self.loaded: DynamicResourcesCore | None = None
        self._filter_timeout = 10.0  # DynamicResourcesArgs.filterTimeout (upstream's default)
        self._binding_timeout = DEFAULT_BINDING_TIMEOUT_SECONDS  # DynamicResourcesArgs.bindingTimeout
        # The stores are asked for now: in run they are what the informers watch.
        self.claim_store = handle.object_store(API_VERSION, RESOURCE_CLAIM, PLURALS[RESOURCE_CLAIM])
        self.class_store = handle.object_store(API_VERSION, DEVICE_CLASS, PLURALS[DEVICE_CLASS])
        self.slice_store = handle.object_store(API_VERSION, RESOURCE_SLICE, PLURALS[RESOURCE_SLICE])
        self.registering = True
        for kind, store in ((RESOURCE_CLAIM, self.claim_store), (DEVICE_CLASS, self.class_store),
                            (RESOURCE_SLICE, self.slice_store)):
            store.add_handler(_Changes(self, kind))
        self.registering = False
        _FRONTS[self.claim_store] = self
        extended_resource_index(handle)  # shared with NodeResourcesFit: registered as the manager would

    # -- the machinery ----------------------------------------------------------------------------------
    def core(self) -> DynamicResourcesCore:
        """The machinery, loaded and made on first call (its manager takes what the stores hold)."""
        core = self.loaded
        if core is None:
            made: DynamicResourcesCore = getattr(_core_module(), "DynamicResourcesCore")(self.handle, self.features)
            made.filter_timeout = self._filter_timeout
            made.binding_timeout = self._binding_timeout
            core = self.loaded = made
        return core

    @property
    def manager(self) -> DraManager:
        return self.core().manager

    @property
    def cel_cache(self) -> CelCache:
        return self.core().cel_cache

    @property
    def allocator_features(self) -> AllocatorFeatures:
        return self.core().allocator_features

    @property
    def filter_timeout(self) -> float:
        return self._filter_timeout

    @filter_timeout.setter
    def filter_timeout(self, seconds: float) -> None:
        self._filter_timeout = seconds
        if self.loaded is not None:
            self.loaded.filter_timeout = seconds

    @property
    def binding_timeout(self) -> float:
        return self._binding_timeout

    @binding_timeout.setter
    def binding_timeout(self, seconds: float) -> None:
        self._binding_timeout = seconds
        if self.loaded is not None:
            self.loaded.binding_timeout = seconds

    def _idle(self, state: CycleState) -> bool:
        """The machinery is not loaded and PreFilter left this pod an empty state: every later
        extension point answers as for a pod without claims (the machinery reads the same)."""
        if self.loaded is not None:
            return False
        s = state.get(STATE)
        return s is not None and s.empty()

    # -- signing --------------------------------------------------------------------------------------
    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Pods with claims are never batched (upstream cannot tell yet which claims are node-local)."""
        if pod.resource_claims:
            return [], Status(Code.UNSCHEDULABLE, "pods with dra resource claims are not signable")
        return [], None

    # -- events and hints ----------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        add_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL
                                              | ActionType.UPDATE_NODE_ALLOCATABLE)),
            ClusterEventWithHint(ClusterEvent(self.claim_store.resource, add_update), self._hint_claim_changed),
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                                 self._hint_pod_changed),
            ClusterEventWithHint(ClusterEvent(self.class_store.resource, add_update)),
            ClusterEventWithHint(ClusterEvent(self.slice_store.resource, add_update)),
        ]

    def _hint_claim_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        return self.core()._hint_claim_changed(pod, old, new)

    def _hint_pod_changed(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        return self.core()._hint_pod_changed(pod, old, new)

    def pod_claims(self, pod: PodInfo) -> list[ResourceClaim]:
        return self.core().pod_claims(pod)

    # -- extension points ------------------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not self.enabled or not pod.resource_claims:
            return None
        return self.core().pre_enqueue(pod)

    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        core = self.loaded
        if core is None and not pod.resource_claims:
            if not pod.requests.requests.scalar or not self.features.enable_dra_extended_resource:
                if self.enabled:  # the usual pod: nothing to do at any later extension point either
                    state.write(STATE, NO_CLAIMS)
                return None, SKIP
            if self.enabled:  # extended resources only, and no DeviceClass ever came to back one
                state.write(STATE, DraState())
            return None, SKIP
        return (core or self.core()).pre_filter(state, pod, snapshot)

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        if self._idle(state):
            return NodeVerdicts.all_pass(snapshot.table.size)
        return self.core().filter_nodes(state, pod, snapshot, candidates)

    def filter(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> Status | None:
        if self._idle(state):
            return None
        return self.core().filter(state, pod, node_info)

    def post_filter(self, state: CycleState, pod: PodInfo,
                    filtered: NodeToStatusReader) -> tuple[PostFilterResult | None, Status | None]:
        if self._idle(state):
            return None, Status(Code.UNSCHEDULABLE, ERR_NOTHING_TO_DEALLOCATE)
        return self.core().post_filter(state, pod, filtered)

    def score(self, state: CycleState, pod: PodInfo, node_info: NodeInfo) -> int:
        if self._idle(state):
            return 0
        return self.core().score(state, pod, node_info)

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        if self._idle(state):
            return zero_scores(len(rows))
        return self.core().score_nodes(state, pod, snapshot, rows)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        if self._idle(state):
            return scores
        return self.core().normalize_score(state, pod, scores)

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if self._idle(state):
            return None
        return self.core().reserve(state, pod, node_name)

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        if self._idle(state):
            return
        self.core().unreserve(state, pod, node_name)

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if self._idle(state):
            return PRE_BIND_SKIP
        return self.core().pre_bind_pre_flight(state, pod, node_name)

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        if self._idle(state):
            return None
        return self.core().pre_bind(state, pod, node_name)

    def explain_binding(self, state: CycleState, pod: PodInfo, node_name: str) -> dict[str, object] | None:
        if self._idle(state):
            return None
        return self.core().explain_binding(state, pod, node_name)


def new(args: DynamicResourcesArgs | None, handle: Handle) -> DynamicResources:
    plugin = DynamicResources(handle, handle.features)
    if args is not None:
        args = args.defaulted(handle.features)  # as decoded from a config already; args made in code too
        args.check_gates(handle.features)
        plugin.binding_timeout = args.binding_timeout_seconds()
        plugin.filter_timeout = args.filter_timeout_seconds()
    return plugin
