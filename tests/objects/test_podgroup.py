"""``parse_pod_group`` and ``parse_workload``: the records the scheduler reads, as the API server stores them."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.errors import ObjectError
from kubesched.objects.podgroup import (
    PodGroupCondition,
    PodGroupResourceClaim,
    PodGroupTemplate,
    parse_pod_group,
    parse_workload,
)


def gang(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
        "metadata": {"name": "train", "namespace": "ml", "uid": "u-1", "generation": 3, "resourceVersion": "42",
                     "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 4}}, **spec},
    }


def test_a_gang_reads_its_min_count_and_identity() -> None:
    group = parse_pod_group(gang())
    assert (group.key, group.uid, group.generation, group.resource_version) == ("ml/train", "u-1", 3, "42")
    assert group.min_count == 4 and group.is_gang
    assert group.creation_timestamp == "2026-01-01T00:00:00Z"


def test_a_basic_group_has_no_min_count() -> None:
    group = parse_pod_group(gang(schedulingPolicy={"basic": {}}))
    assert group.min_count is None and not group.is_gang


def test_disruption_mode_defaults_to_pod_as_the_api_server_defaults_it() -> None:
    assert parse_pod_group(gang()).disruption_mode == "Pod"
    assert parse_pod_group(gang(disruptionMode="PodGroup")).disruption_mode == "PodGroup"


def test_topology_keys_and_whether_constraints_are_present() -> None:
    group = parse_pod_group(gang(schedulingConstraints={"topology": [{"key": "example.com/rack"}]}))
    assert group.topology_keys == ("example.com/rack",) and group.has_scheduling_constraints
    empty = parse_pod_group(gang(schedulingConstraints={}))
    assert empty.topology_keys == () and empty.has_scheduling_constraints
    assert not parse_pod_group(gang()).has_scheduling_constraints


def test_template_reference_priority_and_claims() -> None:
    group = parse_pod_group(gang(
        podGroupTemplateRef={"workload": {"workloadName": "job", "podGroupTemplateName": "workers"}},
        priorityClassName="high", priority=1000,
        resourceClaims=[{"name": "gpus", "resourceClaimTemplateName": "gpu-template"}]))
    assert (group.workload_name, group.template_name) == ("job", "workers")
    assert (group.priority_class_name, group.priority) == ("high", 1000)
    assert group.resource_claims == (PodGroupResourceClaim("gpus", None, "gpu-template"),)


def test_status_conditions_and_claim_statuses() -> None:
    obj = gang(resourceClaims=[{"name": "gpus", "resourceClaimTemplateName": "t"}])
    obj["status"] = {
        "conditions": [{"type": "PodGroupScheduled", "status": "False", "reason": "Unschedulable", "message": "m",
                        "observedGeneration": 3, "lastTransitionTime": "2026-01-01T00:00:01Z"}],
        "resourceClaimStatuses": [{"name": "gpus", "resourceClaimName": "train-gpus-x7"}],
    }
    group = parse_pod_group(obj)
    assert group.condition("PodGroupScheduled") == PodGroupCondition(
        "PodGroupScheduled", "False", "Unschedulable", "m", 3, "2026-01-01T00:00:01Z")
    assert group.resource_claim_statuses == (("gpus", "train-gpus-x7"),)


def test_a_missing_namespace_is_the_default_one() -> None:
    obj = gang()
    del obj["metadata"]["namespace"]
    assert parse_pod_group(obj).namespace == "default"


def test_raw_is_kept_only_when_asked() -> None:
    obj = gang()
    assert parse_pod_group(obj).raw is obj
    assert parse_pod_group(obj, keep_raw=False).raw is None


def test_an_invalid_group_raises_naming_the_first_bad_field() -> None:
    with pytest.raises(ObjectError) as err:
        parse_pod_group(gang(schedulingPolicy={"gang": {"minCount": 0}}, resourceClaims=[{"name": "x"}]))
    assert (err.value.field, err.value.message) == ("spec.schedulingPolicy.gang.minCount", "Required value")


def test_gates_decide_which_fields_are_refused() -> None:
    obj = gang(schedulingConstraints={"topology": [{"key": "rack"}]})
    with pytest.raises(ObjectError, match="spec.schedulingConstraints: Forbidden"):
        parse_pod_group(obj, gates=frozenset())


def workload(*templates: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
            "metadata": {"name": "job", "namespace": "ml", "uid": "w-1"},
            "spec": {"podGroupTemplates": list(templates), **spec}}


def test_a_workload_reads_its_templates_in_order() -> None:
    parsed = parse_workload(workload(
        {"name": "leader", "schedulingPolicy": {"basic": {}}},
        {"name": "workers", "schedulingPolicy": {"gang": {"minCount": 8}},
         "schedulingConstraints": {"topology": [{"key": "example.com/rack"}]}, "disruptionMode": "PodGroup",
         "priorityClassName": "high", "priority": 7,
         "resourceClaims": [{"name": "net", "resourceClaimName": "fabric"}]},
        controllerRef={"apiGroup": "batch", "kind": "Job", "name": "job"}))
    assert parsed.key == "ml/job" and parsed.uid == "w-1"
    assert parsed.controller_ref == ("batch", "Job", "job")
    assert parsed.templates == (
        PodGroupTemplate("leader", None),
        PodGroupTemplate("workers", 8, ("example.com/rack",), (PodGroupResourceClaim("net", "fabric"),), "PodGroup",
                         "high", 7, has_scheduling_constraints=True),
    )


def test_a_workload_without_templates_is_refused() -> None:
    with pytest.raises(ObjectError) as err:
        parse_workload(workload())
    assert str(err.value) == "spec.podGroupTemplates: Required value"
