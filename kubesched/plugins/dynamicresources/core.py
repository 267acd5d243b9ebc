"""DynamicResources' machinery: the plugin with every extension point, over the DRA manager,
the structured allocator and CEL.

* PreEnqueue: every claim the pod names must exist (a template's claim must have been
  created by the resourceclaim controller), not be going away, and be the pod's own when
  made from a template.
* PreFilter: pods without claims and without DRA-backed extended resources are skipped.
  A claim allocated and reserved for others stays usable (claims are shareable); an
  unallocated one must not be in flight for another pod, and each request's DeviceClass
  must exist (``request <r>: device class <c> does not exist``). With claims to allocate,
  an allocator is built once for the cycle over the devices in use (in-flight ones too).
* Filter (per node): an allocated claim's ``nodeSelector`` must match (``resourceclaim not
  available on the node``); the claims still to allocate are allocated together (``cannot
  allocate all claims``), the result kept for Score and Reserve.
* Score (weight 2 in the default profile): for ``firstAvailable`` requests, ``8 - i`` per
  chosen subrequest ``i``; normalized to 0..100 by the highest.
* Reserve marks the node's allocations in flight; Unreserve gives them back and takes the
  pod out of ``reservedFor``. PreBind writes allocation and reservation through the
  cluster client (``binding.py``). PostFilter deallocates an unavailable claim nobody else
  uses, or says ``no new claims to deallocate``.

The scheduler holds ``plugin.DynamicResources``, which answers for pods without claims
itself and loads this module by name on first need (the first DRA object, or the first pod
with claims). PreEnqueue/PreFilter are in ``prefilter.py``, Filter per node in
``filtering.py`` and for every row in ``filter_nodes.py``, Score in ``scoring.py``,
Reserve/Unreserve in ``reserve.py``, PostFilter in ``post_filter.py``, PreBind in
``binding.py``, the queueing hints in ``hints.py``, shared statuses in ``statuses.py``.
"""

from __future__ import annotations

from ...framework import Handle
from ...framework.features import Features
from ...cel import CelCache
from ...structured import Features as AllocatorFeatures
from .binding import BindingMixin
from .filter_nodes import FilterNodesMixin
from .hints import HintsMixin
from .manager import DraManager
from .names import NAME
from .post_filter import PostFilterMixin
from .prefilter import PreFilterMixin
from .reserve import ReserveMixin
from .scoring import ScoreMixin

__all__ = ["DynamicResourcesCore", "allocator_features"]


def allocator_features(features: Features) -> AllocatorFeatures:
    """upstream's ``AllocatorFeatures``: the structured allocator's switches from the gates."""
    return AllocatorFeatures(
        admin_access=features.enable_dra_admin_access,
        prioritized_list=features.enable_dra_prioritized_list,
        partitionable_devices=features.enable_dra_partitionable_devices,
        device_taints=features.enable_dra_device_taints,
        device_binding_and_status=(features.enable_dra_device_binding_conditions
                                   and features.enable_dra_resource_claim_device_status),
        consumable_capacity=features.enable_dra_consumable_capacity,
        list_type_attributes=features.enable_dra_list_type_attributes,
    )


class DynamicResourcesCore(PreFilterMixin, FilterNodesMixin, ScoreMixin, ReserveMixin, PostFilterMixin, HintsMixin,
                           BindingMixin):
    """The plugin's every extension point: one mixin per extension point (``HintsMixin.pod_claims``
    is ``PreFilterMixin``'s, which comes first). Its DRA manager is fed by the front
    (``plugin.DynamicResources``), which routes the stores' changes to it."""

    name = NAME

    def __init__(self, handle: Handle, features: Features) -> None:
        self.handle = handle
        self.features = features
        self.enabled = features.enable_dynamic_resource_allocation
        self.allocator_features = allocator_features(features)
        self.cel_cache = CelCache(consumable_capacity=features.enable_dra_consumable_capacity)
        self.manager = DraManager(handle, self.allocator_features, self.cel_cache, attach=False)
        self.filter_timeout = 10.0  # DynamicResourcesArgs.filterTimeout (upstream's default)
