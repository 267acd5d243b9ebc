"""Feature gates the scheduler reads (upstream's ``--feature-gates`` and ``plugins/feature``).

kube-scheduler copies the gates its plugins read into one struct, ``feature.Features``,
and hands it to every plugin factory, so a plugin never asks a global. ``Features`` is
that struct here: built once from ``--feature-gates`` (``parse_feature_gates``) with
v1.36's defaults, it reaches plugins as ``Handle.features`` and decides the default
profile (DynamicResources and NodeDeclaredFeatures join it only when their gates are on).

``GATES`` lists the gates kubesched accepts: every gate upstream's ``Features`` reads,
plus the gates the conformance scenarios record (v1.36.2's ``featureGates``). A gate not
listed is rejected as kube-scheduler rejects an unknown one; a gate locked to its default
(GA with ``LockToDefault``) cannot be set to the other value; a gate enabled while one it
depends on is disabled (``GATE_DEPENDENCIES``, v1.36.2's ``pkg/features`` declarations:
GangScheduling needs GenericWorkload, WorkloadAwarePreemption needs GangScheduling, ...) is
refused as component-base's ``featureGate.Set`` refuses it, whether it was enabled by the
flag or by default (so ``NodeDeclaredFeatures=false`` alone is refused: two beta gates on
by default depend on it).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Mapping

__all__ = ["Features", "FeatureGateError", "GateSpec", "GATES", "GATE_DEPENDENCIES", "MODELLED_GATES",
           "dependency_problems", "parse_feature_gates", "DEFAULT_FEATURES"]


@dataclass(slots=True, frozen=True)
class GateSpec:
    """One gate at v1.36: its default, its maturity, and whether it is locked to the default."""

    default: bool
    stage: str
    locked: bool = False


# v1.36.2's pkg/features (the last versioned spec at or before 1.36). The gates that depend
# on these or that these depend on are here too (recorded only), so that every dependency
# refusal upstream makes can be answered as upstream allows: NodeDeclaredFeatures=false needs
# the four beta gates that depend on it turned off as well.
GATES: Mapping[str, GateSpec] = {
    "ContainerRestartRules": GateSpec(True, "Beta"),
    "DRAAdminAccess": GateSpec(True, "GA", locked=True),
    "DRAConsumableCapacity": GateSpec(True, "Beta"),
    "DRADeviceBindingConditions": GateSpec(True, "Beta"),
    "DRADeviceTaintRules": GateSpec(False, "Beta"),
    "DRADeviceTaints": GateSpec(True, "Beta"),
    "DRAExtendedResource": GateSpec(True, "Beta"),
    "DRAListTypeAttributes": GateSpec(False, "Alpha"),
    "DRANodeAllocatableResources": GateSpec(False, "Alpha"),
    "DRAPartitionableDevices": GateSpec(True, "Beta"),
    "DRAPrioritizedList": GateSpec(True, "GA"),
    "DRAResourceClaimDeviceStatus": GateSpec(True, "Beta"),
    "DRAResourceClaimGranularStatusAuthorization": GateSpec(True, "Beta"),
    "DRASchedulerFilterTimeout": GateSpec(True, "Beta"),
    "DRAWorkloadResourceClaims": GateSpec(False, "Alpha"),
    "DynamicResourceAllocation": GateSpec(True, "GA", locked=True),
    "ExtendWebSocketsToKubelet": GateSpec(True, "Beta"),
    "GangScheduling": GateSpec(False, "Alpha"),
    "GenericWorkload": GateSpec(False, "Alpha"),
    "InPlacePodLevelResourcesVerticalScaling": GateSpec(True, "Beta"),
    "InPlacePodVerticalScaling": GateSpec(True, "GA", locked=True),
    "InPlacePodVerticalScalingInitContainers": GateSpec(True, "Beta"),
    "MatchLabelKeysInPodAffinity": GateSpec(True, "GA", locked=True),
    "MatchLabelKeysInPodTopologySpread": GateSpec(True, "Beta"),
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": GateSpec(True, "Beta"),
    "NodeDeclaredFeatures": GateSpec(True, "Beta"),
    "NodeInclusionPolicyInPodTopologySpread": GateSpec(True, "GA", locked=True),
    "NominatedNodeNameForExpectation": GateSpec(True, "Beta"),
    "OpportunisticBatching": GateSpec(True, "Beta"),
    "PodLevelResourceManagers": GateSpec(False, "Alpha"),
    "PodLevelResources": GateSpec(True, "Beta"),
    "RestartAllContainersOnContainerExits": GateSpec(True, "Beta"),
    "SchedulerAsyncAPICalls": GateSpec(False, "Beta"),
    "SchedulerAsyncPreemption": GateSpec(True, "Beta"),
    "SchedulerPopFromBackoffQ": GateSpec(True, "Beta"),
    "SchedulerQueueingHints": GateSpec(True, "GA", locked=True),
    "SidecarContainers": GateSpec(True, "GA", locked=True),
    "StorageCapacityScoring": GateSpec(False, "Alpha"),
    "TaintTolerationComparisonOperators": GateSpec(False, "Alpha"),
    "TopologyAwareWorkloadScheduling": GateSpec(False, "Alpha"),
    "UserNamespacesHostNetworkSupport": GateSpec(False, "Alpha"),
    "UserNamespacesSupport": GateSpec(True, "GA", locked=True),
    "VolumeAttributesClass": GateSpec(True, "GA", locked=True),
    "VolumeLimitScaling": GateSpec(False, "Alpha"),
    "WorkloadAwarePreemption": GateSpec(False, "Alpha"),
    "WorkloadWithJob": GateSpec(False, "Alpha"),
}

# v1.36.2's defaultKubernetesFeatureGateDependencies for the gates above: a gate may be
# enabled only when every gate it names is (each list sorted, as AddDependencies sorts it).
GATE_DEPENDENCIES: Mapping[str, tuple[str, ...]] = {
    "DRAAdminAccess": ("DynamicResourceAllocation",),
    "DRAConsumableCapacity": ("DynamicResourceAllocation",),
    "DRADeviceBindingConditions": ("DRAResourceClaimDeviceStatus", "DynamicResourceAllocation"),
    "DRADeviceTaintRules": ("DRADeviceTaints",),
    "DRADeviceTaints": ("DynamicResourceAllocation",),
    "DRAExtendedResource": ("DynamicResourceAllocation",),
    "DRAListTypeAttributes": ("DynamicResourceAllocation",),
    "DRANodeAllocatableResources": ("DynamicResourceAllocation",),
    "DRAPartitionableDevices": ("DynamicResourceAllocation",),
    "DRAPrioritizedList": ("DynamicResourceAllocation",),
    "DRAResourceClaimGranularStatusAuthorization": ("DRAResourceClaimDeviceStatus", "DynamicResourceAllocation"),
    "DRASchedulerFilterTimeout": ("DynamicResourceAllocation",),
    "DRAWorkloadResourceClaims": ("DynamicResourceAllocation", "GenericWorkload"),
    "ExtendWebSocketsToKubelet": ("NodeDeclaredFeatures",),
    "GangScheduling": ("GenericWorkload",),
    "InPlacePodLevelResourcesVerticalScaling": ("InPlacePodVerticalScaling", "NodeDeclaredFeatures", "PodLevelResources"),
    "InPlacePodVerticalScalingInitContainers": ("InPlacePodVerticalScaling", "NodeDeclaredFeatures"),
    "MatchLabelKeysInPodTopologySpreadSelectorMerge": ("MatchLabelKeysInPodTopologySpread",),
    "PodLevelResourceManagers": ("PodLevelResources",),
    "RestartAllContainersOnContainerExits": ("ContainerRestartRules", "NodeDeclaredFeatures"),
    "TopologyAwareWorkloadScheduling": ("GenericWorkload",),
    "UserNamespacesHostNetworkSupport": ("NodeDeclaredFeatures", "UserNamespacesSupport"),
    "WorkloadAwarePreemption": ("GangScheduling",),
    "WorkloadWithJob": ("GenericWorkload",),
}

# Gates whose other value changes what kubesched decides (docs/dra.md lists them); the
# rest are accepted and recorded, and kubesched behaves as at their default.
MODELLED_GATES = frozenset({
    "DynamicResourceAllocation", "DRAExtendedResource", "DRAPrioritizedList", "DRAAdminAccess",
    "DRAConsumableCapacity", "DRADeviceTaints", "DRAPartitionableDevices", "DRADeviceBindingConditions",
    "NodeDeclaredFeatures", "GenericWorkload", "GangScheduling", "TopologyAwareWorkloadScheduling",
    "WorkloadAwarePreemption", "SchedulerAsyncPreemption", "DRAWorkloadResourceClaims",
})


class FeatureGateError(ValueError):
    """A ``--feature-gates`` value kube-scheduler would refuse; ``str`` is its one-line message."""


@dataclass(slots=True, frozen=True)
class Features:
    """upstream's ``feature.Features``: the gate values plugins read, at v1.36's defaults."""

    enable_dra_extended_resource: bool = True
    enable_dra_prioritized_list: bool = True
    enable_dra_admin_access: bool = True
    enable_dra_consumable_capacity: bool = True
    enable_dra_device_taints: bool = True
    enable_dra_device_taint_rules: bool = False
    enable_dra_device_binding_conditions: bool = True
    enable_dra_list_type_attributes: bool = False
    enable_dra_node_allocatable_resources: bool = False
    enable_dra_partitionable_devices: bool = True
    enable_dra_resource_claim_device_status: bool = True
    enable_dra_scheduler_filter_timeout: bool = True
    enable_dra_workload_resource_claims: bool = False
    enable_dynamic_resource_allocation: bool = True
    enable_volume_attributes_class: bool = True
    enable_volume_limit_scaling: bool = False
    enable_node_inclusion_policy_in_pod_topology_spread: bool = True
    enable_match_label_keys_in_pod_topology_spread: bool = True
    enable_in_place_pod_vertical_scaling: bool = True
    enable_sidecar_containers: bool = True
    enable_scheduling_queue_hint: bool = True
    enable_async_preemption: bool = True
    enable_pod_level_resources: bool = True
    enable_storage_capacity_scoring: bool = False
    enable_node_declared_features: bool = True
    enable_gang_scheduling: bool = False
    enable_generic_workload: bool = False
    enable_taint_toleration_comparison_operators: bool = False
    enable_in_place_pod_level_resources_vertical_scaling: bool = True
    enable_topology_aware_workload_scheduling: bool = False
    enable_workload_aware_preemption: bool = False
    enable_opportunistic_batching: bool = True
    # Every gate's value by name (the ones above and those only recorded).
    gates: tuple[tuple[str, bool], ...] = ()

    @classmethod
    def from_gates(cls, overrides: Mapping[str, bool]) -> "Features":
        """The struct for v1.36's defaults with ``overrides`` applied (names already checked)."""
        values = {name: overrides.get(name, spec.default) for name, spec in GATES.items()}
        kwargs = {f.name: values[gate] for f in fields(cls) if (gate := _FIELD_GATES.get(f.name)) is not None}
        return cls(**kwargs, gates=tuple(sorted(values.items())))

    def enabled(self, gate: str) -> bool:
        """A gate's value by its upstream name (its v1.36 default when never set)."""
        for name, value in self.gates:
            if name == gate:
                return value
        spec = GATES.get(gate)
        return spec.default if spec is not None else False

    def as_dict(self) -> dict[str, bool]:
        """Every known gate's value, for reports (``expected.featureGates`` in conformance)."""
        if self.gates:
            return dict(self.gates)
        return {name: spec.default for name, spec in GATES.items()}


_FIELD_GATES = {
    "enable_dra_extended_resource": "DRAExtendedResource",
    "enable_dra_prioritized_list": "DRAPrioritizedList",
    "enable_dra_admin_access": "DRAAdminAccess",
    "enable_dra_consumable_capacity": "DRAConsumableCapacity",
    "enable_dra_device_taints": "DRADeviceTaints",
    "enable_dra_device_taint_rules": "DRADeviceTaintRules",
    "enable_dra_device_binding_conditions": "DRADeviceBindingConditions",
    "enable_dra_list_type_attributes": "DRAListTypeAttributes",
    "enable_dra_node_allocatable_resources": "DRANodeAllocatableResources",
    "enable_dra_partitionable_devices": "DRAPartitionableDevices",
    "enable_dra_resource_claim_device_status": "DRAResourceClaimDeviceStatus",
    "enable_dra_scheduler_filter_timeout": "DRASchedulerFilterTimeout",
    "enable_dra_workload_resource_claims": "DRAWorkloadResourceClaims",
    "enable_dynamic_resource_allocation": "DynamicResourceAllocation",
    "enable_volume_attributes_class": "VolumeAttributesClass",
    "enable_volume_limit_scaling": "VolumeLimitScaling",
    "enable_node_inclusion_policy_in_pod_topology_spread": "NodeInclusionPolicyInPodTopologySpread",
    "enable_match_label_keys_in_pod_topology_spread": "MatchLabelKeysInPodTopologySpread",
    "enable_in_place_pod_vertical_scaling": "InPlacePodVerticalScaling",
    "enable_sidecar_containers": "SidecarContainers",
    "enable_scheduling_queue_hint": "SchedulerQueueingHints",
    "enable_async_preemption": "SchedulerAsyncPreemption",
    "enable_pod_level_resources": "PodLevelResources",
    "enable_storage_capacity_scoring": "StorageCapacityScoring",
    "enable_node_declared_features": "NodeDeclaredFeatures",
    "enable_gang_scheduling": "GangScheduling",
    "enable_generic_workload": "GenericWorkload",
    "enable_taint_toleration_comparison_operators": "TaintTolerationComparisonOperators",
    "enable_in_place_pod_level_resources_vertical_scaling": "InPlacePodLevelResourcesVerticalScaling",
    "enable_topology_aware_workload_scheduling": "TopologyAwareWorkloadScheduling",
    "enable_workload_aware_preemption": "WorkloadAwarePreemption",
    "enable_opportunistic_batching": "OpportunisticBatching",
}

DEFAULT_FEATURES = Features.from_gates({})

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _parse_bool(text: str) -> bool | None:
    """Go's ``strconv.ParseBool``."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def _enabled(gate: str, values: Mapping[str, bool]) -> bool:
    spec = GATES[gate]
    return values.get(gate, spec.default)


def dependency_problems(values: Mapping[str, bool]) -> list[str]:
    """component-base's dependency check over the effective gates (``values`` over v1.36's
    defaults): one message per enabled gate with a disabled dependency, by gate name (upstream
    walks a map, so its order varies from run to run)."""
    out: list[str] = []
    for gate in sorted(GATE_DEPENDENCIES):
        if not _enabled(gate, values):
            continue
        disabled = [dep for dep in GATE_DEPENDENCIES[gate] if not _enabled(dep, values)]
        if disabled:
            out.append(f"{gate} is enabled, but depends on features that are disabled: [{' '.join(disabled)}]")
    return out


def _aggregate(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message alone, several in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _pairs(value: str) -> list[tuple[str, bool]]:
    """One ``--feature-gates`` value's ``key=bool`` items, in order."""
    pairs: list[tuple[str, bool]] = []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep:
            raise FeatureGateError(f'invalid argument "{value}" for "--feature-gates" flag: missing bool value for {key}')
        parsed = _parse_bool(raw.strip())
        if parsed is None:
            raise FeatureGateError(f'invalid argument "{value}" for "--feature-gates" flag: '
                                   f'invalid value of {key}={raw.strip()}, err: strconv.ParseBool: '
                                   f'parsing "{raw.strip()}": invalid syntax')
        pairs.append((key, parsed))
    return pairs


def _resolve(pairs: list[tuple[str, bool]], value: str) -> dict[str, bool]:
    """The gates ``pairs`` set: ``AllAlpha``/``AllBeta`` switch every unlocked gate of that
    stage first, then the named gates in order; unknown and locked gates refused."""
    out: dict[str, bool] = {}
    for stage in ("Alpha", "Beta"):
        for key, enabled in pairs:
            if key == f"All{stage}":
                for name, spec in GATES.items():
                    if spec.stage == stage and not spec.locked:
                        out[name] = enabled
    for key, enabled in pairs:
        if key in ("AllAlpha", "AllBeta"):
            continue
        found = GATES.get(key)
        if found is None:
            raise FeatureGateError(f'invalid argument "{value}" for "--feature-gates" flag: '
                                   f"unrecognized feature gate: {key}")
        if found.locked and enabled != found.default:
            raise FeatureGateError(f'invalid argument "{value}" for "--feature-gates" flag: '
                                   f"cannot set feature gate {key} to {str(enabled).lower()}, "
                                   f"feature is locked to {str(found.default).lower()}")
        out[key] = enabled
    return out


def parse_feature_gates(values: list[str] | tuple[str, ...]) -> dict[str, bool]:
    """``--feature-gates`` values (each ``A=true,B=false``; repeatable) as a map, checked as
    component-base's ``featureGate.Set`` checks them: each occurrence of the flag is one
    ``Set``, applied over the ones before it and refused (quoting it) when the gates so far
    name an unknown gate, change a locked one, or enable a gate whose dependency is off."""
    pairs: list[tuple[str, bool]] = []
    out: dict[str, bool] = {}
    for value in values:
        pairs.extend(_pairs(value))
        out = _resolve(pairs, value)
        problems = dependency_problems(out)
        if problems:
            raise FeatureGateError(f'invalid argument "{value}" for "--feature-gates" flag: {_aggregate(problems)}')
    return out
