"""Expressions parse into cel-go's AST: operators and calls located where cel-go locates them,
macros expanded into comprehensions over ``@result``; written back out, an expression means
what it meant (the engine gives the same value for both texts)."""

from __future__ import annotations

import pytest

from kubesched.cel import validate_selector
from kubesched.cel.checker import check
from kubesched.cel.engine import engine
from kubesched.cel.lowering import write
from kubesched.cel.syntax import ACCUMULATOR, Call, Comprehension, Literal, ParseError, Select, parse


@pytest.mark.parametrize(
    ("expression", "offset"),
    [
        ("a == b", 2),  # a binary operator at its token
        ("f(x)", 1),  # a global call at its '('
        ("a.f(x)", 3),  # a member call at its '('
        ("a.b", 1),  # a select at its '.'
        ("a[b]", 1),  # an index at its '['
        ("a ? b : c", 2),
        ("-1", 0),  # a negative literal at its sign
    ],
)
def test_nodes_are_located_as_cel_go_locates_them(expression: str, offset: int) -> None:
    assert parse(expression).offset == offset


def test_all_expands_into_a_comprehension_over_the_accumulator() -> None:
    node = parse("l.all(x, x > 0)")
    assert isinstance(node, Comprehension)
    assert (node.iter_var, node.accu_var, node.macro) == ("x", ACCUMULATOR, "all")
    assert isinstance(node.accu_init, Literal) and node.accu_init.value is True
    assert isinstance(node.loop_condition, Call) and node.loop_condition.function == "@not_strictly_false"


def test_has_is_a_presence_test() -> None:
    node = parse("has(a.b)")
    assert isinstance(node, Select) and node.test_only and node.field == "b"


def test_cel_bind_is_a_comprehension_over_an_empty_list() -> None:
    node = parse("cel.bind(v, 1, v + 1)")
    assert isinstance(node, Comprehension) and node.accu_var == "v" and node.macro == "bind"


@pytest.mark.parametrize("expression", ["a +", "a..b", "(a", "1 2"])
def test_what_is_not_cel_does_not_parse(expression: str) -> None:
    with pytest.raises(ParseError):
        parse(expression)


@pytest.mark.parametrize(
    "expression",
    [
        r'"a\"b" + "c" == "a\"bc"', r'r"\d+" == "\\d+"', '"""multi\nline""" == "multi\\nline"', "'''x'''.size() == 1",
        '"\\u00e9" == "é"', '"\\x41" == "A"', '"\\101" == "A"', 'b"\\xff".size() == 1',
        "1 + 2 * 3 - 4 / 2 % 3 == 6", "-(-1) == 1", "!!true", "!(1 < 2) || 3 >= 3", "1u + 2u == 3u", "0x10 == 16",
        "1.5e1 == 15.0", "true ? 1 == 1 : false", "[1, 2, 3][1] == 2", "{'a': {'b': 1}}.a.b == 1",
        "'a' in ['a'] && !('b' in {'a': 1})", "[1, 2].map(x, x * 2) == [2, 4]", "[1, 2, 3].filter(x, x > 1).size() == 2",
        "[[1], [2]].all(l, l.all(x, x > 0))", "[1, 2, 3].map(x, x > 1, x) == [2, 3]", "[1, 2, 3].exists_one(x, x == 2)",
        "size('abc') == 3 && 'abc'.startsWith('a') && 'abc'.matches('^a.c$')", "int('12') + int(3.7) == 15",
        "type(1) == int", "has({'a': 1}.a)", "-9223372036854775807 - 1 < 0", "// comment\n1 == 1",
        "duration('1h').getMinutes() == 60", "[1, 2] + [3] == [1, 2, 3]", "'ab' < 'b' && 1 < 2.0 && null == null",
    ],
)
def test_an_expression_written_back_means_the_same(expression: str) -> None:
    checked = check(parse(expression))
    assert not checked.errors
    assert engine().evaluate(write(checked)) == engine().evaluate(expression)


def test_logical_chains_are_balanced_as_cel_gos_logic_manager_builds_them() -> None:
    node = parse("a && b && c && d")
    assert isinstance(node, Call) and node.offset == 7  # the middle '&&'
    assert all(isinstance(arg, Call) and arg.function == "_&&_" for arg in node.args)


def test_a_long_chain_of_conditions_compiles() -> None:
    assert validate_selector(" && ".join(["true"] * 1200)) is None
