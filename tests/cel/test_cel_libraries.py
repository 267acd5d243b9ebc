"""Kubernetes' CEL base environment as DRA selectors get it at v1.36 (compatibility version
1.35): the IP, CIDR and URL libraries, string format, optional types and their syntax,
cel.bind, two-variable comprehensions and the namespaced set, list and string functions."""

from __future__ import annotations

import pytest

from kubesched.objects.dra import Device, parse_resource_slice
from kubesched.cel import CelCache, CelError

DRIVER = "gpu.example.com"


def _device() -> Device:
    doc = {"metadata": {"name": "s"}, "spec": {"driver": DRIVER, "pool": {"name": "p", "resourceSliceCount": 1}, "nodeName": "n", "devices": [
        {"name": "d", "attributes": {"type": {"string": "gpu"}, "ip": {"string": "10.1.2.3"}, "index": {"int": 3}}, "capacity": {"memory": {"value": "80Gi"}}}]}}
    return parse_resource_slice(doc).devices[0]


GPU = _device()


def matches(expression: str) -> bool:
    compiled = CelCache().get_or_compile(expression)
    assert compiled.error is None, compiled.error
    return compiled.device_matches(DRIVER, GPU)


@pytest.mark.parametrize(
    "expression",
    [
        'ip("10.0.0.1").family() == 4 && ip("::1").family() == 6',
        'ip("::1").isLoopback() && ip("127.0.0.2").isLoopback() && ip("0.0.0.0").isUnspecified()',
        'ip("192.168.0.1").isGlobalUnicast() && !ip("127.0.0.1").isGlobalUnicast() && ip("169.254.1.1").isLinkLocalUnicast()',
        'ip("224.0.0.1").isLinkLocalMulticast() && ip("ff02::1").isLinkLocalMulticast()',
        'isIP("1.2.3.4") && !isIP("1.2.3") && !isIP("::ffff:1.2.3.4")',
        'ip.isCanonical("10.0.0.1") && !ip.isCanonical("2001:DB8::1")',
        'string(ip("2001:db8::1")) == "2001:db8::1"',
    ],
)
def test_ip_library(expression: str) -> None:
    assert matches(expression)


@pytest.mark.parametrize(
    "expression",
    [
        'cidr("10.0.0.0/8").containsIP(device.attributes["gpu.example.com"].ip)',
        'cidr("10.0.0.0/8").containsIP(ip("10.1.1.1")) && !cidr("10.0.0.0/8").containsIP("11.0.0.1")',
        'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16") && !cidr("10.1.0.0/16").containsCIDR(cidr("10.0.0.0/8"))',
        'string(cidr("10.1.2.3/8").masked()) == "10.0.0.0/8" && cidr("10.1.2.3/8").ip() == ip("10.1.2.3")',
        'cidr("10.0.0.0/8").prefixLength() == 8 && isCIDR("10.0.0.0/8") && !isCIDR("10.0.0.0")',
    ],
)
def test_cidr_library(expression: str) -> None:
    assert matches(expression)


@pytest.mark.parametrize(
    "expression",
    [
        'url("https://user@example.com:8080/a/b?x=1").getHost() == "example.com:8080"',
        'url("https://example.com:8080/a").getHostname() == "example.com" && url("https://example.com:8080/a").getPort() == "8080"',
        'url("https://[::1]:80/").getHostname() == "::1" && url("https://e.com").getScheme() == "https"',
        'url("https://e.com/a%20b?x=1&x=2").getQuery()["x"] == ["1", "2"] && url("https://e.com/a%20b").getEscapedPath() == "/a%20b"',
        'isURL("https://e.com") && isURL("/path") && !isURL("e.com")',
    ],
)
def test_url_library(expression: str) -> None:
    assert matches(expression)


@pytest.mark.parametrize(
    "expression",
    ['"%s-%d".format(["a", 1]) == "a-1"', '"%.2f".format([1.5]) == "1.50"', '"%x|%o|%b|%%".format([255, 8, 5]) == "ff|10|101|%"',
     '"%s".format([device.attributes["gpu.example.com"].type]) == "gpu"'],
)
def test_string_format(expression: str) -> None:
    assert matches(expression)


@pytest.mark.parametrize(
    "expression",
    [
        'optional.of(1).orValue(2) == 1 && !optional.none().hasValue() && optional.of(1).or(optional.of(2)).value() == 1',
        'device.attributes["gpu.example.com"].?type.orValue("x") == "gpu"',
        'device.attributes["gpu.example.com"].?missing.orValue("x") == "x"',
        'device.attributes[?"gpu.example.com"].?type.hasValue() && !device.attributes[?"other.example.com"].?type.hasValue()',
        'device.attributes["gpu.example.com"][?"type"].value() == "gpu" && [1, 2][?5].orValue(0) == 0',
        '[1, ?optional.none(), ?optional.of(3)] == [1, 3]',
        '{?"a": optional.of(1), ?"b": optional.none()} == {"a": 1}',
        'optional.of(2).optMap(x, x * 2).value() == 4 && !optional.none().optFlatMap(x, optional.of(x)).hasValue()',
    ],
)
def test_optional_types(expression: str) -> None:
    assert matches(expression)


@pytest.mark.parametrize(
    "expression",
    [
        'cel.bind(d, device.attributes["gpu.example.com"], d.type == "gpu" && d.index == 3)',
        "cel.bind(a, 1, cel.bind(b, a + 1, a + b == 3))",
        "[10, 20].all(i, v, v == (i + 1) * 10)",
        '{"a": 1, "b": 2}.exists(k, v, k == "b" && v == 2)',
        "[1, 2, 3].existsOne(i, v, v == 2)",
        "[1, 2, 3].transformList(i, v, v * i) == [0, 2, 6] && [1, 2, 3].transformList(i, v, i > 0, v) == [2, 3]",
        '{"a": 1}.transformMap(k, v, v + 1) == {"a": 2} && {"a": 1}.transformMapEntry(k, v, {k + k: v}) == {"aa": 1}',
        'device.attributes["gpu.example.com"].exists(name, value, name == "index" && value == 3)',
    ],
)
def test_bind_and_two_variable_comprehensions(expression: str) -> None:
    assert matches(expression)


@pytest.mark.parametrize(
    "expression",
    [
        "sets.contains([1, 2], [1]) && sets.intersects([1], [1, 3]) && sets.equivalent([1, 2], [2, 1])",
        'lists.range(3) == [0, 1, 2] && strings.quote("a") == "\\"a\\""',
    ],
)
def test_namespaced_functions(expression: str) -> None:
    assert matches(expression)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ('ip("1.2.3") == ip("1.2.3.4")', 'IP Address "1.2.3" parse error during conversion from string'),
        ('ip("::ffff:1.2.3.4").family() == 6', 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
        ('url("example.com").getHost() == ""', "URL parse error during conversion from string"),
        ('{"a": 1, "b": 1}.transformMapEntry(k, v, {"x": v}).size() == 1', "insert failed: key x already exists"),
    ],
)
def test_library_runtime_errors(expression: str, message: str) -> None:
    with pytest.raises(CelError, match=message):
        matches(expression)


@pytest.mark.parametrize(
    "expression",
    [
        '!format.dns1123Label().validate("my-name").hasValue()',
        'format.dns1123Label().validate("My_Name").value() == ["a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \'-\', '
        'and must start and end with an alphanumeric character (e.g. \'my-name\',  or \'123-abc\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?\')"]',
        'format.dns1123Label().validate("a.b").value() == ["must not contain dots"]',
        '!format.named("uuid").value().validate("123e4567-e89b-12d3-a456-426614174000").hasValue() && !format.named("nope").hasValue()',
        'format.qualifiedName().validate("example.com/MyName").orValue([]).size() == 0 && format.qualifiedName().validate("/x").value()[0] == "prefix part must be non-empty"',
        '!format.dns1123LabelPrefix().validate("my-").hasValue() && format.labelValue().validate("-x").hasValue()',
    ],
)
def test_format_library(expression: str) -> None:
    assert matches(expression)


def test_sort_by_orders_a_list_by_computed_keys() -> None:
    assert matches('[3, 1, 2].sortBy(x, -x) == [3, 2, 1] && ["bb", "a"].sortBy(s, s.size()) == ["a", "bb"]')


def test_sort_keys_must_be_comparable() -> None:
    compiled = CelCache().get_or_compile("[[1], [2]].sortBy(l, l).size() == 2")
    assert compiled.error is not None and "found no matching overload for '@sortByAssociatedKeys' applied to 'list(list(int)).(list(list(int)))'" in compiled.error


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1.2.3", 'IP Address "1.2.3" parse error during conversion from string: ParseAddr("1.2.3"): IPv4 address too short'),
        ("01.2.3.4", 'ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero'),
        ("1.2.3.256", 'ParseAddr("1.2.3.256"): IPv4 field has value >255'),
        ("1..2.3", 'ParseAddr("1..2.3"): IPv4 field must have at least one digit (at ".2.3")'),
        ("fe80::1%eth0", 'IP address "fe80::1%eth0" with zone value is not allowed'),
    ],
)
def test_ip_parse_errors_read_as_gos(text: str, message: str) -> None:
    with pytest.raises(CelError) as err:
        matches(f'ip("{text}").family() == 4')
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("10.0.0.0", "netip.ParsePrefix(\"10.0.0.0\"): no '/'"),
        ("10.0.0.0/33", 'netip.ParsePrefix("10.0.0.0/33"): prefix length out of range'),
        ("10.0.0.0/08", 'netip.ParsePrefix("10.0.0.0/08"): bad bits after slash: "08"'),
    ],
)
def test_cidr_parse_errors_read_as_gos(text: str, message: str) -> None:
    with pytest.raises(CelError) as err:
        matches(f'cidr("{text}").prefixLength() == 8')
    assert message in str(err.value)
