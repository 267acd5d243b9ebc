"""DynamicResources (upstream's ``dynamicresources``): Dynamic Resource Allocation in the scheduler.

The plugin (the class in ``plugin.py``, which loads its machinery, ``core.py``, on first
need; one module per extension point: ``prefilter.py``, ``filtering.py``, ``filter_nodes.py``,
``scoring.py``, ``reserve.py``, ``post_filter.py``, ``binding.py``, ``hints.py``), the DRA manager that keeps the claims, classes and slices as
records (``manager.py``), DRA-backed extended resources (``extended.py``,
``extended_claim.py``), the names of claims made for pods (``claims.py``) and simulate's
resourceclaim controller (``controller.py``). The allocator is upstream's
structured allocator (``kubesched.structured``) with its CEL environment (``kubesched.cel``).
"""

from .args import DynamicResourcesArgs
from .names import NAME, OBJECT_KINDS
from .plugin import DynamicResources, new

__all__ = ["NAME", "OBJECT_KINDS", "DynamicResources", "DynamicResourcesArgs", "new"]
