"""The in-tree registry: every plugin kubesched ships, under upstream's names."""

from __future__ import annotations

from ..framework.features import DEFAULT_FEATURES, Features
from ..framework.registry import DefaultPlugin, PluginSpec, Registry
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
from .noderesources import balanced_allocation, fit, fit_placement
from . import nodevolumelimits, volumebinding, volumerestrictions, volumezone
from . import podtopologyspread
from .podtopologyspread.workloads import WORKLOAD_RESOURCES
from . import interpodaffinity
from . import defaultpreemption
from . import nodedeclaredfeatures
from . import dynamicresources
from . import gangscheduling, podgrouppodscount, topologyaware
from ..framework.preemption import PDB_API_VERSION, PDB_KIND

__all__ = ["in_tree_registry", "default_plugins", "UPSTREAM_ONLY", "DEFAULT_PLUGINS"]

# Upstream in-tree plugins kubesched does not implement (yet). A config may disable
# them; enabling one is an error, since its decisions could not be upstream's.
# (v1.36's GangScheduling, TopologyPlacementGenerator and PodGroupPodsCount are implemented.)
UPSTREAM_ONLY: frozenset[str] = frozenset()


# Upstream's default profile before its feature gates are applied (``getDefaultPlugins``):
# multiPoint plugins and score weights.
_BASE_PLUGINS: tuple[DefaultPlugin, ...] = (
    DefaultPlugin("SchedulingGates"),
    DefaultPlugin("PrioritySort"),
    DefaultPlugin("NodeUnschedulable"),
    DefaultPlugin("NodeName"),
    DefaultPlugin("TaintToleration", 3),
    DefaultPlugin("NodeAffinity", 2),
    DefaultPlugin("NodePorts"),
    DefaultPlugin("NodeResourcesFit", 1),
    DefaultPlugin("VolumeRestrictions"),
    DefaultPlugin("NodeVolumeLimits"),
    DefaultPlugin("VolumeBinding", 1),
    DefaultPlugin("VolumeZone"),
    DefaultPlugin("PodTopologySpread", 2),
    DefaultPlugin("InterPodAffinity", 2),
    DefaultPlugin("DefaultPreemption"),
    DefaultPlugin("NodeResourcesBalancedAllocation", 1),
    DefaultPlugin("ImageLocality", 1),
    DefaultPlugin("DefaultBinder"),
)


def default_plugins(features: Features = DEFAULT_FEATURES) -> tuple[DefaultPlugin, ...]:
    """The default profile for these gates (upstream's ``applyFeatureGates``): NodeDeclaredFeatures
    appended; DynamicResources (weight 2) just before DefaultPreemption, so that its PostFilter
    deallocates an idle claim before any pod is evicted; then GangScheduling (GangScheduling
    gate), then TopologyPlacementGenerator and PodGroupPodsCount (weight 1) with
    TopologyAwareWorkloadScheduling, appended in that order."""
    plugins = list(_BASE_PLUGINS)
    if features.enable_node_declared_features:
        plugins.append(DefaultPlugin(nodedeclaredfeatures.NAME))
    if features.enable_dynamic_resource_allocation:
        at = next(i for i, p in enumerate(plugins) if p.name == "DefaultPreemption")
        plugins.insert(at, DefaultPlugin(dynamicresources.NAME, 2))
    if features.enable_gang_scheduling:
        plugins.append(DefaultPlugin(gangscheduling.NAME))
    if features.enable_topology_aware_workload_scheduling:
        plugins.append(DefaultPlugin(topologyaware.NAME))
        plugins.append(DefaultPlugin(podgrouppodscount.NAME, 1))
    return tuple(plugins)


# Upstream's default profile at v1.36's default gates.
DEFAULT_PLUGINS: tuple[DefaultPlugin, ...] = default_plugins()


def in_tree_registry(features: Features = DEFAULT_FEATURES) -> Registry:
    """Every in-tree plugin, upstream's default plugin list for these feature gates, and the
    upstream plugins not built yet."""
    registry = Registry((), default_plugins(features), UPSTREAM_ONLY, features)
    # One register() per spec: each spec keeps its own args type, decoded by decode_args.
    registry.register(PluginSpec(schedulinggates.NAME, schedulinggates.new))
    registry.register(PluginSpec(prioritysort.NAME, prioritysort.new))
    registry.register(PluginSpec(nodeunschedulable.NAME, nodeunschedulable.new))
    registry.register(PluginSpec(nodename.NAME, nodename.new))
    registry.register(PluginSpec(tainttoleration.NAME, tainttoleration.new))
    registry.register(PluginSpec(nodeaffinity.NAME, nodeaffinity.new, args_type=nodeaffinity.NodeAffinityArgs))
    registry.register(PluginSpec(nodeports.NAME, nodeports.new))
    registry.register(PluginSpec(fit.NAME, fit_placement.new, args_type=fit.FitArgs))
    registry.register(PluginSpec(balanced_allocation.NAME, balanced_allocation.new, args_type=balanced_allocation.BalancedAllocationArgs))
    registry.register(PluginSpec(podtopologyspread.NAME, podtopologyspread.new, args_type=podtopologyspread.PodTopologySpreadArgs,
                                 object_kinds=tuple((v, k) for v, k, _ in WORKLOAD_RESOURCES)))
    registry.register(PluginSpec(interpodaffinity.NAME, interpodaffinity.new, args_type=interpodaffinity.InterPodAffinityArgs))
    storage = volumebinding.STORAGE_OBJECT_KINDS
    registry.register(PluginSpec(volumerestrictions.NAME, volumerestrictions.new, object_kinds=storage))
    registry.register(PluginSpec(nodevolumelimits.NAME, nodevolumelimits.new, object_kinds=storage))
    registry.register(PluginSpec(volumebinding.NAME, volumebinding.new, args_type=volumebinding.VolumeBindingArgs, object_kinds=storage))
    registry.register(PluginSpec(volumezone.NAME, volumezone.new, object_kinds=storage))
    registry.register(PluginSpec(imagelocality.NAME, imagelocality.new))
    registry.register(PluginSpec(defaultpreemption.NAME, defaultpreemption.new, args_type=defaultpreemption.DefaultPreemptionArgs,
                                 object_kinds=((PDB_API_VERSION, PDB_KIND),)))
    registry.register(PluginSpec(defaultbinder.NAME, defaultbinder.new))
    registry.register(PluginSpec(nodedeclaredfeatures.NAME, nodedeclaredfeatures.new))
    registry.register(PluginSpec(dynamicresources.NAME, dynamicresources.new, args_type=dynamicresources.DynamicResourcesArgs,
                                 object_kinds=dynamicresources.OBJECT_KINDS))
    registry.register(PluginSpec(gangscheduling.NAME, gangscheduling.new))
    registry.register(PluginSpec(topologyaware.NAME, topologyaware.new))
    registry.register(PluginSpec(podgrouppodscount.NAME, podgrouppodscount.new))
    return registry
