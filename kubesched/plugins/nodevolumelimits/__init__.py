"""NodeVolumeLimits: per CSI driver, the attach limit a node's CSINode publishes."""

from .plugin import ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, NAME, CSILimits, new

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NAME", "CSILimits", "new"]
