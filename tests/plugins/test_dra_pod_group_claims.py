"""DynamicResources with DRAWorkloadResourceClaims: claims a PodGroup declares are shared by its
members, allocated once and reserved for the group (upstream's podgroup-* cases of
TestPlugin, played through the simulator with GenericWorkload and GangScheduling on).
With the gate off nothing changes: members reserve the claim each for itself, and a gang
sharing one unallocated claim cannot be placed (the claim is in flight for its first pod)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.cluster.simulated import Simulation, SimulationResult
from kubesched.cluster.snapshot import snapshot_from_objects
from kubesched.framework.config import API_VERSION, KIND, parse_config
from kubesched.framework.features import Features
from kubesched.plugins.registry import UPSTREAM_ONLY, in_tree_registry

from .dra_helpers import CONFIG, claim, gpu_class, gpu_slice, node, pod, stored_claim, template

GROUP_REF = {"apiGroup": "scheduling.k8s.io", "resource": "podgroups", "name": "train", "uid": "uid-pg-train"}
WITH_POST_FILTER = {"apiVersion": API_VERSION, "kind": KIND, "percentageOfNodesToScore": 100,
                    "profiles": [{"schedulerName": "default-scheduler",
                                  "plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}}}]}


def pod_group(min_count: int | None, claims: list[dict[str, str]]) -> dict[str, Any]:
    policy = {"gang": {"minCount": min_count}} if min_count else {"basic": {}}
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
            "metadata": {"name": "train", "namespace": "default", "uid": "uid-pg-train", "generation": 1},
            "spec": {"schedulingPolicy": policy, "resourceClaims": claims}}


def member(name: str, **kwargs: Any) -> dict[str, Any]:
    raw = pod(name, **kwargs)
    raw["spec"]["schedulingGroup"] = {"podGroupName": "train"}
    return raw


@dataclass
class Run:
    sim: Simulation
    result: SimulationResult


def run(*objects: dict[str, Any], gate: bool = True, config: dict[str, Any] | None = None) -> Run:
    registry = in_tree_registry(Features.from_gates(
        {"GenericWorkload": True, "GangScheduling": True, "DRAWorkloadResourceClaims": gate}))
    kinds = frozenset(k for _, k in registry.object_kinds())
    snapshot = snapshot_from_objects([("test", o) for o in objects], plugin_kinds=kinds)
    sim = Simulation(snapshot, parse_config(config or CONFIG, registry, UPSTREAM_ONLY), registry, tie_break="name")
    return Run(sim, sim.run())


def allocated(name: str, node_name: str, reserved: list[dict[str, str]]) -> dict[str, Any]:
    raw = claim(name)
    raw["status"] = {"allocation": {"devices": {"results": [
        {"request": "gpu", "driver": "gpu.example.com", "pool": node_name, "device": "gpu-0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}},
        "reservedFor": reserved}
    return raw


def gang_sharing_one_claim(gate: bool) -> Run:
    members = [member(f"w{i}", claims={"gpu": "shared"}) for i in range(4)]
    return run(node("a"), node("b"), node("c"), gpu_slice("b", 1), gpu_class(), claim("shared"),
               pod_group(4, [{"name": "gpu", "resourceClaimName": "shared"}]), *members, gate=gate)


def test_a_gang_sharing_its_group_claim_lands_on_the_device_node_with_one_allocation_reserved_for_the_group() -> None:
    sim = gang_sharing_one_claim(gate=True)
    assert sorted(sim.result.placements) == [(f"default/w{i}", "b") for i in range(4)]
    status = (stored_claim(sim.sim, "shared") or {})["status"]
    assert [r["device"] for r in status["allocation"]["devices"]["results"]] == ["gpu-0"]
    assert status["reservedFor"] == [GROUP_REF]


def test_a_gang_sharing_one_unallocated_claim_is_not_placed_with_the_gate_off() -> None:
    sim = gang_sharing_one_claim(gate=False)
    assert sim.result.placements == []
    assert "resource claim default/shared is in the process of being allocated" in \
        (sim.result.outcomes["default/w0"].message or "")


def test_a_claim_reserved_for_the_pods_group_is_used_without_a_new_reservation() -> None:
    sim = run(node("b"), gpu_slice("b", 1), gpu_class(), allocated("shared", "b", [GROUP_REF]),
              pod_group(None, [{"name": "gpu", "resourceClaimName": "shared"}]), member("w0", claims={"gpu": "shared"}))
    assert sim.result.placements == [("default/w0", "b")]
    assert (stored_claim(sim.sim, "shared") or {})["status"]["reservedFor"] == [GROUP_REF]


def test_prebind_reserves_a_group_claim_for_the_pod_group() -> None:
    sim = run(node("b"), gpu_slice("b", 1), gpu_class(), allocated("shared", "b", []),
              pod_group(None, [{"name": "gpu", "resourceClaimName": "shared"}]), member("w0", claims={"gpu": "shared"}))
    assert sim.result.placements == [("default/w0", "b")]
    assert (stored_claim(sim.sim, "shared") or {})["status"]["reservedFor"] == [GROUP_REF]


def test_prebind_reserves_a_group_claim_for_the_pod_with_the_gate_off() -> None:
    sim = run(node("b"), gpu_slice("b", 1), gpu_class(), allocated("shared", "b", []),
              pod_group(None, [{"name": "gpu", "resourceClaimName": "shared"}]), member("w0", claims={"gpu": "shared"}),
              gate=False)
    assert (stored_claim(sim.sim, "shared") or {})["status"]["reservedFor"] == [
        {"resource": "pods", "name": "w0", "uid": "uid-w0"}]


def test_a_claim_the_pod_does_not_share_with_its_group_is_reserved_for_the_pod() -> None:
    sim = run(node("b"), gpu_slice("b", 1), gpu_class(), allocated("mine", "b", []),
              pod_group(None, [{"name": "other", "resourceClaimName": "mine"}]), member("w0", claims={"gpu": "mine"}))
    assert (stored_claim(sim.sim, "mine") or {})["status"]["reservedFor"] == [
        {"resource": "pods", "name": "w0", "uid": "uid-w0"}]


def group_owned_claim() -> dict[str, Any]:
    raw = allocated("train-gpu-x", "b", [])
    raw["metadata"]["ownerReferences"] = [{"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
                                           "name": "train", "uid": "uid-pg-train", "controller": True}]
    return raw


def templated_member() -> dict[str, Any]:
    raw = member("w0", templates={"gpu": "gpu-template"})
    raw["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "train-gpu-x"}]}
    return raw


def test_a_template_claim_owned_by_the_pods_group_is_accepted() -> None:
    group = pod_group(None, [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}])
    group["status"] = {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "train-gpu-x"}]}
    sim = run(node("b"), gpu_slice("b", 1), gpu_class(), group_owned_claim(), group, templated_member())
    assert sim.result.placements == [("default/w0", "b")]
    assert (stored_claim(sim.sim, "train-gpu-x") or {})["status"]["reservedFor"] == [GROUP_REF]


def test_a_template_claim_owned_by_the_pods_group_is_refused_with_the_gate_off() -> None:
    group = pod_group(None, [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}])
    sim = run(node("b"), gpu_slice("b", 1), gpu_class(), group_owned_claim(), group, templated_member(), gate=False)
    assert sim.result.placements == []
    assert "ResourceClaim default/train-gpu-x was not created for Pod default/w0 (Pod is not owner)" in \
        (sim.result.outcomes["default/w0"].message or "")


def test_postfilter_releases_the_groups_reservation_when_no_member_is_placed() -> None:
    sim = run(node("a"), node("b"), gpu_slice("b", 1), gpu_class(), allocated("shared", "gone", [GROUP_REF]),
              pod_group(None, [{"name": "gpu", "resourceClaimName": "shared"}]), member("w0", claims={"gpu": "shared"}),
              config=WITH_POST_FILTER)
    assert sim.result.placements == []
    assert (sim.result.outcomes["default/w0"].message or "").endswith("ResourceClaim unreserved for PodGroup")
    status = (stored_claim(sim.sim, "shared") or {})["status"]
    assert status["reservedFor"] == []
    assert status["allocation"] is not None  # deallocated by a later PostFilter, as upstream


def test_postfilter_keeps_the_groups_reservation_with_the_gate_off() -> None:
    sim = run(node("a"), node("b"), gpu_slice("b", 1), gpu_class(), allocated("shared", "gone", [GROUP_REF]),
              pod_group(None, [{"name": "gpu", "resourceClaimName": "shared"}]), member("w0", claims={"gpu": "shared"}),
              config=WITH_POST_FILTER, gate=False)
    assert sim.result.placements == []
    assert (sim.result.outcomes["default/w0"].message or "").endswith("still not schedulable")
    assert (stored_claim(sim.sim, "shared") or {})["status"]["reservedFor"] == [GROUP_REF]


def template_gang(gate: bool) -> Run:
    group = pod_group(4, [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}])
    members = [member(f"w{i}", templates={"gpu": "gpu-template"}) for i in range(4)]
    return run(node("a"), node("b"), gpu_slice("b", 4), gpu_class(), template("gpu-template"), group, *members,
               gate=gate)


def claims_of(sim: Simulation) -> list[dict[str, Any]]:
    store = sim.scheduler.hub.object_stores.find("resource.k8s.io/v1", "ResourceClaim")
    return [dict(c) for c in store.list()] if store is not None else []


def test_the_controller_makes_one_claim_for_a_gang_from_its_podgroups_template_and_the_gang_shares_it() -> None:
    done = template_gang(gate=True)
    assert sorted(done.result.placements) == [(f"default/w{i}", "b") for i in range(4)]
    [made] = claims_of(done.sim)
    assert made["metadata"]["ownerReferences"][0]["kind"] == "PodGroup"
    assert made["metadata"]["name"].startswith("train-gpu-")
    assert made["status"]["reservedFor"] == [GROUP_REF]


def test_the_controller_makes_a_claim_per_member_from_the_template_with_the_gate_off() -> None:
    done = template_gang(gate=False)
    assert len(claims_of(done.sim)) == 4
    assert all(c["metadata"]["ownerReferences"][0]["kind"] == "Pod" for c in claims_of(done.sim))


def test_postfilter_keeps_the_groups_reservation_while_a_member_is_placed() -> None:
    sim = run(node("a"), node("b"), gpu_slice("b", 1), gpu_class(), allocated("shared", "gone", [GROUP_REF]),
              pod_group(None, [{"name": "gpu", "resourceClaimName": "shared"}]),
              member("w0", claims={"gpu": "shared"}), member("w1", claims={"gpu": "shared"}, node_name="b"),
              config=WITH_POST_FILTER)
    assert (sim.result.outcomes["default/w0"].message or "").endswith("still not schedulable")
    assert (stored_claim(sim.sim, "shared") or {})["status"]["reservedFor"] == [GROUP_REF]
