"""Pod (anti-)affinity terms and topology spread constraints, compiled."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any

from .errors import ObjectError
from .selectors import LabelSelector, parse_label_selector

__all__ = [
    "AffinityTerm",
    "WeightedAffinityTerm",
    "PodAffinity",
    "TopologySpreadConstraint",
    "parse_pod_affinity",
    "parse_topology_spread_constraints",
    "node_affinity_of",
    "NO_POD_AFFINITY",
]


@dataclass(slots=True, frozen=True)
class AffinityTerm:
    """``framework.AffinityTerm``: which pods a term selects, and over which topology.

    ``namespaces`` is the explicit list (the pod's own namespace when the term names
    neither namespaces nor a namespace selector); ``namespace_selector`` is NOTHING
    when the term has none.
    """

    selector: LabelSelector
    namespaces: frozenset[str]
    namespace_selector: LabelSelector
    topology_key: str

    def matches(self, namespace: str, labels: Mapping[str, str], namespace_labels: Mapping[str, str] | None) -> bool:
        if namespace in self.namespaces or (
            namespace_labels is not None and self.namespace_selector.matches(namespace_labels)
        ):
            return self.selector.matches(labels)
        return False


@dataclass(slots=True, frozen=True)
class WeightedAffinityTerm:
    weight: int
    term: AffinityTerm


@dataclass(slots=True, frozen=True)
class PodAffinity:
    """A pod's required and preferred affinity and anti-affinity terms."""

    required_affinity: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedAffinityTerm, ...] = ()
    required_anti_affinity: tuple[AffinityTerm, ...] = ()
    preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = ()
    # Whether the pod sets ``podAffinity`` or ``podAntiAffinity`` at all, even with no terms:
    # upstream's InterPodAffinity refuses to sign such a pod (OpportunisticBatching).
    declared: bool = False

    def is_empty(self) -> bool:
        return not (
            self.required_affinity or self.preferred_affinity or self.required_anti_affinity or self.preferred_anti_affinity
        )


NO_POD_AFFINITY = PodAffinity()
DECLARED_EMPTY = PodAffinity(declared=True)  # ``podAffinity: {}``: no term, yet not signable


def _term(raw: Any, path: str, namespace: str) -> AffinityTerm:
    if not isinstance(raw, Mapping):
        raise ObjectError(path, "must be a pod affinity term")
    key = raw.get("topologyKey")
    if not isinstance(key, str) or not key:
        raise ObjectError(f"{path}.topologyKey", "must be a non-empty string")
    names = raw.get("namespaces") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ObjectError(f"{path}.namespaces", "must be a list of strings")
    ns_selector_raw = raw.get("namespaceSelector")
    if not names and ns_selector_raw is None:
        names = [namespace]
    return AffinityTerm(
        selector=parse_label_selector(raw.get("labelSelector"), f"{path}.labelSelector"),
        namespaces=frozenset(names),
        namespace_selector=parse_label_selector(ns_selector_raw, f"{path}.namespaceSelector"),
        topology_key=key,
    )


def _terms(raw: Any, path: str, namespace: str) -> tuple[AffinityTerm, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ObjectError(path, "must be a list")
    return tuple(_term(t, f"{path}[{i}]", namespace) for i, t in enumerate(raw))


def _weighted(raw: Any, path: str, namespace: str) -> tuple[WeightedAffinityTerm, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ObjectError(path, "must be a list")
    out = []
    for i, item in enumerate(raw):
        p = f"{path}[{i}]"
        if not isinstance(item, Mapping):
            raise ObjectError(p, "must be a weighted pod affinity term")
        weight = item.get("weight", 0)
        if not isinstance(weight, int) or isinstance(weight, bool) or not 1 <= weight <= 100:
            raise ObjectError(f"{p}.weight", "must be an integer in the range 1-100")
        out.append(WeightedAffinityTerm(weight, _term(item.get("podAffinityTerm"), f"{p}.podAffinityTerm", namespace)))
    return tuple(out)


def parse_pod_affinity(affinity: Mapping[str, Any] | None, path: str, namespace: str) -> PodAffinity:
    if not affinity:
        return NO_POD_AFFINITY
    aff_raw, anti_raw = affinity.get("podAffinity"), affinity.get("podAntiAffinity")
    if aff_raw is None and anti_raw is None:
        return NO_POD_AFFINITY
    aff = aff_raw or {}
    anti = anti_raw or {}
    if not aff and not anti:
        return DECLARED_EMPTY
    req, pref = "requiredDuringSchedulingIgnoredDuringExecution", "preferredDuringSchedulingIgnoredDuringExecution"
    return PodAffinity(
        required_affinity=_terms(aff.get(req), f"{path}.podAffinity.{req}", namespace),
        preferred_affinity=_weighted(aff.get(pref), f"{path}.podAffinity.{pref}", namespace),
        required_anti_affinity=_terms(anti.get(req), f"{path}.podAntiAffinity.{req}", namespace),
        preferred_anti_affinity=_weighted(anti.get(pref), f"{path}.podAntiAffinity.{pref}", namespace),
        declared=True,
    )


@dataclass(slots=True, frozen=True)
class TopologySpreadConstraint:
    """A ``v1.TopologySpreadConstraint`` as written on the pod (selector not yet merged)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    selector: LabelSelector
    min_domains: int | None
    node_affinity_policy: str  # Honor | Ignore
    node_taints_policy: str  # Honor | Ignore
    match_label_keys: tuple[str, ...]


def parse_topology_spread_constraints(raw: Any, path: str) -> tuple[TopologySpreadConstraint, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ObjectError(path, "must be a list")
    out = []
    for i, item in enumerate(raw):
        p = f"{path}[{i}]"
        if not isinstance(item, Mapping):
            raise ObjectError(p, "must be a topology spread constraint")
        max_skew = item.get("maxSkew")
        if not isinstance(max_skew, int) or isinstance(max_skew, bool) or max_skew <= 0:
            raise ObjectError(f"{p}.maxSkew", "must be greater than zero")
        key = item.get("topologyKey")
        if not isinstance(key, str) or not key:
            raise ObjectError(f"{p}.topologyKey", "must be a non-empty string")
        when = item.get("whenUnsatisfiable")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            raise ObjectError(f"{p}.whenUnsatisfiable", f"unsupported value {when!r}; valid: DoNotSchedule, ScheduleAnyway")
        min_domains = item.get("minDomains")
        if min_domains is not None and (not isinstance(min_domains, int) or min_domains <= 0):
            raise ObjectError(f"{p}.minDomains", "must be greater than zero")
        policies = []
        for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = item.get(name)
            if value is not None and value not in ("Honor", "Ignore"):
                raise ObjectError(f"{p}.{name}", f"unsupported value {value!r}; valid: Honor, Ignore")
            policies.append(value)
        keys = item.get("matchLabelKeys") or []
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise ObjectError(f"{p}.matchLabelKeys", "must be a list of strings")
        out.append(
            TopologySpreadConstraint(
                max_skew=max_skew,
                topology_key=key,
                when_unsatisfiable=when,
                selector=parse_label_selector(item.get("labelSelector"), f"{p}.labelSelector"),
                min_domains=min_domains,
                node_affinity_policy=policies[0] or "Honor",
                node_taints_policy=policies[1] or "Ignore",
                match_label_keys=tuple(keys),
            )
        )
    return tuple(out)


def node_affinity_of(affinity: Mapping[str, Any] | None) -> tuple[Any, Any]:
    """The raw required and preferred node affinity of ``spec.affinity``."""
    node_aff = (affinity or {}).get("nodeAffinity") or {}
    return (
        node_aff.get("requiredDuringSchedulingIgnoredDuringExecution"),
        node_aff.get("preferredDuringSchedulingIgnoredDuringExecution"),
    )

