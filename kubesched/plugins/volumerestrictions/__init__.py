"""VolumeRestrictions: in-tree disks that may not be shared on a node, and ReadWriteOncePod claims."""

from .plugin import ERR_REASON_DISK_CONFLICT, ERR_REASON_RWOP_CONFLICT, NAME, VolumeRestrictions, new

__all__ = ["ERR_REASON_DISK_CONFLICT", "ERR_REASON_RWOP_CONFLICT", "NAME", "VolumeRestrictions", "new"]
