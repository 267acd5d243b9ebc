"""upstream's ``SharedDRAManager`` as other plugins reach it (NodeResourcesFit's scoring of
DRA-backed extended resources): the DRA manager over a handle's ResourceClaim store.

Above both the plugin (``plugin.py``, which knows the front made over a store) and the
manager (``manager.py``, which knows the managers made), so that neither imports the other.
"""

from __future__ import annotations

from ...framework import Handle
from .manager import DraManager, manager_over
from .names import API_VERSION, PLURALS, RESOURCE_CLAIM
from .plugin import front_over

__all__ = ["registered_dra_manager"]


def registered_dra_manager(handle: Handle) -> DraManager | None:
    """The DRA manager DynamicResources made over this handle's ResourceClaim store, made now if
    the plugin had not needed it yet; else one made by another plugin (``DraManager``
    registers itself); None when nobody made one."""
    store = handle.object_store(API_VERSION, RESOURCE_CLAIM, PLURALS[RESOURCE_CLAIM])
    front = front_over(store)
    return front.manager if front is not None else manager_over(store)
