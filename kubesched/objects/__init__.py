"""Kubernetes objects as the scheduler reads them, parsed once. Plugins treat them as read-only."""

from .node import Node
from .nodeinfo import HostPortInfo, NodeInfo
from .pod import HostPort, OwnerRef, PodInfo
from .resources import PodRequests, Resource
from .selectors import LabelSelector, NodeSelector, NodeSelectorTerm, Requirement
from .taints import Taint, Toleration

__all__ = [
    "HostPort",
    "HostPortInfo",
    "LabelSelector",
    "Node",
    "NodeInfo",
    "NodeSelector",
    "NodeSelectorTerm",
    "OwnerRef",
    "PodInfo",
    "PodRequests",
    "Requirement",
    "Resource",
    "Taint",
    "Toleration",
]
