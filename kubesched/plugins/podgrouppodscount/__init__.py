"""PodGroupPodsCount (upstream's ``podgrouppodscount``): prefer the placement that fits more of the group."""

from .plugin import NAME, NO_PODS_ASSIGNED, PodGroupPodsCount, new

__all__ = ["NAME", "NO_PODS_ASSIGNED", "PodGroupPodsCount", "new"]
