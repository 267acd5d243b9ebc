"""VolumeBinding: PersistentVolumeClaims bound, matched to PVs or provisioned for the chosen node."""

from .args import VolumeBindingArgs
from .binder import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
)
from .controller import StorageWriter
from .index import STORAGE_OBJECT_KINDS, StorageIndex, storage_index
from .plugin import ERR_UNBOUND_IMMEDIATE, NAME, VolumeBinding, new

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE",
    "NAME",
    "STORAGE_OBJECT_KINDS",
    "StorageIndex",
    "StorageWriter",
    "VolumeBinding",
    "VolumeBindingArgs",
    "new",
    "storage_index",
]
