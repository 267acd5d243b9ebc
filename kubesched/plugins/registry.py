"""The in-tree registry: every plugin kubesched ships, under upstream's names."""

from __future__ import annotations

from ..framework.registry import PluginSpec, Registry
from . import (
    defaultbinder,
    imagelocality,
    nodeaffinity,
    nodename,
    nodeports,
    nodeunschedulable,
    prioritysort,
    schedulinggates,
    tainttoleration,
)
from .noderesources import balanced_allocation, fit
from . import podtopologyspread
from . import interpodaffinity

__all__ = ["in_tree_registry", "UPSTREAM_ONLY"]

# Upstream in-tree plugins kubesched does not implement (yet). A config may disable
# them; enabling one is an error, since its decisions could not be upstream's.
UPSTREAM_ONLY = frozenset(
    {
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "DynamicResources",
        "NodeDeclaredFeatures",
        "GangScheduling",
        "TopologyAwareWorkloadScheduling",
        "DefaultPreemption",
    }
)


def in_tree_registry() -> Registry:
    return Registry(
        [
            PluginSpec(schedulinggates.NAME, schedulinggates.new),
            PluginSpec(prioritysort.NAME, prioritysort.new),
            PluginSpec(nodeunschedulable.NAME, nodeunschedulable.new),
            PluginSpec(nodename.NAME, nodename.new),
            PluginSpec(tainttoleration.NAME, tainttoleration.new),
            PluginSpec(nodeaffinity.NAME, nodeaffinity.new, nodeaffinity.parse_args),
            PluginSpec(nodeports.NAME, nodeports.new),
            PluginSpec(fit.NAME, fit.new, fit.parse_args),
            PluginSpec(balanced_allocation.NAME, balanced_allocation.new, balanced_allocation.parse_args),
            PluginSpec(podtopologyspread.NAME, podtopologyspread.new, podtopologyspread.parse_args),
            PluginSpec(interpodaffinity.NAME, interpodaffinity.new, interpodaffinity.parse_args),
            PluginSpec(imagelocality.NAME, imagelocality.new),
            PluginSpec(defaultbinder.NAME, defaultbinder.new),
        ]
    )
