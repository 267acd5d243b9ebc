"""DynamicResources (upstream's ``dynamicresources``): Dynamic Resource Allocation in the scheduler.

Upstream's ``dynamicresources.go`` is one plugin; here, one class a reader finds every extension
point of in one place, ``plugin.DynamicResources``, which answers for pods without claims itself
and loads its machinery on first need (``core.py``: the same extension points over the DRA
manager, the allocator and CEL, one mixin per extension point, each in the module named after
it: ``prefilter.py`` (PreEnqueue, PreFilter), ``filtering.py`` (Filter, node by node),
``filter_nodes.py`` (Filter over the node table), ``scoring.py``, ``reserve.py`` (Reserve,
Unreserve), ``post_filter.py``, ``binding.py`` (PreBind; its binding conditions in
``binding_conditions.py``) and ``hints.py``; nothing imports back up this list). Beside them:
the cycle's state (``state.py``, ``verdicts.py``, ``statuses.py``, ``skipped.py``), the DRA
manager that keeps claims, classes and slices as records (``manager.py``) and how other plugins
reach it (``shared_manager.py``), DRA-backed extended resources (``extended.py``,
``extended_claim.py``, ``extended_index.py``), the names of claims made for pods
(``claims.py``), the plugin's args (``args.py``) and names (``names.py``).

The allocator is upstream's structured allocator (``kubesched.structured``) with Kubernetes'
CEL (``kubesched.cel``); simulate's resourceclaim controller is ``kubesched.cluster.resourceclaim_controller``.
"""

from .args import DynamicResourcesArgs
from .names import NAME, OBJECT_KINDS
from .plugin import DynamicResources, new

__all__ = ["NAME", "OBJECT_KINDS", "DynamicResources", "DynamicResourcesArgs", "new"]
