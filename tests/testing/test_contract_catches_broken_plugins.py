"""The contract suite must fail on broken plugins, or its passing means nothing: one
deliberately broken plugin per promise it checks."""

from __future__ import annotations

import numpy as np
import pytest

from kubesched.framework import (
    ActionType,
    BoolArray,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    IntArray,
    NodeVerdicts,
    Plugin,
    PluginSpec,
    PreFilterResult,
    QueuedPodInfo,
    QueueingHint,
    RowArray,
    SignFragment,
    SnapshotView,
    StateKey,
    Status,
)
from kubesched.framework.signing import LABELS_SIGNER, labels_signer
from kubesched.objects import NodeInfo, PodInfo
from kubesched.testing import (
    ContractError,
    assert_declarations,
    assert_forms_agree,
    assert_plugin_contract,
    assert_scores_in_range,
    assert_signature_covers_reads,
    assert_unreserve_idempotent,
    random_clusters,
)

from .tutorial import module

POOL = "tutorial.kubesched.io/pool"
CLUSTERS = random_clusters(20, seed=5, node_labels={POOL: ["gpu", "batch"]}, pod_labels={POOL: ["gpu", "batch"]})

NodePool = module("node_pool_batch").NodePool
NOT_IN_POOL = module("node_pool_batch").NOT_IN_POOL
PreferLabel = module("prefer_label").PreferLabel
PreferLabelArgs = module("prefer_label").PreferLabelArgs
_SEEN: StateKey[bool] = StateKey("test/seen")


def spec_of(cls: type, name: str | None = None) -> PluginSpec[None]:
    def new(args: None, handle: Handle) -> Plugin:
        plugin: Plugin = cls()
        return plugin

    return PluginSpec(name or str(getattr(cls, "name")), new)


def test_the_unbroken_plugins_pass() -> None:
    assert_plugin_contract(spec_of(NodePool), None, ["filter"], CLUSTERS)
    assert_plugin_contract(module("prefer_label").spec, None, ["score"], CLUSTERS)


# -- (i) forms agree -------------------------------------------------------------------------
class PoolLabelMustExist(NodePool):
    """The batch form also rejects nodes without the label when the pod names no pool."""

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        ids, _ = snapshot.table.label_column(POOL)
        return NodeVerdicts.from_mask(ids >= 0, NOT_IN_POOL) if POOL not in pod.labels else super().filter_nodes(
            state, pod, snapshot, candidates)


class OtherReason(NodePool):
    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        verdicts: NodeVerdicts = super().filter_nodes(state, pod, snapshot, candidates)
        return NodeVerdicts(verdicts.codes, [Status(Code.UNSCHEDULABLE, "node(s) not in pool")] if verdicts.statuses else [])


class WritesCandidates(NodePool):
    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        candidates[:] = True
        verdicts: NodeVerdicts = super().filter_nodes(state, pod, snapshot, candidates)
        return verdicts


class ShortCodes(NodePool):
    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        return NodeVerdicts(np.ones(1, dtype=np.int32), [NOT_IN_POOL])


class PassesWithAStatus(NodePool):
    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        verdicts: NodeVerdicts = super().filter_nodes(state, pod, snapshot, candidates)
        return NodeVerdicts(verdicts.codes, [Status(Code.SUCCESS)] if verdicts.statuses else [])


@pytest.mark.parametrize(("broken", "message"), [
    (PoolLabelMustExist, "filter_nodes and filter disagree on node"),
    (OtherReason, r"filter_nodes says Unschedulable \['node\(s\) not in pool'\], filter says UnschedulableAndUnresolvable"),
    (WritesCandidates, "filter_nodes raised .*read-only"),
    (ShortCodes, "codes must be integers, one per table row"),
    (PassesWithAStatus, "statuses must reject"),
])
def test_a_batch_filter_that_disagrees_fails(broken: type, message: str) -> None:
    with pytest.raises(ContractError, match=message):
        assert_forms_agree(spec_of(broken, "NodePool"), None, CLUSTERS)
    with pytest.raises(ContractError, match=message):
        assert_plugin_contract(spec_of(broken, "NodePool"), None, ["filter"], CLUSTERS)


class UnorderedScores(PreferLabel):
    """Scores every row in row order instead of the order of ``rows``."""

    def __init__(self) -> None:
        super().__init__(PreferLabelArgs())

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        scores: IntArray = super().score_nodes(state, pod, snapshot, np.sort(rows))
        return scores


def test_a_batch_score_that_disagrees_fails() -> None:
    with pytest.raises(ContractError, match="score_nodes and score disagree on node"):
        assert_forms_agree(spec_of(UnorderedScores), None, CLUSTERS)


class NeverRejects(NodePool):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray) -> NodeVerdicts:
        return NodeVerdicts.all_pass(snapshot.table.size)


class AlwaysSkips(NodePool):
    def pre_filter(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView) -> tuple[PreFilterResult | None, Status | None]:
        return None, Status(Code.SKIP)


def test_comparing_nothing_fails() -> None:
    with pytest.raises(ContractError, match="passed every node of every cluster"):
        assert_forms_agree(spec_of(NeverRejects), None, CLUSTERS)
    assert_forms_agree(spec_of(NeverRejects), None, CLUSTERS, require_rejections=False)
    with pytest.raises(ContractError, match="no filter verdicts were compared"):
        assert_forms_agree(spec_of(AlwaysSkips), None, CLUSTERS)
    with pytest.raises(ContractError, match="nothing to compare"):
        assert_forms_agree(module("node_pool").spec, None, CLUSTERS)
    with pytest.raises(ContractError, match="every score was"):
        assert_forms_agree(module("prefer_label").spec, {"key": "no-such-label"}, CLUSTERS)


# -- (ii) score range -------------------------------------------------------------------------
class PodCountScore:
    name = "PodCountScore"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return 60 * len(node.pods)


class BadNormalize(PodCountScore):
    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return scores - 1


class WrongLength(PreferLabel):
    def __init__(self) -> None:
        super().__init__(PreferLabelArgs())

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        return np.zeros(len(rows) + 1, dtype=np.int64)


@pytest.mark.parametrize(("broken", "message"), [
    (PodCountScore, r"scores out of \[0, 100\] after normalizing"),
    (BadNormalize, r"scores out of \[0, 100\] after normalizing"),
    (WrongLength, "must be .* integers, one per row asked"),
])
def test_scores_out_of_range_fail(broken: type, message: str) -> None:
    with pytest.raises(ContractError, match=message):
        assert_scores_in_range(spec_of(broken), None, CLUSTERS)


# -- (iii) declarations --------------------------------------------------------------------------
class Misnamed:
    name = "SomethingElse"

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return 0


class WrongArity:
    name = "WrongArity"

    def score(self, pod: PodInfo, node: NodeInfo) -> int:
        return 0


class ReserveOnly:
    name = "ReserveOnly"

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        return None


class NormalizeOnly:
    name = "NormalizeOnly"

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        return scores


class EventsNotWrapped(NodePool):
    def events_to_register(self) -> list[ClusterEvent]:
        return [ClusterEvent(EventResource.NODE, ActionType.ADD)]


def bool_hint(pod: PodInfo, old: object | None, new: object | None) -> bool:
    return True


def raising_hint(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    raise KeyError("labels")


class BoolHint(NodePool):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), bool_hint)]


class RaisingHint(NodePool):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD), raising_hint)]


class NoAction(NodePool):
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType(0)))]


class LowPriorityFirstKey:
    """sort_key forgets to negate the priority: the heap would pop low priorities first."""

    name = "LowPriorityFirstKey"

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        return a.pod.priority > b.pod.priority or (a.pod.priority == b.pod.priority and a.timestamp < b.timestamp)

    def sort_key(self, queued: QueuedPodInfo) -> tuple[int, float]:
        return (queued.pod.priority, queued.timestamp)


@pytest.mark.parametrize(("broken", "points", "message"), [
    (Misnamed, [], "its factory made a plugin named 'SomethingElse'"),
    (module("fewest_pods").FewestPods, ["filter"], "claims the filter extension point but has no filter_nodes or filter"),
    (WrongArity, [], r"score\(pod, node\) cannot be called as score\(state, pod, node\)"),
    (ReserveOnly, [], "has reserve but not unreserve"),
    (NormalizeOnly, [], "has normalize_score but no score or score_nodes"),
    (EventsNotWrapped, [], r"events_to_register\(\)\[0\] is a ClusterEvent, not a ClusterEventWithHint"),
    (BoolHint, [], "the hint answered True, not a QueueingHint"),
    (RaisingHint, [], "the hint raised for pod .*KeyError"),
    (NoAction, [], "has no action type"),
    (LowPriorityFirstKey, ["queueSort"], "sort_key and less disagree"),
])
def test_false_declarations_fail(broken: type, points: list[str], message: str) -> None:
    name = "Misnamed" if broken is Misnamed else str(getattr(broken, "name"))
    with pytest.raises(ContractError, match=message):
        assert_declarations(spec_of(broken, name), None, points, CLUSTERS)


def test_a_factory_that_raises_fails() -> None:
    def refuse(args: None, handle: Handle) -> Plugin:
        raise RuntimeError("no inventory service")

    with pytest.raises(ContractError, match="its factory raised .*no inventory service"):
        assert_plugin_contract(PluginSpec("Refuses", refuse), None, [], CLUSTERS)


def test_args_that_do_not_decode_fail() -> None:
    with pytest.raises(ContractError, match='its args do not decode: ArgsError: values: must be a list'):
        assert_plugin_contract(module("prefer_label").spec, {"values": "fast"}, ["score"], CLUSTERS)


# -- (iv) Unreserve -----------------------------------------------------------------------------
class ForgetsTwice:
    """Unreserve pops what Reserve stored: fails the second time, and without Reserve."""

    name = "ForgetsTwice"

    def __init__(self) -> None:
        self.reserved: dict[str, str] = {}

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        self.reserved[pod.uid] = node_name
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        del self.reserved[pod.uid]


class ReportsFromUnreserve(ForgetsTwice):
    name = "ReportsFromUnreserve"

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        self.reserved.pop(pod.uid, None)
        return Status(Code.SUCCESS)


@pytest.mark.parametrize(("broken", "message"), [
    (ForgetsTwice, "unreserve raised when called without reserve .*KeyError"),
    (ReportsFromUnreserve, "unreserve returned Status"),
])
def test_unreserve_that_is_not_idempotent_fails(broken: type, message: str) -> None:
    with pytest.raises(ContractError, match=message):
        assert_unreserve_idempotent(spec_of(broken), None, CLUSTERS)
    with pytest.raises(ContractError, match=message):
        assert_plugin_contract(spec_of(broken), None, ["reserve"], CLUSTERS)


class ForgetsOnlyOnce(ForgetsTwice):
    name = "ForgetsOnlyOnce"

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        if pod.uid in self.reserved or not state.get(_SEEN):
            state.write(_SEEN, True)
            self.reserved.pop(pod.uid, None)
            return
        raise RuntimeError("unreserved twice")


def test_unreserve_failing_only_on_the_second_call_fails() -> None:
    with pytest.raises(ContractError, match="unreserve raised when called without reserve, again .*unreserved twice"):
        assert_unreserve_idempotent(spec_of(ForgetsOnlyOnce), None, CLUSTERS)


# -- (v) a signature covers what the plugin reads ----------------------------------------------
class SignsNothing(NodePool):  # type: ignore[misc,valid-type]
    """Filters on the pod's pool label, yet signs every pod alike."""

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [], None


class SignsItsLabels(NodePool):  # type: ignore[misc,valid-type]
    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [SignFragment(LABELS_SIGNER, labels_signer(pod))], None


def test_a_signature_missing_a_field_the_plugin_reads_fails() -> None:
    with pytest.raises(ContractError, match="reads labels and its sign_pod does not cover it"):
        assert_signature_covers_reads(spec_of(SignsNothing, "NodePool"), None, CLUSTERS)


def test_a_signature_covering_what_the_plugin_reads_passes() -> None:
    report = assert_signature_covers_reads(spec_of(SignsItsLabels, "NodePool"), None, CLUSTERS)
    assert report.filter_rows_compared > 0
    assert "signature covers what the plugin reads" in assert_plugin_contract(
        spec_of(SignsItsLabels, "NodePool"), None, ["filter"], CLUSTERS).checks
