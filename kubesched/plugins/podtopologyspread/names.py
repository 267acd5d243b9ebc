"""The plugin's name and the reasons its Filter gives.

In a module of their own so that every part of the plugin (Filter, Score, the hints,
the counting helpers) can name them without importing ``plugin.py``, which imports
those parts.
"""

from __future__ import annotations

__all__ = ["ERR_REASON_CONSTRAINTS_NOT_MATCH", "ERR_REASON_NODE_LABEL_NOT_MATCH", "NAME"]

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
