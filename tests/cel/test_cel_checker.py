"""Selectors are type checked as cel-go checks them in the DRA environment: calls no overload
accepts, undefined fields of ``device``, results that are not bool, with cel-go's messages."""

from __future__ import annotations

import pytest

from kubesched.cel import CelCache, validate_selector


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("device.driver == 1",
         "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(string, int)'\n | device.driver == 1\n | ..............^"),
        ('device.capacity["d"].memory > 1',
         "compilation failed: ERROR: <input>:1:29: found no matching overload for '_>_' applied to '(kubernetes.Quantity, int)'"),
        ('device.capacity["d"].memory.isGreaterThan(1)',
         "compilation failed: ERROR: <input>:1:42: found no matching overload for 'isGreaterThan' applied to 'kubernetes.Quantity.(int)'"),
        ('device.attributes["d"].v.isGreaterThan(quantity("1")) && semver("1.0.0").isLessThan(quantity("1"))',
         "compilation failed: ERROR: <input>:1:84: found no matching overload for 'isLessThan' applied to 'kubernetes.Semver.(kubernetes.Quantity)'"),
        ('device.driver.size() == "8"', "found no matching overload for '_==_' applied to '(int, string)'"),
        ("device.allowMultipleAllocations && device.driver", "found no matching overload for '_&&_' applied to '(bool, string)'"),
        ("device.name == 'x'", "compilation failed: ERROR: <input>:1:7: undefined field 'name'"),
        ("device.attributes['d'].x.all(v, v)",
         "expression of type 'any' cannot be range of a comprehension (must be list, map, or dynamic)"),
        ("[1, 'a'].size() == 2", "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'"),
        ('device.driver.matches("[a-")', "compilation failed: ERROR: <input>:1:23: invalid matches argument"),
        ('device.driver.matches("(?=x)")', "invalid matches argument"),  # RE2 has no lookahead
        ('duration("1x") > duration("1s")', "compilation failed: ERROR: <input>:1:10: invalid duration argument"),
        ('timestamp("yesterday") < timestamp("2025-01-01T00:00:00Z")', "invalid timestamp argument"),
    ],
)
def test_type_errors_are_compile_errors(expression: str, message: str) -> None:
    error = validate_selector(expression)
    assert error is not None and message in error and error.startswith("compilation failed: ERROR: <input>:")


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1", "must evaluate to bool or the unknown type, not int"),
        ("device.driver", "must evaluate to bool or the unknown type, not string"),
        ('device.capacity["d"].memory', "must evaluate to bool or the unknown type, not kubernetes.Quantity"),
        ("dyn(true)", "must evaluate to bool or the unknown type, not dyn"),
        ('device.attributes["d"].x.y', "must evaluate to bool or the unknown type, not dyn"),
        ("[true]", "must evaluate to bool or the unknown type, not list(bool)"),
    ],
)
def test_a_selector_must_evaluate_to_bool(expression: str, message: str) -> None:
    assert validate_selector(expression) == message


@pytest.mark.parametrize(
    "expression",
    [
        'device.attributes["d"].x',  # an attribute is of the unknown type
        'device.attributes["d"].x == 1 || device.attributes["d"].x == "a"',
        'device.attributes["d"].v.isGreaterThan(semver("1.0.0"))',
        'device.capacity["d"].memory.compareTo(quantity("1Gi")) >= 0',
        "1 < 2.5 && 2u > 1",  # cross-type numeric comparisons
        '"a" in ["a", "b"] && "k" in {"k": 1}',
        "device.attributes.exists(d, device.attributes[d].size() > 1)",
        "[1, 2].map(x, x * 2).filter(y, y > 2).size() == 1",
        "[1, 2].all(i, v, i < v)",
        '{"a": 1}.transformMap(k, v, v + 1)["a"] == 2',
        'cel.bind(x, device.attributes["d"], x.a == 1)',
        'optional.of(1).orValue(2) == 1 && device.attributes["d"].?a.hasValue()',
        'sets.contains(["a", "b"], ["a"]) && lists.range(3).size() == 3',
        'ip("10.0.0.1").family() == 4 && cidr("10.0.0.0/8").containsIP("10.1.2.3")',
        'url("https://example.com/a").getHost() == "example.com"',
        '"%s-%d".format(["a", 1]) == "a-1"',
        "type(device.driver) == string",
    ],
)
def test_well_typed_selectors_compile(expression: str) -> None:
    assert validate_selector(expression) is None


def test_errors_are_listed_in_source_order() -> None:
    error = validate_selector("foo == bar")
    assert error is not None
    assert [line for line in error.removeprefix("compilation failed: ").splitlines() if line.startswith("ERROR")] == [
        "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')",
        "ERROR: <input>:1:8: undeclared reference to 'bar' (in container '')",
    ]


def test_allow_multiple_allocations_is_declared_only_with_consumable_capacity() -> None:
    expression = "device.allowMultipleAllocations == false"
    assert CelCache().get_or_compile(expression).error is None
    error = CelCache(consumable_capacity=False).get_or_compile(expression).error
    assert error is not None and "undefined field 'allowMultipleAllocations'" in error


def test_a_syntax_error_reads_as_cel_gos() -> None:
    assert validate_selector("device.driver ==") == (
        "compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting "
        "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
        " | device.driver ==\n | ................^"
    )


def test_optional_syntax_is_no_syntax_error_beside_a_real_one() -> None:
    error = validate_selector('device.attributes["d"].?x.orValue(1) == 1 &&')
    assert error is not None and error.startswith("compilation failed: ERROR: <input>:1:45: Syntax error") and "unsupported" not in error
