"""Capacity planning and configuration comparison on top of the simulator.

``run_capacity(CapacitySpec(...))`` counts how many more replicas of pod specs fit in a
snapshot (cluster-capacity's question); ``run_compare(CompareSpec(...))`` schedules a
snapshot's pending pods under several configurations and compares the outcomes. Specs
are frozen and hold paths, results are plain data: both pickle, so a sweep can run
them in other processes.
"""

from __future__ import annotations

from .capacity import (
    FAILED,
    LIMIT_REACHED,
    SCHEDULING_GATED,
    UNSCHEDULABLE,
    CapacityResult,
    CapacitySpec,
    PodRequirements,
    SpecCapacity,
    Termination,
    run_capacity,
)
from .compare import ChangeCounts, CompareResult, CompareSpec, ConfigRun, PodChange, ReasonCount, run_compare
from .documents import to_document
from .inputs import DEFAULT_CONFIG, PlanningError
from .replicas import NodeReason
from .usage import Fragmentation, ResourceUsage

__all__ = [
    "CapacitySpec", "CapacityResult", "SpecCapacity", "PodRequirements", "Termination", "NodeReason", "run_capacity",
    "UNSCHEDULABLE", "LIMIT_REACHED", "SCHEDULING_GATED", "FAILED",
    "CompareSpec", "CompareResult", "ConfigRun", "ChangeCounts", "PodChange", "ReasonCount", "run_compare",
    "ResourceUsage", "Fragmentation", "PlanningError", "DEFAULT_CONFIG", "to_document",
]
