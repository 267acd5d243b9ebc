"""VolumeBinding: claims bound, matched to an available PV, or provisioned for the node."""

from __future__ import annotations

import pytest

from kubesched.framework.args import ArgsError, decode_args
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.status import Code
from kubesched.objects.pod import parse_pod
from kubesched.plugins import volumebinding
from kubesched.plugins.volumebinding import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
)

from ..helpers import batch_filter, node
from .test_volume_objects import StorageCluster, capacity, claim_pod, csi_driver, pv, pvc, storage_class

ZONE = "topology.kubernetes.io/zone"
LOCAL = storage_class("local")
DYNAMIC = storage_class("dynamic", provisioner="csi.example.com")
UAU = Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def cluster(*objects):
    c = StorageCluster([node("n1", zone="a"), node("n2", zone="b")])
    c.add(*objects)
    return c


def attempt(c, raw_pod, plugin=None):
    """(plugin, state, PreFilter status or the per-node verdicts)."""
    plugin = plugin or volumebinding.new(None, c.handle)
    state, p = CycleState(), parse_pod(raw_pod)
    _, status = plugin.pre_filter(state, p, c.snapshot)
    if status is not None:
        return plugin, state, status
    return plugin, state, {name: None if s is None else s.reasons for name, s in batch_filter(plugin, state, p, c).items()}


def verdicts(*objects, claims=("data",)):
    return attempt(cluster(*objects), claim_pod("p", *claims))[2]


# -- PreFilter ------------------------------------------------------------------------------------
def test_a_pod_without_claims_is_skipped():
    assert verdicts(claims=()).code == Code.SKIP


def test_a_pod_whose_claims_are_bound_to_pvs_without_node_affinity_is_skipped():
    objects = [pv("pv", claim=("default", "data", "u"), phase="Bound"), pvc("data", volume_name="pv", bound=True)]
    assert verdicts(*objects).code == Code.SKIP


@pytest.mark.parametrize(("objects", "message"), [
    ((), 'persistentvolumeclaim "data" not found'),
    ((pvc("data", cls="local", deleting=True), LOCAL), 'persistentvolumeclaim "data" is being deleted'),
    ((pvc("data", volume_name="pv", phase="Lost"),), 'persistentvolumeclaim "data" bound to non-existent persistentvolume "pv"'),
    ((pvc("data", cls="fast"), storage_class("fast", mode=None)), "pod has unbound immediate PersistentVolumeClaims"),
    ((pvc("data", cls="local", volume_name="pv"), LOCAL), "pod has unbound immediate PersistentVolumeClaims"),
    ((pvc("data", cls="unknown"),), "pod has unbound immediate PersistentVolumeClaims"),
], ids=["missing", "deleting", "lost", "immediate", "pre-bound", "class-missing"])
def test_prefilter_rejections(objects, message):
    status = verdicts(*objects)
    assert (status.code, status.reasons) == (UAU, (message,))


# -- Filter: bound claims -------------------------------------------------------------------------
def test_a_bound_claim_keeps_the_pod_where_its_pv_is_reachable():
    objects = [pv("pv", hosts=["n2"], claim=("default", "data", "u"), phase="Bound"), pvc("data", volume_name="pv", bound=True)]
    assert verdicts(*objects) == {"n1": (ERR_REASON_NODE_CONFLICT,), "n2": None}


def test_a_claim_bound_to_a_missing_pv_fails_every_node():
    assert verdicts(pvc("data", volume_name="gone", bound=True)) == {n: (ERR_REASON_PV_NOT_EXIST,) for n in ("n1", "n2")}


# -- Filter: static binding -----------------------------------------------------------------------
def test_an_unbound_claim_needs_an_available_pv_on_the_node():
    objects = [LOCAL, pvc("data", cls="local"), pv("pv", cls="local", hosts=["n1"])]
    assert verdicts(*objects) == {"n1": None, "n2": (ERR_REASON_BIND_CONFLICT,)}


@pytest.mark.parametrize("candidate", [
    pv("pv", cls="other", hosts=["n1"]),
    pv("pv", cls="local", hosts=["n1"], capacity="1Gi"),
    pv("pv", cls="local", hosts=["n1"], modes=["ReadOnlyMany"]),
    pv("pv", cls="local", hosts=["n1"], volume_mode="Block"),
    pv("pv", cls="local", hosts=["n1"], phase="Released"),
    pv("pv", cls="local", hosts=["n1"], claim=("default", "someone-else", "u2")),
    pv("pv", cls="local", hosts=["n1"], deleting=True),
], ids=["class", "too-small", "access-modes", "volume-mode", "not-available", "claimed", "deleting"])
def test_a_pv_that_does_not_match_the_claim_is_not_bound(candidate):
    assert verdicts(LOCAL, pvc("data", cls="local"), candidate)["n1"] == (ERR_REASON_BIND_CONFLICT,)


def test_a_claims_selector_must_match_the_pvs_labels():
    claim = pvc("data", cls="local", selector={"matchLabels": {"tier": "gold"}})
    assert verdicts(LOCAL, claim, pv("pv", cls="local", labels={"tier": "silver"}))["n1"] == (ERR_REASON_BIND_CONFLICT,)
    assert verdicts(LOCAL, claim, pv("pv", cls="local", labels={"tier": "gold"}))["n1"] is None


def test_the_smallest_fitting_pv_is_chosen_and_two_claims_never_share_one():
    objects = [LOCAL, pvc("small", cls="local", request="5Gi"), pvc("big", cls="local", request="20Gi"),
               pv("pv-50", cls="local", capacity="50Gi"), pv("pv-20", cls="local", capacity="20Gi"),
               pv("pv-10", cls="local", capacity="10Gi")]
    c = cluster(*objects)
    plugin, state, got = attempt(c, claim_pod("p", "small", "big"))
    assert got == {"n1": None, "n2": None}
    plugin.reserve(state, parse_pod(claim_pod("p", "small", "big")), "n1")
    chosen = {pvc_.name: pv_.name for pv_, pvc_ in state.read(volumebinding.plugin._STATE).by_node["n1"].static_bindings}
    assert chosen == {"small": "pv-10", "big": "pv-20"}


def test_one_pv_for_two_claims_is_not_enough():
    objects = [LOCAL, pvc("a", cls="local"), pvc("b", cls="local"), pv("pv", cls="local")]
    assert verdicts(*objects, claims=("a", "b"))["n1"] == (ERR_REASON_BIND_CONFLICT,)


# -- Filter: dynamic provisioning -----------------------------------------------------------------
def test_a_class_that_cannot_provision_fails_the_node():
    assert verdicts(LOCAL, pvc("data", cls="local"))["n1"] == (ERR_REASON_BIND_CONFLICT,)


def test_allowed_topologies_limit_where_a_claim_is_provisioned():
    zonal = storage_class("zonal", provisioner="csi.example.com", allowed={ZONE: ["b"]})
    assert verdicts(zonal, pvc("data", cls="zonal")) == {"n1": (ERR_REASON_BIND_CONFLICT,), "n2": None}


def test_storage_capacity_is_checked_when_the_driver_publishes_it():
    objects = [DYNAMIC, pvc("data", cls="dynamic", request="10Gi"), csi_driver("csi.example.com", storage_capacity=True),
               capacity("c1", "dynamic", "5Gi", hostname="n1"), capacity("c2", "dynamic", "50Gi", hostname="n2")]
    assert verdicts(*objects) == {"n1": (ERR_REASON_NOT_ENOUGH_SPACE,), "n2": None}


def test_capacity_is_not_checked_for_a_driver_that_does_not_publish_it():
    objects = [DYNAMIC, pvc("data", cls="dynamic", request="10Gi"), csi_driver("csi.example.com"),
               capacity("c1", "dynamic", "5Gi", hostname="n1")]
    assert verdicts(*objects) == {"n1": None, "n2": None}


def test_a_claim_already_provisioning_for_another_node_fails_this_one():
    claim = pvc("data", cls="dynamic", annotations={"volume.kubernetes.io/selected-node": "n2"})
    assert verdicts(DYNAMIC, claim) == {"n1": (ERR_REASON_BIND_CONFLICT,), "n2": None}


# -- Reserve / Unreserve ----------------------------------------------------------------------------
def test_reserve_assumes_the_binding_so_the_next_pod_cannot_take_the_pv_and_unreserve_frees_it():
    c = cluster(LOCAL, pvc("a", cls="local"), pvc("b", cls="local"), pv("pv", cls="local"))
    plugin, state, _ = attempt(c, claim_pod("p", "a"))
    assert plugin.reserve(state, parse_pod(claim_pod("p", "a")), "n1") is None
    _, _, got = attempt(c, claim_pod("q", "b"), plugin)
    assert got["n1"] == (ERR_REASON_BIND_CONFLICT,)
    plugin.unreserve(state, parse_pod(claim_pod("p", "a")), "n1")
    plugin.unreserve(state, parse_pod(claim_pod("p", "a")), "n1")  # idempotent
    _, _, got = attempt(c, claim_pod("q", "b"), plugin)
    assert got["n1"] is None


def test_reserve_annotates_a_claim_to_provision_with_the_selected_node():
    c = cluster(DYNAMIC, pvc("data", cls="dynamic"))
    plugin, state, _ = attempt(c, claim_pod("p", "data"))
    plugin.reserve(state, parse_pod(claim_pod("p", "data")), "n2")
    _, _, got = attempt(c, claim_pod("q", "data"), plugin)
    assert got == {"n1": (ERR_REASON_BIND_CONFLICT,), "n2": None}


# -- args ------------------------------------------------------------------------------------------
def test_args_default_to_a_ten_minute_bind_timeout_and_reject_a_negative_one():
    assert decode_args(volumebinding.VolumeBindingArgs, None).bind_timeout_seconds == 600
    with pytest.raises(ArgsError, match="bindTimeoutSeconds"):
        decode_args(volumebinding.VolumeBindingArgs, {"bindTimeoutSeconds": -1})


@pytest.mark.parametrize(("anywhere", "expected"), [("10Gi", "pv-any"), ("30Gi", "pv-n1")])
def test_the_smallest_match_wins_between_pvs_pinned_to_the_node_and_pvs_reachable_anywhere(anywhere, expected):
    objects = [LOCAL, pvc("data", cls="local", request="5Gi"), pv("pv-n1", cls="local", capacity="20Gi", hosts=["n1"]),
               pv("pv-n2", cls="local", capacity="1Gi", hosts=["n2"]), pv("pv-any", cls="local", capacity=anywhere)]
    c = cluster(*objects)
    plugin, state, got = attempt(c, claim_pod("p", "data"))
    assert got["n1"] is None
    plugin.reserve(state, parse_pod(claim_pod("p", "data")), "n1")
    [(chosen, _)] = state.read(volumebinding.plugin._STATE).by_node["n1"].static_bindings
    assert chosen.name == expected


# -- queueing hints ----------------------------------------------------------------------------------
def hint_answers(*args):
    plugin = volumebinding.new(None, cluster().handle)
    waiting = parse_pod(claim_pod("p", "data"))
    return [h(waiting, old, new).name for h, old, new in args[0](plugin)]


def test_a_claim_of_the_pod_created_or_changed_queues_it_and_others_do_not():
    assert hint_answers(lambda pl: [
        (pl._hint_claim_changed, None, pvc("data")),
        (pl._hint_claim_changed, None, pvc("other")),
        (pl._hint_claim_changed, None, pvc("data", namespace="elsewhere")),
    ]) == ["QUEUE", "SKIP", "SKIP"]


def test_a_new_class_or_new_allowed_topologies_queue_the_pod():
    zonal = storage_class("zonal", provisioner="csi.example.com", allowed={ZONE: ["a"]})
    wider = storage_class("zonal", provisioner="csi.example.com", allowed={ZONE: ["a", "b"]})
    assert hint_answers(lambda pl: [
        (pl._hint_class_changed, None, zonal),
        (pl._hint_class_changed, zonal, wider),
        (pl._hint_class_changed, zonal, {**zonal, "parameters": {"type": "gp3"}}),
    ]) == ["QUEUE", "QUEUE", "SKIP"]


def test_more_storage_capacity_queues_the_pod_less_does_not():
    small, large = capacity("c", "dynamic", "5Gi", hostname="n1"), capacity("c", "dynamic", "50Gi", hostname="n1")
    assert hint_answers(lambda pl: [
        (pl._hint_capacity_changed, None, small),
        (pl._hint_capacity_changed, small, large),
        (pl._hint_capacity_changed, large, small),
    ]) == ["QUEUE", "QUEUE", "SKIP"]


def test_the_plugin_registers_for_every_storage_kind_it_reads():
    plugin = volumebinding.new(None, cluster().handle)
    resources = {str(e.event.resource) for e in plugin.events_to_register()}
    assert {"persistentvolumes", "persistentvolumeclaims", "storageclasses.v1.storage.k8s.io", "csinodes.v1.storage.k8s.io",
            "csidrivers.v1.storage.k8s.io", "csistoragecapacities.v1.storage.k8s.io"} <= resources
