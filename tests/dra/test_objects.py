"""resource.k8s.io/v1 objects read as the API server stores them: defaulting, and the
validation that makes it reject an object (one error naming the field)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from kubesched.objects.dra import (
    ALL,
    EXACT_COUNT,
    Quantity,
    allocation_to_json,
    canonical_text,
    check_admin_access,
    parse_device_class,
    parse_resource_claim,
    parse_resource_claim_template,
    parse_resource_slice,
)
from kubesched.objects.errors import ObjectError


def slice_doc(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeName": "n1"}
    base.update(spec)
    return {"metadata": {"name": "s"}, "spec": {k: v for k, v in base.items() if v is not None}}


def claim_doc(requests: list[dict[str, Any]], **devices: Any) -> dict[str, Any]:
    return {"metadata": {"name": "c"}, "spec": {"devices": {"requests": requests, **devices}}}


def test_request_without_allocation_mode_is_exact_count_of_one() -> None:
    claim = parse_resource_claim(claim_doc([{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]))
    spec = claim.spec.requests[0].exactly
    assert spec is not None
    assert (spec.allocation_mode, spec.count) == (EXACT_COUNT, 1)


def test_subrequest_without_allocation_mode_is_exact_count_of_one() -> None:
    claim = parse_resource_claim(claim_doc([{"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "gpu"}]}]))
    sub = claim.spec.requests[0].first_available[0]
    assert (sub.allocation_mode, sub.count, sub.admin_access) == (EXACT_COUNT, 1, None)


def test_all_mode_has_no_count() -> None:
    claim = parse_resource_claim(claim_doc([{"name": "gpu", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}]))
    spec = claim.spec.requests[0].exactly
    assert spec is not None and spec.allocation_mode == ALL


def test_claim_without_namespace_is_in_default() -> None:
    assert parse_resource_claim(claim_doc([])).namespace == "default"


def test_toleration_without_operator_is_equal() -> None:
    claim = parse_resource_claim(claim_doc([{"name": "r", "exactly": {"deviceClassName": "c", "tolerations": [{"key": "k", "value": "v"}]}}]))
    spec = claim.spec.requests[0].exactly
    assert spec is not None and spec.tolerations[0].operator == "Equal"


def test_slice_with_duplicate_device_names_is_rejected_naming_the_field() -> None:
    with pytest.raises(ObjectError) as err:
        parse_resource_slice(slice_doc(devices=[{"name": "gpu-0"}, {"name": "gpu-0"}]))
    assert err.value.field == "spec.devices[1].name"


def test_slice_needs_exactly_one_node_selection_field() -> None:
    with pytest.raises(ObjectError) as err:
        parse_resource_slice(slice_doc(nodeName=None))
    assert err.value.field == "spec"
    with pytest.raises(ObjectError):
        parse_resource_slice(slice_doc(allNodes=True))


def test_slice_cannot_have_devices_and_shared_counters() -> None:
    with pytest.raises(ObjectError, match="only one of `sharedCounters` or `devices`"):
        parse_resource_slice(slice_doc(devices=[], sharedCounters=[]))


def test_device_attribute_needs_exactly_one_value() -> None:
    with pytest.raises(ObjectError) as err:
        parse_resource_slice(slice_doc(devices=[{"name": "d", "attributes": {"a": {"int": 1, "string": "x"}}}]))
    assert err.value.field == "spec.devices[0].attributes[a]"


def test_device_attributes_are_typed() -> None:
    device = parse_resource_slice(
        slice_doc(devices=[{"name": "d", "attributes": {"i": {"int": 1}, "b": {"bool": True}, "s": {"string": "x"}, "v": {"version": "1.2.3"}}}])
    ).devices[0]
    assert [(a.kind, a.value) for a in device.attributes.values()] == [("int", 1), ("bool", True), ("string", "x"), ("version", "1.2.3")]


def test_device_taint_effect_must_be_known() -> None:
    with pytest.raises(ObjectError) as err:
        parse_resource_slice(slice_doc(devices=[{"name": "d", "taints": [{"key": "k", "effect": "Sometimes"}]}]))
    assert err.value.field == "spec.devices[0].taints[0].effect"


def test_capacity_quantities_are_exact() -> None:
    device = parse_resource_slice(slice_doc(devices=[{"name": "d", "capacity": {"memory": {"value": "40Gi"}}}])).devices[0]
    assert device.capacity["memory"].value == Quantity(Fraction(40 * 2**30), "40Gi")


def test_request_names_are_unique() -> None:
    with pytest.raises(ObjectError) as err:
        parse_resource_claim(claim_doc([{"name": "r", "exactly": {"deviceClassName": "c"}}] * 2))
    assert err.value.field == "spec.devices.requests[1].name"


def test_request_needs_exactly_or_first_available() -> None:
    with pytest.raises(ObjectError, match="exactly one of `exactly` or `firstAvailable`"):
        parse_resource_claim(claim_doc([{"name": "r"}]))


def test_constraint_must_name_requests_of_the_claim() -> None:
    with pytest.raises(ObjectError) as err:
        parse_resource_claim(
            claim_doc([{"name": "r", "exactly": {"deviceClassName": "c"}}], constraints=[{"requests": ["x"], "matchAttribute": "d/a"}])
        )
    assert err.value.field == "spec.devices.constraints[0].requests[0]"


def test_template_carries_claim_metadata_and_spec() -> None:
    template = parse_resource_claim_template(
        {"metadata": {"name": "t"}, "spec": {"metadata": {"labels": {"a": "b"}}, "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "c"}}]}}}}
    )
    assert template.meta.namespace == "default"
    assert template.claim_labels == {"a": "b"}
    assert template.spec.requests[0].name == "r"


def test_device_class_reads_selectors_and_extended_resource_name() -> None:
    cls = parse_device_class({"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": "true"}}], "extendedResourceName": "example.com/gpu"}})
    assert [s.expression for s in cls.selectors] == ["true"]
    assert cls.extended_resource_name == "example.com/gpu"


def test_allocation_round_trips_through_json() -> None:
    allocation = {
        "devices": {
            "results": [{"request": "r", "driver": "d", "pool": "p", "device": "x", "consumedCapacity": {"bw": "10G"}, "shareID": "u"}],
        },
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]},
    }
    claim = parse_resource_claim({**claim_doc([{"name": "r", "exactly": {"deviceClassName": "c"}}]), "status": {"allocation": allocation}})
    assert claim.allocation is not None
    assert allocation_to_json(claim.allocation) == allocation


@pytest.mark.parametrize(
    ("value", "fmt", "text"),
    [
        (60 * 10**9, "BinarySI", "58593750Ki"),
        (2**30, "BinarySI", "1Gi"),
        (1000, "BinarySI", "1k"),
        (1025, "BinarySI", "1025"),
        (Fraction(3, 2), "BinarySI", "1500m"),
        (10**10, "DecimalSI", "10G"),
        (0, "DecimalSI", "0"),
    ],
)
def test_computed_quantities_use_apimachinery_canonical_text(value: int | Fraction, fmt: str, text: str) -> None:
    assert canonical_text(Fraction(value), fmt) == text


def test_admin_access_needs_the_namespace_label() -> None:
    claim = parse_resource_claim(claim_doc([{"name": "r", "exactly": {"deviceClassName": "c", "adminAccess": True}}]))
    check_admin_access(claim.spec, {"resource.kubernetes.io/admin-access": "true"})
    with pytest.raises(ObjectError) as err:
        check_admin_access(claim.spec, {})
    assert err.value.field == "spec.devices.requests[0].adminAccess"
    assert "resource.kubernetes.io/admin-access: true" in err.value.message


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        ({"devices": [{"name": "GPU_0"}]}, "spec.devices[0].name"),
        ({"driver": "Bad_Driver"}, "spec.driver"),
        ({"devices": [{"name": "d", "attributes": {"bad-name": {"int": 1}}}]}, "spec.devices[0].attributes[bad-name]"),
        ({"devices": [{"name": "d", "capacity": {"/memory": {"value": "1"}}}]}, "spec.devices[0].capacity[/memory]"),
    ],
)
def test_names_are_validated_like_the_api_server(spec: dict[str, Any], field: str) -> None:
    with pytest.raises(ObjectError) as err:
        parse_resource_slice(slice_doc(**spec))
    assert err.value.field == field
