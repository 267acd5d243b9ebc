"""What PreFilter/Filter and PreScore/Score share: compiled constraints and small numeric helpers.

A ``Constraint`` is a pod's ``topologySpreadConstraint`` as the plugin uses it
(upstream's internal ``topologySpreadConstraint``): the label selector already
merged with the pod's values for ``matchLabelKeys``, ``minDomains`` defaulted to 1,
the two node inclusion policies as booleans.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from ...framework.views import IntArray
from ...objects.affinity import TopologySpreadConstraint
from ...objects.selectors import LabelSelector, Requirement

__all__ = [
    "DO_NOT_SCHEDULE",
    "HOSTNAME_LABEL",
    "MAX_INT32",
    "SCHEDULE_ANYWAY",
    "ZONE_LABEL",
    "Constraint",
    "canonical_selector",
    "compile_constraints",
    "counts_pods",
    "go_log",
    "go_round",
    "merge_match_labels",
    "node_has_all_keys",
]

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
MAX_INT32 = 2**31 - 1


@dataclass(slots=True, frozen=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int
    honor_node_affinity: bool  # nodeAffinityPolicy: Honor
    honor_node_taints: bool  # nodeTaintsPolicy: Honor


def _requirement_order(req: Requirement) -> tuple[str, str, tuple[str, ...], int]:
    return (req.key, req.operator, tuple(sorted(req.values)), req.number)


def canonical_selector(requirements: Iterable[Requirement]) -> LabelSelector:
    """A selector of ANDed requirements in one canonical form, so equal selectors hash equal.

    Requirements are ANDed, so their order and repetitions do not change what matches.
    """
    return LabelSelector(tuple(sorted(set(requirements), key=_requirement_order)))


def merge_match_labels(selector: LabelSelector, keys: tuple[str, ...], pod_labels: Mapping[str, str]) -> LabelSelector:
    """``mergeLabelSetWithSelector``: AND the pod's own values for ``keys`` into the selector.

    Keys the pod does not carry are ignored; a selector that matches nothing (no
    ``labelSelector`` at all) stays one that matches nothing.
    """
    pairs = [(k, pod_labels[k]) for k in keys if k in pod_labels]
    if not pairs or selector.nothing:
        return selector
    added = [Requirement(k, "In", frozenset((v,))) for k, v in pairs]
    return canonical_selector(added + list(selector.requirements))


def counts_pods(selector: LabelSelector) -> bool:
    """``countPodsMatchSelector`` counts nothing for an empty selector (and one matching nothing)."""
    return not selector.nothing and bool(selector.requirements)


def compile_constraints(
    raw: Iterable[TopologySpreadConstraint],
    pod_labels: Mapping[str, str],
    action: str,
    match_label_keys: bool = True,
) -> tuple[Constraint, ...]:
    """``filterTopologySpreadConstraints``: the constraints with ``whenUnsatisfiable == action``."""
    out: list[Constraint] = []
    for c in raw:
        if c.when_unsatisfiable != action:
            continue
        selector = c.selector
        if match_label_keys and c.match_label_keys:
            selector = merge_match_labels(selector, c.match_label_keys, pod_labels)
        out.append(
            Constraint(
                max_skew=c.max_skew,
                topology_key=c.topology_key,
                selector=selector,
                min_domains=c.min_domains if c.min_domains is not None else 1,
                honor_node_affinity=c.node_affinity_policy == "Honor",
                honor_node_taints=c.node_taints_policy == "Honor",
            )
        )
    return tuple(out)


def node_has_all_keys(labels: Mapping[str, str], constraints: Iterable[Constraint]) -> bool:
    """``nodeLabelsMatchSpreadConstraints``."""
    return all(c.topology_key in labels for c in constraints)


# -- Go's float64 arithmetic --------------------------------------------------
# Go's math.Log (FreeBSD's e_log.c, also what the amd64 assembly computes) differs
# from the C library's log in the last bit for some arguments; the spreading score
# multiplies it by pod counts and rounds, so use Go's.
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG = (
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
)
_SQRT2_HALF = math.sqrt(2) / 2


@lru_cache(maxsize=16384)
def go_log(x: float) -> float:
    """Natural logarithm of a positive finite ``x``, bit for bit as Go's ``math.Log``."""
    if x <= 0 or math.isinf(x) or math.isnan(x):
        return math.log(x) if x > 0 else float("-inf") if x == 0 else float("nan")
    frac, exp = math.frexp(x)
    if frac < _SQRT2_HALF:
        frac *= 2
        exp -= 1
    f = frac - 1
    k = float(exp)
    s = f / (2 + f)
    s2 = s * s
    s4 = s2 * s2
    l1, l2, l3, l4, l5, l6, l7 = _LG
    t1 = s2 * (l1 + s4 * (l3 + s4 * (l5 + s4 * l7)))
    t2 = s4 * (l2 + s4 * (l4 + s4 * l6))
    r = t1 + t2
    hfsq = 0.5 * f * f
    return k * _LN2_HI - ((hfsq - (s * (hfsq + r) + k * _LN2_LO)) - f)


def go_round(values: npt.NDArray[np.float64]) -> IntArray:
    """Go's ``math.Round`` (half away from zero) of non-negative floats, as int64."""
    floor = np.floor(values)
    return (floor + (values - floor >= 0.5)).astype(np.int64)
