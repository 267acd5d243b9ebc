"""Device selectors evaluate as upstream's DRA CEL environment does: typed attributes and
quantities, the driver's domain for bare names, runtime errors as errors."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.objects.dra import Device, parse_resource_slice
from kubesched.objects.errors import ObjectError
from kubesched.cel import CelCache, CelError, validate_selector

DRIVER = "gpu.example.com"


def device(**fields: Any) -> Device:
    doc = {"metadata": {"name": "s"}, "spec": {"driver": DRIVER, "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n", "devices": [{"name": "d", **fields}]}}
    return parse_resource_slice(doc).devices[0]


GPU = device(
    attributes={
        "type": {"string": "gpu"},
        "index": {"int": 1},
        "healthy": {"bool": True},
        "driverVersion": {"version": "1.6.0"},
        "nic.example.com/rdma": {"bool": True},
    },
    capacity={"memory": {"value": "80Gi"}},
)

CASES = [
    ('device.driver == "gpu.example.com"', True),
    ('device.attributes["gpu.example.com"].type == "gpu"', True),
    ('device.attributes["gpu.example.com"].index < 2', True),
    ('device.attributes["gpu.example.com"].healthy', True),
    ('device.attributes["nic.example.com"].rdma', True),
    ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', True),
    ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("40Gi"))', False),
    ('device.capacity["gpu.example.com"].memory == quantity("81920Mi")', True),
    ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.5.0"))', True),
    ('device.attributes["gpu.example.com"].driverVersion.compareTo(semver("2.0.0")) < 0', True),
    ('device.attributes["gpu.example.com"].driverVersion == semver("1.6.0")', True),
    ("device.allowMultipleAllocations", False),
    ('quantity("1Gi").add(1).sub(quantity("1")).asInteger() == 1073741824', True),
    ('quantity("1.5").isInteger() || quantity("-2").sign() != -1', False),
    ('semver("v1.2", true).major() == 1 && semver("1.2.3").patch() == 3', True),
    ('isSemver("1.0.0") && !isSemver("1.0") && isQuantity("10Gi") && !isQuantity("ten")', True),
]


@pytest.mark.parametrize(("expression", "expected"), CASES)
def test_selector_outcome(expression: str, expected: bool) -> None:
    assert CelCache().get_or_compile(expression).device_matches(DRIVER, GPU) is expected


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ('device.attributes["gpu.example.com"].profile == "1g"', "no such key: profile"),
        ('device.attributes["fpga.example.com"].family == "x"', "no such key: family"),
        ('device.attributes["gpu.example.com"].type', "CEL result of type string could not be converted to bool"),
        ('quantity("ten") == quantity("1")', "quantities must match the regular expression"),
        ("1 / 0 == 1", "division by zero"),
    ],
)
def test_runtime_errors_are_errors(expression: str, message: str) -> None:
    with pytest.raises(CelError, match=message):
        CelCache().get_or_compile(expression).device_matches(DRIVER, GPU)


def test_a_domain_the_device_lacks_reads_as_an_empty_map() -> None:
    assert CelCache().get_or_compile('has(device.attributes["fpga.example.com"].family)').device_matches(DRIVER, GPU) is False


def test_syntax_error_is_a_compile_error() -> None:
    message = validate_selector("device.driver ==")
    assert message is not None and message.startswith("compilation failed: ERROR: <input>:1:17: Syntax error")
    assert validate_selector('device.driver == "x"') is None


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("noSuchVar", "ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^"),
        ('device.driver == "x" && foo(1)', "ERROR: <input>:1:28: undeclared reference to 'foo'"),  # a call is located at its '('

    ],
)
def test_undeclared_references_are_compile_errors(expression: str, message: str) -> None:
    error = validate_selector(expression)
    assert error is not None and error.startswith("compilation failed: " + message)


@pytest.mark.parametrize(
    "expression",
    ["[1, 2].all(x, x > 0)", "type(device.driver) == string", 'device.driver.lowerAscii().split(".")[0] == "gpu"', 'sets.contains(["a"], ["a"])'],
)
def test_standard_and_kubernetes_library_references_compile(expression: str) -> None:
    assert validate_selector(expression) is None


def test_strings_library() -> None:
    assert CelCache().get_or_compile('device.driver.upperAscii().startsWith("GPU") && device.driver.indexOf(".") == 3').device_matches(DRIVER, GPU)


def test_expression_is_compiled_once() -> None:
    cache = CelCache()
    assert cache.get_or_compile("true") is cache.get_or_compile("true")


def test_identical_devices_share_one_result() -> None:
    result = CelCache().get_or_compile('device.attributes["gpu.example.com"].type == "gpu"')
    other = device(attributes={"type": {"string": "gpu"}, "index": {"int": 1}, "healthy": {"bool": True}, "driverVersion": {"version": "1.6.0"}, "nic.example.com/rdma": {"bool": True}}, capacity={"memory": {"value": "80Gi"}})
    assert other.selector_key == GPU.selector_key
    assert result.device_matches(DRIVER, GPU) and result.device_matches(DRIVER, other)


def test_invalid_version_attribute_is_rejected_like_the_api_server_does() -> None:
    with pytest.raises(ObjectError, match="semver.org spec 2.0.0"):
        device(attributes={"v": {"version": "1.0"}})


@pytest.mark.parametrize(
    ("expression", "reads"),
    [
        ('device.driver == "a" && device.attributes["d"].x == 1', (("attributes", "d", "x"),)),
        ('device.capacity["d"]["mem"].isLessThan(quantity("1"))', (("capacity", "d", "mem"),)),
        ('has(device.attributes["d"].x) && device.allowMultipleAllocations', (("attributes", "d", "x"),)),
        ('device.attributes["d"].exists(k, k == "x")', None),
        ("device.attributes.size() > 0", None),
    ],
)
def test_result_sharing_knows_what_an_expression_reads(expression: str, reads: tuple[tuple[str, str, str], ...] | None) -> None:
    assert CelCache().get_or_compile(expression).projection == reads


def test_devices_differing_only_in_unread_attributes_share_a_result() -> None:
    result = CelCache().get_or_compile('device.attributes["gpu.example.com"].type == "gpu"')
    a = device(attributes={"type": {"string": "gpu"}, "uuid": {"string": "GPU-1"}})
    b = device(attributes={"type": {"string": "gpu"}, "uuid": {"string": "GPU-2"}})
    assert result.device_matches(DRIVER, a) and result.device_matches(DRIVER, b)
    assert len(result._results) == 1


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ('semver("1.0") == semver("1.0.0")', "No Major.Minor.Patch elements found"),
        ('semver("01.0.0") == semver("1.0.0")', 'Major number must not contain leading zeroes "01"'),
        ('semver("v1.2-rc", true) == semver("1.0.0")', "short version cannot contain PreRelease/Build meta data"),
    ],
)
def test_semver_errors_use_the_library_messages(expression: str, message: str) -> None:
    with pytest.raises(CelError, match=message):
        CelCache().get_or_compile(expression).device_matches(DRIVER, GPU)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('semver("01.002.3", true) == semver("1.2.3")', True),
        ('semver("1.0.0-alpha").isLessThan(semver("1.0.0"))', True),
        ('semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))', True),
        ('semver("1.0.0+build1") == semver("1.0.0+build2")', True),
    ],
)
def test_semver_normalization_and_precedence(expression: str, expected: bool) -> None:
    assert CelCache().get_or_compile(expression).device_matches(DRIVER, GPU) is expected


@pytest.mark.parametrize(
    "expression",
    [
        'device.attributes["gpu.example.com"].type.find("g.") == "gp"',
        'device.attributes["gpu.example.com"].type.findAll("[gu]") == ["g", "u"]',
        "[1, 2, 3].isSorted() && [3, 1].indexOf(1) == 1 && [1, 2].sum() == 3",
        '"gpu".indexOf("u") == 2 && "a,b".split(",") == ["a", "b"]',
    ],
)
def test_regex_and_list_libraries(expression: str) -> None:
    assert CelCache().get_or_compile(expression).device_matches(DRIVER, GPU)
