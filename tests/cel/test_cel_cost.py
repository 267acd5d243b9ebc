"""Selector cost as upstream bounds it: cel-go's worst-case estimate with Kubernetes' library
estimator and the DRA environment's declared sizes; the API server refuses a selector whose
estimate exceeds 1,000,000, and an evaluation over that budget fails as cel-go's does."""

from __future__ import annotations

import pytest

from kubesched.cluster.dra_validation import validate_dra_object
from kubesched.objects.dra import Device, DeviceClass, parse_device_class, parse_resource_claim, parse_resource_slice
from kubesched.objects.errors import ObjectError
from kubesched.objects.node import parse_node
from kubesched.cel import COST_LIMIT_EXCEEDED, MAX_COST, CelCache, CelError, selector_problem
from kubesched.cel.celtypes import CelType
from kubesched.cel.checker import check
from kubesched.cel.cost import Estimate, estimate_cost
from kubesched.cel.syntax import parse
from kubesched.structured import AllocatedState, AllocationError, Allocator, Features, SliceIndex

from .cel_library_cost_cases import LIBRARY_COSTS

DRIVER = "dra.example.com"
# Seven nested all() over ten-element lists: upstream's "expensive" case.
EXPENSIVE = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, " * 1 + "".join(
    f"[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all({v}, " for v in ("y", "z", "z2", "z3", "z4", "z5")
) + "int('1'.find('[0-9]*')) < 100" + ")" * 7

# Upstream's compile_test.go expectations of CompilationResult.MaxCost (features at v1.36's defaults).
ESTIMATES = [
    ("true", 0),
    ('device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', 6),
    ('device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', 6),
    ('"no-such-domain" in device.attributes', 3),
    ('device.driver == ""', 2),
    ('device.driver == "dra.example.com"', 4),
    ('device.attributes["dra.example.com"].name', 4),
    ('device.attributes["dra.example.com"]["name"]', 4),
    ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)', 15),
    ('device.attributes["dra.example.com"].name > 0', 5),
    ('device.attributes["dra.example.com"].name == "fish"', 5),
    ('device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 6),
    ('"name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 10),
    ('!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 11),
    ('device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c', 12),
    ('device.attributes.exists_one(x, x == "dra.example.com")', 164),
    ('device.attributes["dra.example.com"].exists_one(x, x == "services")', 133),
    ('device.attributes["dra.example.com"].services.split("example").size() >= 2', 19),
    ('device.attributes["dra.example.com"].services.matches("[^a]?sym")', 18),
    ('device.capacity.exists_one(x, x == "dra.example.com")', 164),
    ('device.capacity["dra.example.com"].exists_one(x, x == "memory")', 133),
    ("device.allowMultipleAllocations == true", 3),
    (EXPENSIVE, 85555551),
]


@pytest.mark.parametrize(("expression", "cost"), ESTIMATES)
def test_worst_case_cost_is_upstreams_estimate(expression: str, cost: int) -> None:
    assert CelCache().get_or_compile(expression).max_cost == cost


def test_all_of_upstreams_mixed_selector_costs_52() -> None:
    expression = " &&\n".join([
        'device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki"))',
        'device.attributes["dra.example.com"].bool',
        'device.attributes["dra.example.com"].int > 0',
        'device.attributes["dra.example.com"].string == "fish"',
        'device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1"))',
        'device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki"))',
        'device.attributes["dra.example.com"]["bool"]',
        'device.attributes["dra.example.com"]["int"] > 0',
        'device.attributes["dra.example.com"]["string"] == "fish"',
        'device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))',
    ])
    assert CelCache().get_or_compile(expression).max_cost == 52


def test_the_api_server_refuses_a_selector_over_the_cost_limit() -> None:
    assert selector_problem(EXPENSIVE) == "Forbidden: too complex, exceeds cost limit"


def test_the_api_server_accepts_a_cheap_selector() -> None:
    assert selector_problem('device.driver == "dra.example.com"') is None


def test_a_device_class_with_a_too_costly_selector_is_bad_input() -> None:
    doc = {"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": EXPENSIVE}}]}}
    with pytest.raises(ObjectError) as err:
        validate_dra_object("DeviceClass", doc)
    assert (err.value.field, err.value.message) == ("spec.selectors[0].cel.expression", "Forbidden: too complex, exceeds cost limit")


def test_a_selector_longer_than_10_KiB_is_too_long() -> None:
    assert selector_problem("true || " * 1300 + "true") == "Too long: may not be more than 10240 bytes"


def _device(attributes: dict[str, dict[str, object]]) -> Device:
    doc = {"metadata": {"name": "s"}, "spec": {"driver": DRIVER, "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n",
                                               "devices": [{"name": "d", "attributes": attributes}]}}
    return parse_resource_slice(doc).devices[0]


def test_an_evaluation_over_the_runtime_budget_fails_with_cel_gos_error() -> None:
    with pytest.raises(CelError, match=f"^{COST_LIMIT_EXCEEDED}$"):
        CelCache().get_or_compile(EXPENSIVE).device_matches(DRIVER, _device({}))


def test_a_costly_estimate_whose_bound_on_this_device_fits_evaluates() -> None:
    # 32 domains of 32 attributes could cost more than the budget; this device has one attribute.
    expression = "device.attributes.all(d, device.attributes[d].all(a, device.attributes.all(e, device.attributes[e].all(b, a.size() + b.size() > 0))))"
    compiled = CelCache().get_or_compile(expression)
    assert compiled.max_cost is not None and compiled.max_cost > MAX_COST
    assert compiled.device_matches(DRIVER, _device({"x": {"bool": True}})) is True


def test_the_allocator_reports_a_selector_over_budget_as_upstreams_cel_runtime_error() -> None:
    device_class = parse_device_class({"metadata": {"name": "gpu"}, "spec": {"selectors": [{"cel": {"expression": EXPENSIVE}}]}})

    class Classes:
        def get(self, name: str) -> DeviceClass | None:
            return device_class if name == "gpu" else None

    slices = SliceIndex([parse_resource_slice({"metadata": {"name": "n-gpu"}, "spec": {
        "driver": DRIVER, "nodeName": "n", "pool": {"name": "n", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "gpu-0"}]}})])
    claim = parse_resource_claim({"metadata": {"name": "c", "namespace": "default"},
                                  "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}})
    node = parse_node({"metadata": {"name": "n", "labels": {"kubernetes.io/hostname": "n"}}})
    allocator = Allocator(Features(), AllocatedState(), Classes(), slices, CelCache())
    with pytest.raises(AllocationError, match=f"^class gpu: selector #0: CEL runtime error: {COST_LIMIT_EXCEEDED}$"):
        allocator.allocate(node, [claim])


def _test_sizes(path: list[str] | None, type_: CelType) -> Estimate | None:
    """The size estimator of upstream's library cost tests."""
    return Estimate(0, 12) if type_.kind in ("string", "bytes") else None


@pytest.mark.parametrize(("expression", "low", "high"), LIBRARY_COSTS)
def test_library_call_costs_are_upstreams(expression: str, low: int, high: int) -> None:
    # Upstream's library tests run without the base environment's literal validators.
    checked = check(parse(expression), validators=False)
    assert not checked.errors
    assert estimate_cost(checked, estimator=_test_sizes) == Estimate(low, high)
