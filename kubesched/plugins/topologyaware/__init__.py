"""TopologyPlacementGenerator (upstream's ``topologyaware``): one placement per topology domain."""

from .plugin import NAME, TopologyPlacement, new

__all__ = ["NAME", "TopologyPlacement", "new"]
