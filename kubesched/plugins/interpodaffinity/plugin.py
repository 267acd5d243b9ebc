"""InterPodAffinity: required pod (anti-)affinity filters, preferred terms score.

Upstream's ``pkg/scheduler/framework/plugins/interpodaffinity`` (v1.36), decision for
decision:

* **PreFilter** builds three maps from topology pair ``(key, value)`` to a count
  (upstream's ``topologyToMatchedTermCount``):

  - *existing*: placed pods whose required anti-affinity terms select the incoming pod,
    one per term, at the term's key and the value of that key on the pod's node;
  - *affinity*: placed pods that match **all** required affinity terms of the incoming
    pod, once per term at that term's key;
  - *anti*: placed pods matching each required anti-affinity term of the incoming pod.

  It returns Skip when the pod has no required terms and *existing* is empty.
* **Filter** rejects a node (first failing check wins)

  - ``node(s) didn't match pod affinity rules`` (UnschedulableAndUnresolvable) when it
    lacks a term's topology key, or some term's pair has no matching pod, unless no
    pod matches anywhere (*affinity* is empty) and the pod matches its own terms (the
    first pod of a group with self-affinity);
  - ``node(s) didn't match pod anti-affinity rules`` (Unschedulable) when a term's
    pair on the node has a matching pod;
  - ``node(s) didn't satisfy existing pods anti-affinity rules`` (Unschedulable) when
    any of the node's label pairs is in *existing*.
* **PreScore** sums, per topology pair: the incoming pod's preferred affinity
  (+weight) and anti-affinity (-weight) terms for each placed pod they select; the
  placed pods' required affinity terms that select the incoming pod
  (+``hardPodAffinityWeight``) and their preferred affinity (+weight) and
  anti-affinity (-weight) terms. Skip when no term met a pod on a node with its key
  (or with ``ignorePreferredTermsOfExistingPods`` when the pod has no preferred term).
* **Score** is the sum over the node's pairs; **NormalizeScore** maps the scored
  nodes' min..max onto 0..100.

Nothing here walks the placed pods: the counts come from ``AffinityIndex`` (kept
current by the cache) and are projected onto topology values with the node table's
label columns, one ``bincount`` per term. A map is held as one array per topology
key over that key's value ids, with a zero pad at the end so that ``array[ids]`` reads
0 for nodes without the label (their id is -1).

Inside a pod-group cycle upstream reads existing pods' terms through its snapshot's lists
of nodes with such pods (PreFilter's existing anti-affinity; PreScore when the incoming pod
has no preferred term), which the cycle's assumed members do not join: a member on a node
not already listed is invisible there, though the incoming pod's own terms see it. The
snapshot's ``pod_group_cycle_lists`` names those members, and their terms are taken out.

The plugin class is here; PreFilter/Filter are in ``filtering.py``, PreScore/Score in
``scoring.py``, the queueing hints in ``hints.py``, the topology maps in
``topology_counts.py``, the name and reasons in ``names.py``.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ...framework.cycle_state import CycleState
from ...framework.events import ClusterEventWithHint, QueueingHint
from ...framework.handle import Handle
from ...framework.interfaces import NodeVerdicts, PreFilterResult
from ...framework.signing import LABELS_SIGNER, UNSIGNED_NAMESPACE, SignFragment, UnsignedRead, labels_signer
from ...framework.status import SKIP, Code, Status
from ...framework.views import BoolArray, IntArray, NodeTableView, RowArray, SnapshotView
from ...objects.nodeinfo import NodeInfo
from ...objects.pod import PodInfo
from .args import InterPodAffinityArgs
from .filtering import PRE_FILTER_STATE_KEY, filter_node, filter_state, filter_verdicts, read_filter_state, update_with_pod
from .hints import affinity_events, assigned_pod_change_hint, node_change_hint
from .index import AffinityIndex, index_for
from .names import (
    ERR_REASON_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH,
    ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH,
    NAME,
)
from .scoring import PRE_SCORE_STATE_KEY, normalize_scores, read_score_state, score_node, score_rows, score_state
from .topology_counts import TopologyCounts

__all__ = [
    "NAME",
    "InterPodAffinity",
    "TopologyCounts",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "new",
]


UNSIGNED_LABELS = UnsignedRead(
    "labels",
    "with ignorePreferredTermsOfExistingPods upstream's InterPodAffinity signs no labels, reasoning that only "
    "pods with terms of their own matter; existing pods' required anti-affinity terms still read them",
    lambda pod: pod.copy_with(labels={}),
)


class InterPodAffinity:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: a pod that sets pod affinity or anti-affinity (even with no
        term) depends on where other pods are and has no signature; any other pod is still
        matched by existing pods' terms through its labels, which upstream signs unless those
        pods' preferred terms are ignored (``upstream_unsigned_reads``)."""
        if pod.pod_affinity.declared or not pod.pod_affinity.is_empty():
            return [], Status(Code.UNSCHEDULABLE, "pods with InterPodAffinity are not signable")
        if self.args.ignore_preferred_terms_of_existing_pods:
            return [], None
        return [SignFragment(LABELS_SIGNER, labels_signer(pod))], None

    @property
    def upstream_unsigned_reads(self) -> tuple[UnsignedRead, ...]:
        """Upstream signs no namespace, though existing pods' terms select pods by namespace;
        with their preferred terms ignored it signs no labels either, though their required
        anti-affinity terms still reject nodes for this pod by its labels."""
        if self.args.ignore_preferred_terms_of_existing_pods:
            return (UNSIGNED_NAMESPACE, UNSIGNED_LABELS)
        return (UNSIGNED_NAMESPACE,)

    def __init__(self, args: InterPodAffinityArgs, handle: Handle) -> None:
        self.args = args
        self._snapshot = handle.snapshot()
        self.index: AffinityIndex = index_for(handle)

    def _namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return self._snapshot.namespace_labels(namespace)

    def _table(self, snapshot: SnapshotView) -> NodeTableView:
        table = snapshot.table
        if table is not self._snapshot.table:
            raise RuntimeError(f"{NAME}: the snapshot is not of the cache this plugin indexes")
        return table

    # -- PreFilter ----------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView
    ) -> tuple[PreFilterResult | None, Status | None]:
        table = self._table(snapshot)
        aff = pod.pod_affinity
        if not aff.required_affinity and not aff.required_anti_affinity and not self.index.has_terms():
            return None, SKIP  # filter_state's None: no term of its own, none placed to meet
        lists = snapshot.pod_group_cycle_lists()
        unlisted = lists.unlisted_required_anti_affinity_pods() if lists is not None else ()
        s = filter_state(self.index, table, pod, snapshot.namespace_labels(pod.namespace), unlisted)
        if s is None:
            return None, SKIP
        state.write(PRE_FILTER_STATE_KEY, s)
        return None, None

    # PreFilterExtensions: what preemption's what-if evaluation adds and removes.
    def add_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        return self._update_with_pod(state, pod_to_add, node, 1)

    def remove_pod(
        self, state: CycleState, pod_to_schedule: PodInfo, pod_to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        return self._update_with_pod(state, pod_to_remove, node, -1)

    def _update_with_pod(self, state: CycleState, other: PodInfo, node: NodeInfo, sign: int) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is not None:
            update_with_pod(s, other, node, sign, self._namespace_labels)
        return None

    # -- Filter -------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        try:
            s = read_filter_state(state)
        except RuntimeError as err:
            return Status.as_error(err)
        return filter_node(s, node)

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, candidates: BoolArray
    ) -> NodeVerdicts:
        return filter_verdicts(read_filter_state(state), snapshot.table)

    # -- PreScore / Score ---------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> Status | None:
        table = self._table(snapshot)
        aff = pod.pod_affinity
        has_constraints = bool(aff.preferred_affinity or aff.preferred_anti_affinity)
        if not has_constraints and (self.args.ignore_preferred_terms_of_existing_pods or not self.index.has_terms()):
            return SKIP  # (score_state's None when no placed pod declares a term)
        lists = snapshot.pod_group_cycle_lists() if not has_constraints else None
        unlisted = lists.unlisted_affinity_pods() if lists is not None else ()
        s = score_state(self.index, table, pod, self.args.hard_pod_affinity_weight, unlisted)
        if s is None:
            return SKIP
        state.write(PRE_SCORE_STATE_KEY, s)
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return score_node(read_score_state(state), node)

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        return score_rows(read_score_state(state), snapshot.table, rows)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: IntArray) -> IntArray:
        """Min-max onto 0..100 in float64, truncated, exactly as upstream's arithmetic."""
        scores = np.asarray(scores, dtype=np.int64)
        if state.get(PRE_SCORE_STATE_KEY) is None or len(scores) == 0:
            return scores
        return normalize_scores(scores)

    # -- queueing hints -----------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return affinity_events(self._hint_assigned_pod_change, self._hint_node_change)

    def _hint_assigned_pod_change(self, pod: PodInfo, old_obj: object | None, new_obj: object | None) -> QueueingHint:
        return assigned_pod_change_hint(pod, old_obj, new_obj, self._namespace_labels)

    def _hint_node_change(self, pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
        return node_change_hint(pod, old, new)


def new(args: InterPodAffinityArgs | None, handle: Handle | None) -> InterPodAffinity:
    if handle is None:
        raise ValueError(f"{NAME} needs a handle: it indexes the pods placed on nodes")
    return InterPodAffinity(args if args is not None else InterPodAffinityArgs(), handle)
