"""Preemption (upstream's ``pkg/scheduler/framework/preemption``): the evaluator a
PostFilter plugin drives, filtering with nominated pods, victims, budgets; and the pod-group
evaluator a PodGroupPostFilter plugin drives (workload-aware preemption)."""

from .evaluator import (
    NOT_HELPFUL_REASON,
    PREEMPTION_OUTCOME,
    Candidate,
    CandidateFilter,
    Evaluator,
    PreemptionOutcome,
    fit_error_message,
    pick_candidates,
)
from .nominated import (
    NominatedPods,
    apply_nominated_pods,
    clone_node_info,
    run_filter_plugins,
    run_filters_with_nominated_pods,
)
from .podgroup import (
    GROUP_NOT_ELIGIBLE_NEVER,
    NO_GROUP_VICTIMS,
    GroupPreemptor,
    PodGroupEvaluator,
    PodGroupLookup,
    Victim,
    domain_victims,
    group_preemptor,
    more_important_victim,
    pod_group_priority,
    preemptible_group,
    split_victims_by_pdb_violation,
)
from .pdb import PDB_API_VERSION, PDB_KIND, PDB_PLURAL, DisruptionBudget, parse_pdb, split_by_pdb_violation
from .victims import NO_VICTIMS_REASON, VictimSelection, importance_key, more_important, select_victims_on_node, started

__all__ = [
    "GROUP_NOT_ELIGIBLE_NEVER",
    "NO_GROUP_VICTIMS",
    "GroupPreemptor",
    "PodGroupEvaluator",
    "PodGroupLookup",
    "Victim",
    "domain_victims",
    "group_preemptor",
    "more_important_victim",
    "pod_group_priority",
    "preemptible_group",
    "split_victims_by_pdb_violation",
    "NOT_HELPFUL_REASON",
    "NO_VICTIMS_REASON",
    "PREEMPTION_OUTCOME",
    "PDB_API_VERSION",
    "PDB_KIND",
    "PDB_PLURAL",
    "Candidate",
    "CandidateFilter",
    "DisruptionBudget",
    "Evaluator",
    "NominatedPods",
    "PreemptionOutcome",
    "VictimSelection",
    "apply_nominated_pods",
    "clone_node_info",
    "fit_error_message",
    "importance_key",
    "more_important",
    "started",
    "parse_pdb",
    "pick_candidates",
    "run_filter_plugins",
    "run_filters_with_nominated_pods",
    "select_victims_on_node",
    "split_by_pdb_violation",
]
