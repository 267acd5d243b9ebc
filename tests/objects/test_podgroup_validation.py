"""PodGroup, Workload and ``Pod.spec.schedulingGroup`` refused as v1.36's API server refuses them.

The cases are upstream's (``pkg/registry/scheduling/{podgroup,workload}/declarative_validation_test.go``
and ``TestValidatePodSchedulingGroup``), with the messages the API server prints. Upstream's
case "valid pod group without disruption mode, workload aware preemption enabled" (Required)
is not here: it skips defaulting, and a stored PodGroup always has ``disruptionMode``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from kubesched.objects.podgroup_validation import (
    ALL_GATES,
    pod_group_problems,
    scheduling_group_problems,
    workload_problems,
)

Obj = dict[str, Any]
NO_GATES: frozenset[str] = frozenset()
TAS = frozenset({"TopologyAwareWorkloadScheduling"})
WAP = frozenset({"WorkloadAwarePreemption"})

SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
             "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation "
             "is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
         "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
KEY_NAME = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
            "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


def pod_group(*tweaks: Callable[[Obj], None]) -> Obj:
    """upstream's mkValidPodGroup: a gang of 5 made from template ``template`` of ``workload``."""
    obj: Obj = {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "PodGroup",
        "metadata": {"name": "podgroup", "namespace": "ns"},
        "spec": {"podGroupTemplateRef": {"workload": {"workloadName": "workload", "podGroupTemplateName": "template"}},
                 "schedulingPolicy": {"gang": {"minCount": 5}}},
    }
    for tweak in tweaks:
        tweak(obj)
    return obj


def spec_set(key: str, value: Any) -> Callable[[Obj], None]:
    def tweak(obj: Obj) -> None:
        obj["spec"][key] = copy.deepcopy(value)
    return tweak


def spec_drop(key: str) -> Callable[[Obj], None]:
    def tweak(obj: Obj) -> None:
        obj["spec"].pop(key, None)
    return tweak


def template_ref(template: str, workload: str) -> Callable[[Obj], None]:
    return spec_set("podGroupTemplateRef", {"workload": {"workloadName": workload, "podGroupTemplateName": template}})


def min_count(n: int) -> Callable[[Obj], None]:
    return spec_set("schedulingPolicy", {"gang": {"minCount": n}})


def topology(*keys: str) -> Callable[[Obj], None]:
    return spec_set("schedulingConstraints", {"topology": [{"key": k} for k in keys]})


def claims(*entries: Obj) -> Callable[[Obj], None]:
    return spec_set("resourceClaims", list(entries))


TOPOLOGY_KEY = "spec.schedulingConstraints.topology[0].key"

POD_GROUP_CASES: list[tuple[str, Obj, frozenset[str], list[tuple[str, str]]]] = [
    ("valid", pod_group(), NO_GATES, []),
    ("valid with basic policy", pod_group(spec_set("schedulingPolicy", {"basic": {}})), NO_GATES, []),
    ("gang minCount zero", pod_group(min_count(0)), NO_GATES,
     [("spec.schedulingPolicy.gang.minCount", "Required value")]),
    ("gang minCount negative", pod_group(min_count(-1)), NO_GATES,
     [("spec.schedulingPolicy.gang.minCount", "Invalid value: -1: must be greater than or equal to 1")]),
    ("no podGroupTemplateRef", pod_group(spec_drop("podGroupTemplateRef")), NO_GATES, []),
    ("empty podGroupTemplateRef", pod_group(spec_set("podGroupTemplateRef", {})), NO_GATES,
     [("spec.podGroupTemplateRef", 'Invalid value: "": must specify one of: `workload`')]),
    ("podGroupTemplateRef with empty template name", pod_group(template_ref("", "workload")), NO_GATES,
     [("spec.podGroupTemplateRef.workload.podGroupTemplateName", "Required value")]),
    ("podGroupTemplateRef invalid template name", pod_group(template_ref("temp/late", "workload")), NO_GATES,
     [("spec.podGroupTemplateRef.workload.podGroupTemplateName", f'Invalid value: "temp/late": {LABEL}')]),
    ("podGroupTemplateRef with empty workload name", pod_group(template_ref("template", "")), NO_GATES,
     [("spec.podGroupTemplateRef.workload.workloadName", "Required value")]),
    ("podGroupTemplateRef invalid workload name", pod_group(template_ref("template", "work/load")), NO_GATES,
     [("spec.podGroupTemplateRef.workload.workloadName", f'Invalid value: "work/load": {SUBDOMAIN}')]),
    ("podGroupTemplateRef too long workload name", pod_group(template_ref("template", "g" * 254)), NO_GATES,
     [("spec.podGroupTemplateRef.workload.workloadName", f'Invalid value: "{"g" * 254}": must be no more than 253 bytes')]),
    ("podGroupTemplateRef too long template name", pod_group(template_ref("g" * 254, "workload")), NO_GATES,
     [("spec.podGroupTemplateRef.workload.podGroupTemplateName", f'Invalid value: "{"g" * 254}": must be no more than 63 bytes')]),
    ("policy with neither basic nor gang", pod_group(spec_set("schedulingPolicy", {})), NO_GATES,
     [("spec.schedulingPolicy", 'Invalid value: "": must specify one of: `basic`, `gang`')]),
    ("policy with both basic and gang", pod_group(spec_set("schedulingPolicy", {"basic": {}, "gang": {"minCount": 1}})),
     NO_GATES, [("spec.schedulingPolicy", 'Invalid value: "{basic, gang}": must specify exactly one of: `basic`, `gang`')]),
    ("with schedulingConstraints and TAS disabled", pod_group(topology("foo")), NO_GATES,
     [("spec.schedulingConstraints", "Forbidden")]),
    ("valid with schedulingConstraints", pod_group(topology("foo")), TAS, []),
    ("schedulingConstraints with multiple topology constraints", pod_group(topology("foo", "bar")), TAS,
     [("spec.schedulingConstraints.topology", "Too many: 2: must have at most 1 item")]),
    ("valid with empty schedulingConstraints", pod_group(spec_set("schedulingConstraints", {})), TAS, []),
    ("topologyConstraint with empty topology key", pod_group(topology("")), TAS, [(TOPOLOGY_KEY, "Required value")]),
    ("valid with topology key with DNS prefix", pod_group(topology("example.com/Foo")), TAS, []),
    ("valid with topology key with prefix with max length", pod_group(topology("a" * 253 + "/" + "b" * 63)), TAS, []),
    ("with topology key with prefix exceeding max prefix length", pod_group(topology("a" * 254 + "/foo")), TAS,
     [(TOPOLOGY_KEY, f'Invalid value: "{"a" * 254}/foo": prefix part must be no more than 253 bytes')]),
    ("with topology key with prefix exceeding max name length", pod_group(topology("foo/" + "b" * 64)), TAS,
     [(TOPOLOGY_KEY, f'Invalid value: "foo/{"b" * 64}": name part must be no more than 63 bytes')]),
    ("with topology key without prefix exceeding max length", pod_group(topology("b" * 64)), TAS,
     [(TOPOLOGY_KEY, f'Invalid value: "{"b" * 64}": name part must be no more than 63 bytes')]),
    ("with topology key with invalid characters", pod_group(topology("Example.com/Foo")), TAS,
     [(TOPOLOGY_KEY, f'Invalid value: "Example.com/Foo": prefix part {SUBDOMAIN}')]),
    ("pod disruption mode, workload aware preemption enabled", pod_group(spec_set("disruptionMode", "Pod")), WAP, []),
    ("pod disruption mode, workload aware preemption disabled", pod_group(spec_set("disruptionMode", "Pod")), NO_GATES,
     [("spec.disruptionMode", "Forbidden")]),
    ("pod group disruption mode, workload aware preemption enabled", pod_group(spec_set("disruptionMode", "PodGroup")),
     WAP, []),
    ("pod group disruption mode, workload aware preemption disabled", pod_group(spec_set("disruptionMode", "PodGroup")),
     NO_GATES, [("spec.disruptionMode", "Forbidden")]),
    ("invalid disruption mode, workload aware preemption enabled", pod_group(spec_set("disruptionMode", "Invalid")), WAP,
     [("spec.disruptionMode", 'Unsupported value: "Invalid": supported values: "Pod", "PodGroup"')]),
    ("invalid disruption mode, workload aware preemption disabled", pod_group(spec_set("disruptionMode", "Invalid")),
     NO_GATES, [("spec.disruptionMode", "Forbidden")]),
    ("valid priority class name, workload aware preemption enabled",
     pod_group(spec_set("disruptionMode", "Pod"), spec_set("priorityClassName", "high-priority")), WAP, []),
    ("valid priority class name, workload aware preemption disabled",
     pod_group(spec_set("priorityClassName", "high-priority")), NO_GATES, [("spec.priorityClassName", "Forbidden")]),
    ("invalid priority class name, workload aware preemption enabled",
     pod_group(spec_set("disruptionMode", "Pod"), spec_set("priorityClassName", "high/priority")), WAP,
     [("spec.priorityClassName", f'Invalid value: "high/priority": {SUBDOMAIN}')]),
    ("invalid priority class name, workload aware preemption disabled",
     pod_group(spec_set("priorityClassName", "high/priority")), NO_GATES, [("spec.priorityClassName", "Forbidden")]),
    ("valid priority, workload aware preemption enabled",
     pod_group(spec_set("disruptionMode", "Pod"), spec_set("priority", 1000)), WAP, []),
    ("valid priority, workload aware preemption disabled", pod_group(spec_set("priority", 1000)), NO_GATES,
     [("spec.priority", "Forbidden")]),
    ("valid negative priority, workload aware preemption enabled",
     pod_group(spec_set("disruptionMode", "Pod"), spec_set("priority", -2147483648)), WAP, []),
    ("valid negative priority, workload aware preemption disabled", pod_group(spec_set("priority", -2147483648)),
     NO_GATES, [("spec.priority", "Forbidden")]),
    ("too high priority, workload aware preemption enabled",
     pod_group(spec_set("disruptionMode", "Pod"), spec_set("priority", 1_000_000_001)), WAP,
     [("spec.priority", "Invalid value: 1000000001: must be less than or equal to 1000000000")]),
    ("too high priority, workload aware preemption disabled", pod_group(spec_set("priority", 1_000_000_001)),
     NO_GATES, [("spec.priority", "Forbidden")]),
    ("ok resourceClaimName reference", pod_group(claims({"name": "claim", "resourceClaimName": "resource-claim"})),
     NO_GATES, []),
    ("ok resourceClaimTemplateName reference",
     pod_group(claims({"name": "claim", "resourceClaimTemplateName": "resource-claim-template"})), NO_GATES, []),
    ("ok multiple claims", pod_group(claims({"name": "claim-1", "resourceClaimName": "resource-claim-1"},
                                            {"name": "claim-2", "resourceClaimName": "resource-claim-2"})), NO_GATES, []),
    ("claim name with prefix", pod_group(claims({"name": "../my-claim", "resourceClaimName": "resource-claim"})), NO_GATES,
     [("spec.resourceClaims[0].name", f'Invalid value: "../my-claim": {LABEL}')]),
    ("claim name with path", pod_group(claims({"name": "my/claim", "resourceClaimName": "resource-claim"})), NO_GATES,
     [("spec.resourceClaims[0].name", f'Invalid value: "my/claim": {LABEL}')]),
    ("duplicate claim entries", pod_group(claims({"name": "my-claim", "resourceClaimName": "resource-claim-1"},
                                                 {"name": "my-claim", "resourceClaimName": "resource-claim-2"})), NO_GATES,
     [("spec.resourceClaims[1]", 'Duplicate value: {"name":"my-claim","resourceClaimName":"resource-claim-2"}')]),
    ("resource claim source empty", pod_group(claims({"name": "my-claim"})), NO_GATES,
     [("spec.resourceClaims[0]",
       'Invalid value: "": must specify one of: `resourceClaimName`, `resourceClaimTemplateName`')]),
    ("resource claim reference and template",
     pod_group(claims({"name": "my-claim", "resourceClaimName": "resource-claim",
                       "resourceClaimTemplateName": "resource-claim-template"})), NO_GATES,
     [("spec.resourceClaims[0]", 'Invalid value: "{resourceClaimName, resourceClaimTemplateName}": '
                                 "must specify exactly one of: `resourceClaimName`, `resourceClaimTemplateName`")]),
    ("invalid claim reference name", pod_group(claims({"name": "my-claim", "resourceClaimName": ".foo_bar"})), NO_GATES,
     [("spec.resourceClaims[0].resourceClaimName", f'Invalid value: ".foo_bar": {SUBDOMAIN}')]),
    ("invalid claim template name", pod_group(claims({"name": "my-claim", "resourceClaimTemplateName": ".foo_bar"})),
     NO_GATES, [("spec.resourceClaims[0].resourceClaimTemplateName", f'Invalid value: ".foo_bar": {SUBDOMAIN}')]),
    ("too many claims", pod_group(claims(*({"name": f"my-claim-{i}", "resourceClaimName": "resource-claim"}
                                           for i in range(5)))), NO_GATES,
     [("spec.resourceClaims", "Too many: 5: must have at most 4 items")]),
]


@pytest.mark.parametrize("obj, gates, expected", [c[1:] for c in POD_GROUP_CASES], ids=[c[0] for c in POD_GROUP_CASES])
def test_pod_group_validated_as_the_api_server_validates_it(obj: Obj, gates: frozenset[str],
                                                            expected: list[tuple[str, str]]) -> None:
    assert pod_group_problems(obj, gates) == expected


def workload(*tweaks: Callable[[Obj], None]) -> Obj:
    """upstream's mkValidWorkload: one gang template ``main``."""
    obj: Obj = {
        "apiVersion": "scheduling.k8s.io/v1alpha2", "kind": "Workload",
        "metadata": {"name": "workload", "namespace": "ns"},
        "spec": {"podGroupTemplates": [{"name": "main", "schedulingPolicy": {"gang": {"minCount": 5}}}]},
    }
    for tweak in tweaks:
        tweak(obj)
    return obj


def template_set(key: str, value: Any) -> Callable[[Obj], None]:
    def tweak(obj: Obj) -> None:
        obj["spec"]["podGroupTemplates"][0][key] = copy.deepcopy(value)
    return tweak


def controller(api_group: str, kind: str, name: str) -> Callable[[Obj], None]:
    return spec_set("controllerRef", {"apiGroup": api_group, "kind": kind, "name": name})


def templates(*names: str) -> Callable[[Obj], None]:
    return spec_set("podGroupTemplates", [{"name": n, "schedulingPolicy": {"gang": {"minCount": 5}}} for n in names])


def add_template(name: str) -> Callable[[Obj], None]:
    def tweak(obj: Obj) -> None:
        obj["spec"]["podGroupTemplates"].append({"name": name, "schedulingPolicy": {"gang": {"minCount": 5}}})
    return tweak


T0 = "spec.podGroupTemplates[0]"

WORKLOAD_CASES: list[tuple[str, Obj, frozenset[str], list[tuple[str, str]]]] = [
    ("valid", workload(), NO_GATES, []),
    ("empty podGroupTemplates", workload(spec_set("podGroupTemplates", [])), NO_GATES,
     [("spec.podGroupTemplates", "Required value")]),
    ("too many podGroupTemplates", workload(templates(*(f"t{i}" for i in range(9)))), NO_GATES,
     [("spec.podGroupTemplates", "Too many: 9: must have at most 8 items")]),
    ("empty podGroupTemplate name", workload(template_set("name", "")), NO_GATES, [(f"{T0}.name", "Required value")]),
    ("invalid podGroupTemplate name", workload(template_set("name", "Invalid_Name")), NO_GATES,
     [(f"{T0}.name", f'Invalid value: "Invalid_Name": {LABEL}')]),
    ("duplicate podGroupTemplate names", workload(add_template("main")), NO_GATES,
     [("spec.podGroupTemplates[1]", 'Duplicate value: {"name":"main","schedulingPolicy":{"gang":{"minCount":5}},'
                                    '"schedulingConstraints":null}')]),
    ("gang minCount zero", workload(template_set("schedulingPolicy", {"gang": {"minCount": 0}})), NO_GATES,
     [(f"{T0}.schedulingPolicy.gang.minCount", "Required value")]),
    ("gang minCount negative", workload(template_set("schedulingPolicy", {"gang": {"minCount": -1}})), NO_GATES,
     [(f"{T0}.schedulingPolicy.gang.minCount", "Invalid value: -1: must be greater than or equal to 1")]),
    ("valid with controllerRef", workload(controller("apps", "Deployment", "my-deployment")), NO_GATES, []),
    ("controllerRef with empty APIGroup", workload(controller("", "Pod", "my-pod")), NO_GATES, []),
    ("controllerRef invalid APIGroup", workload(controller("invalid_api_group", "Deployment", "my-deployment")), NO_GATES,
     [("spec.controllerRef.apiGroup", f'Invalid value: "invalid_api_group": {SUBDOMAIN}')]),
    ("controllerRef too long APIGroup", workload(controller("g" * 254, "Deployment", "my-deployment")), NO_GATES,
     [("spec.controllerRef.apiGroup", f'Invalid value: "{"g" * 254}": must be no more than 253 bytes')]),
    ("controllerRef missing kind", workload(controller("apps", "", "my-deployment")), NO_GATES,
     [("spec.controllerRef.kind", "Required value")]),
    ("controllerRef invalid kind with slash", workload(controller("apps", "Deploy/ment", "my-deployment")), NO_GATES,
     [("spec.controllerRef.kind", "Invalid value: \"Deploy/ment\": may not contain '/'")]),
    ("controllerRef missing name", workload(controller("apps", "Deployment", "")), NO_GATES,
     [("spec.controllerRef.name", "Required value")]),
    ("controllerRef invalid name", workload(controller("apps", "Deployment", "/invalid-name")), NO_GATES,
     [("spec.controllerRef.name", "Invalid value: \"/invalid-name\": may not contain '/'")]),
    ("controllerRef invalid kind with percent", workload(controller("apps", "Deploy%ment", "my-deployment")), NO_GATES,
     [("spec.controllerRef.kind", "Invalid value: \"Deploy%ment\": may not contain '%'")]),
    ("controllerRef invalid name with percent", workload(controller("apps", "Deployment", "my%deployment")), NO_GATES,
     [("spec.controllerRef.name", "Invalid value: \"my%deployment\": may not contain '%'")]),
    ("policy with neither basic nor gang", workload(template_set("schedulingPolicy", {})), NO_GATES,
     [(f"{T0}.schedulingPolicy", 'Invalid value: "": must specify one of: `basic`, `gang`')]),
    ("policy with both basic and gang",
     workload(template_set("schedulingPolicy", {"basic": {}, "gang": {"minCount": 1}})), NO_GATES,
     [(f"{T0}.schedulingPolicy", 'Invalid value: "{basic, gang}": must specify exactly one of: `basic`, `gang`')]),
    ("valid with basic policy", workload(template_set("schedulingPolicy", {"basic": {}})), NO_GATES, []),
    ("valid with schedulingConstraints", workload(template_set("schedulingConstraints", {"topology": [{"key": "foo"}]})),
     TAS, []),
    ("valid with empty schedulingConstraints", workload(template_set("schedulingConstraints", {})), TAS, []),
    ("with multiple topology constraints",
     workload(template_set("schedulingConstraints", {"topology": [{"key": "foo"}, {"key": "bar"}]})), TAS,
     [(f"{T0}.schedulingConstraints.topology", "Too many: 2: must have at most 1 item")]),
    ("with empty topology key", workload(template_set("schedulingConstraints", {"topology": [{"key": ""}]})), TAS,
     [(f"{T0}.schedulingConstraints.topology[0].key", "Required value")]),
    ("with topology key with invalid characters",
     workload(template_set("schedulingConstraints", {"topology": [{"key": "Example.com/Foo"}]})), TAS,
     [(f"{T0}.schedulingConstraints.topology[0].key", f'Invalid value: "Example.com/Foo": prefix part {SUBDOMAIN}')]),
    ("schedulingConstraints, TAS disabled", workload(template_set("schedulingConstraints", {"topology": [{"key": "foo"}]})),
     NO_GATES, [(f"{T0}.schedulingConstraints", "Forbidden")]),
    ("pod disruption mode, workload aware preemption enabled", workload(template_set("disruptionMode", "Pod")), WAP, []),
    ("pod disruption mode, workload aware preemption disabled", workload(template_set("disruptionMode", "Pod")),
     NO_GATES, [(f"{T0}.disruptionMode", "Forbidden")]),
    ("invalid disruption mode, workload aware preemption enabled", workload(template_set("disruptionMode", "Invalid")),
     WAP, [(f"{T0}.disruptionMode", 'Unsupported value: "Invalid": supported values: "Pod", "PodGroup"')]),
    ("valid priorityClassName, workload aware preemption enabled",
     workload(template_set("priorityClassName", "high-priority")), WAP, []),
    ("valid priorityClassName, workload aware preemption disabled",
     workload(template_set("priorityClassName", "high-priority")), NO_GATES, [(f"{T0}.priorityClassName", "Forbidden")]),
    ("invalid priorityClassName, workload aware preemption enabled",
     workload(template_set("priorityClassName", "high/priority")), WAP,
     [(f"{T0}.priorityClassName", f'Invalid value: "high/priority": {SUBDOMAIN}')]),
    ("valid negative priority, workload aware preemption enabled", workload(template_set("priority", -2147483648)),
     WAP, []),
    ("too high priority, workload aware preemption enabled", workload(template_set("priority", 1_000_000_001)), WAP,
     [(f"{T0}.priority", "Invalid value: 1000000001: must be less than or equal to 1000000000")]),
    ("too high priority, workload aware preemption disabled", workload(template_set("priority", 1_000_000_001)),
     NO_GATES, [(f"{T0}.priority", "Forbidden")]),
    ("duplicate claim entries",
     workload(template_set("resourceClaims", [{"name": "my-claim", "resourceClaimName": "resource-claim-1"},
                                              {"name": "my-claim", "resourceClaimName": "resource-claim-2"}])), NO_GATES,
     [(f"{T0}.resourceClaims[1]", 'Duplicate value: {"name":"my-claim","resourceClaimName":"resource-claim-2"}')]),
    ("resource claim source empty", workload(template_set("resourceClaims", [{"name": "my-claim"}])), NO_GATES,
     [(f"{T0}.resourceClaims[0]",
       'Invalid value: "": must specify one of: `resourceClaimName`, `resourceClaimTemplateName`')]),
    ("too many claims", workload(template_set("resourceClaims", [{"name": f"c{i}", "resourceClaimName": "rc"}
                                                                 for i in range(5)])), NO_GATES,
     [(f"{T0}.resourceClaims", "Too many: 5: must have at most 4 items")]),
]


@pytest.mark.parametrize("obj, gates, expected", [c[1:] for c in WORKLOAD_CASES], ids=[c[0] for c in WORKLOAD_CASES])
def test_workload_validated_as_the_api_server_validates_it(obj: Obj, gates: frozenset[str],
                                                           expected: list[tuple[str, str]]) -> None:
    assert workload_problems(obj, gates) == expected


@pytest.mark.parametrize("group, expected", [
    ({"podGroupName": "group"}, []),
    ({}, [("spec.schedulingGroup.podGroupName", "Invalid value: null: must specify one of: `podGroupName`")]),
    ({"podGroupName": ""}, [("spec.schedulingGroup.podGroupName", f'Invalid value: "": {SUBDOMAIN}')]),
    ({"podGroupName": ".podGroup"}, [("spec.schedulingGroup.podGroupName", f'Invalid value: ".podGroup": {SUBDOMAIN}')]),
    ({"podGroupName": "w" * 254},
     [("spec.schedulingGroup.podGroupName", f'Invalid value: "{"w" * 254}": must be no more than 253 characters')]),
], ids=["correct", "nil pod group name", "empty pod group name", "incorrect pod group name", "too long pod group name"])
def test_pod_scheduling_group_validated_as_pod_validation_does(group: Obj, expected: list[tuple[str, str]]) -> None:
    assert scheduling_group_problems({"schedulingGroup": group}) == expected


def test_a_pod_without_a_scheduling_group_has_nothing_to_check() -> None:
    assert scheduling_group_problems({"containers": []}) == []


def test_several_problems_are_reported_together_in_the_api_servers_order() -> None:
    obj = pod_group(template_ref("", ""), spec_set("schedulingPolicy", {}), claims({"name": ""}))
    assert [path for path, _ in pod_group_problems(obj)] == [
        "spec.podGroupTemplateRef.workload.workloadName",
        "spec.podGroupTemplateRef.workload.podGroupTemplateName",
        "spec.schedulingPolicy",
        "spec.resourceClaims[0]",
        "spec.resourceClaims[0].name",
    ]


def test_snapshots_are_checked_with_every_workload_gate_on() -> None:
    obj = pod_group(topology("topology.kubernetes.io/rack"), spec_set("disruptionMode", "PodGroup"),
                    spec_set("priority", 10))
    assert pod_group_problems(obj) == pod_group_problems(obj, ALL_GATES) == []


# upstream's TestValidatePodGroup / TestValidateWorkload failure cases (their "no namespace"
# aside: a snapshot may leave the namespace out, as kubectl apply fills it in).
METADATA_CASES: list[tuple[str, Obj, list[tuple[str, str]]]] = [
    ("no name", {"namespace": "ns"}, [("metadata.name", "Required value: name or generateName is required")]),
    ("invalid name", {"name": ".workload", "namespace": "ns"},
     [("metadata.name", f'Invalid value: ".workload": {SUBDOMAIN}')]),
    ("too long name", {"name": "w" * 254, "namespace": "ns"},
     [("metadata.name", f'Invalid value: "{"w" * 254}": must be no more than 253 characters')]),
    ("invalid namespace", {"name": "ok", "namespace": ".ns"},
     [("metadata.namespace", f'Invalid value: ".ns": {LABEL}')]),
    ("too long namespace", {"name": "ok", "namespace": "n" * 64},
     [("metadata.namespace", f'Invalid value: "{"n" * 64}": must be no more than 63 characters')]),
    ("namespace with dots", {"name": "ok", "namespace": "a.b"},
     [("metadata.namespace", 'Invalid value: "a.b": must not contain dots')]),
    ("no namespace", {"name": "no-namespace"}, []),
]


@pytest.mark.parametrize("metadata, expected", [c[1:] for c in METADATA_CASES], ids=[c[0] for c in METADATA_CASES])
@pytest.mark.parametrize("kind", ["PodGroup", "Workload"])
def test_metadata_checked_as_validate_object_meta_does(kind: str, metadata: Obj, expected: list[tuple[str, str]]) -> None:
    obj, check = (pod_group(), pod_group_problems) if kind == "PodGroup" else (workload(), workload_problems)
    obj["metadata"] = metadata
    assert check(obj) == expected


@pytest.mark.parametrize("tweak, expected", [
    (spec_set("schedulingPolicy", {"gang": {"minCount": "3"}}), ("spec.schedulingPolicy.gang.minCount", "must be an integer")),
    (spec_set("schedulingPolicy", {"gang": {"minCount": 1 << 31}}),
     ("spec.schedulingPolicy.gang.minCount", "must be a 32-bit integer")),
    (spec_set("schedulingPolicy", []), ("spec.schedulingPolicy", "must be an object")),
    (spec_set("resourceClaims", {"name": "x"}), ("spec.resourceClaims", "must be a list")),
    (spec_set("schedulingConstraints", {"topology": [{"key": 7}]}), (TOPOLOGY_KEY, "must be a string")),
])
def test_a_value_of_the_wrong_type_is_reported_alone(tweak: Callable[[Obj], None], expected: tuple[str, str]) -> None:
    obj = pod_group(tweak, spec_set("podGroupTemplateRef", {}))  # a second problem, not reported
    assert pod_group_problems(obj) == [expected]


def status(**fields: Any) -> Callable[[Obj], None]:
    def tweak(obj: Obj) -> None:
        obj["status"] = fields
    return tweak


CONDITION = {"type": "PodGroupScheduled", "status": "True", "reason": "Scheduled",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}


@pytest.mark.parametrize("fields, expected", [
    ({"conditions": [CONDITION]}, []),
    ({"conditions": [CONDITION, CONDITION]}, [("status.conditions[1].type", 'Duplicate value: "PodGroupScheduled"')]),
    ({"conditions": [{**CONDITION, "status": "Yes"}]},
     [("status.conditions[0].status", 'Unsupported value: "Yes": supported values: "False", "True", "Unknown"')]),
    ({"conditions": [{**CONDITION, "lastTransitionTime": None}]},
     [("status.conditions[0].lastTransitionTime", "Required value")]),
    ({"conditions": [{**CONDITION, "reason": ""}]}, [("status.conditions[0].reason", "Required value")]),
    ({"conditions": [{**CONDITION, "reason": "no good"}]},
     [("status.conditions[0].reason", "Invalid value: \"no good\": a condition reason must start with alphabetic "
       "character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an "
       "alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or "
       "'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')")]),
    ({"conditions": [{**CONDITION, "reason": "R" * 1025}]},
     [("status.conditions[0].reason", "Too long: may not be more than 1024 bytes")]),
    ({"conditions": [{**CONDITION, "message": "m" * 32769}]},
     [("status.conditions[0].message", "Too long: may not be more than 32768 bytes")]),
    ({"resourceClaimStatuses": [{"name": "other", "resourceClaimName": "c"}]},
     [("status.resourceClaimStatuses[0].name",
       'Invalid value: "other": must match the name of an entry in `spec.resourceClaims`')]),
])
def test_status_checked_as_a_status_update_is(fields: Obj, expected: list[tuple[str, str]]) -> None:
    assert pod_group_problems(pod_group(status(**fields))) == expected


def test_key_name_message_matches_upstreams_wording() -> None:
    obj = pod_group(topology("a/b/c"))
    assert pod_group_problems(obj) == [
        (TOPOLOGY_KEY, f'Invalid value: "a/b/c": a valid label key {KEY_NAME} with an optional DNS subdomain prefix '
                       "and '/' (e.g. 'example.com/MyName')")]
