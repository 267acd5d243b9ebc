"""VolumeZone: the zone and region labels of a pod's bound PersistentVolumes against the node's."""

from .plugin import ERR_REASON_CONFLICT, NAME, VolumeZone, new

__all__ = ["ERR_REASON_CONFLICT", "NAME", "VolumeZone", "new"]
