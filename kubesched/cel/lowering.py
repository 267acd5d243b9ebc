"""A checked expression written back as source the engine runs, for the parts of Kubernetes'
CEL environment the engine's grammar or runtime lacks.

The engine does not parse optional selection (``a.?b``, ``m[?k]``, ``[?x]``, ``{?k: v}``) nor
expand ``cel.bind`` or the two-variable comprehensions, and it resolves no namespaced function
(``sets.contains``, ``lists.range``, ``strings.quote``, ``ip.isCanonical``) nor ``string()``
of an IP or CIDR. Such an expression is rewritten into an equivalent one: ``cel.bind(v, i, e)``
becomes ``[i].map(v, e)[0]``, a two-variable comprehension ranges over ``[key, value]`` pairs,
optional selection and namespaced functions become calls of the Python functions in
``LOWERED_FUNCTIONS``. Expressions without them are run as written (``lower`` returns None).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

from .checker import Checked
from .engine import engine
from .library import CelFunction, CelValue, NoSuchOverload
from .syntax import Call, Comprehension, Ident, ListExpr, Literal, MapExpr, Node, Select

__all__ = ["lower", "write", "LOWERED_FUNCTIONS"]

_BINARY = {"_==_": "==", "_!=_": "!=", "_<_": "<", "_<=_": "<=", "_>_": ">", "_>=_": ">=", "_+_": "+", "_-_": "-", "_*_": "*",
           "_/_": "/", "_%_": "%", "_&&_": "&&", "_||_": "||", "@in": "in"}
_ENGINE_QUALIFIED = frozenset({"optional.of", "optional.none", "optional.ofNonZeroValue"})
_NET_TO_STRING = frozenset({"ip_to_string", "cidr_to_string"})
_TWO_VARIABLE = frozenset({"transformList", "transformMap", "transformMapEntry"})


def _optional(value: CelValue) -> tuple[bool, CelValue]:
    """(present, value) of an optional or plain operand."""
    engine_optional = type(value).__name__ == "OptionalValue"
    if engine_optional:
        present = bool(value.has_value())  # type: ignore[attr-defined]
        return present, value.value() if present else None  # type: ignore[attr-defined]
    return True, value


def _some(value: CelValue) -> object:
    optional: object = engine().OptionalValue.of(value)
    return optional


def _none() -> object:
    optional: object = engine().OptionalValue.none()
    return optional


def opt_select(operand: CelValue, field: CelValue) -> object:
    """``operand.?field``."""
    present, value = _optional(operand)
    if not present:
        return _none()
    if not isinstance(value, Mapping):
        raise NoSuchOverload()
    return _some(value[field]) if field in value else _none()


def opt_index(operand: CelValue, key: CelValue) -> object:
    """``operand[?key]``."""
    present, value = _optional(operand)
    if not present:
        return _none()
    if isinstance(value, list):
        if isinstance(key, bool) or not isinstance(key, (int, float)) or key != int(key):
            raise NoSuchOverload()
        return _some(value[int(key)]) if 0 <= key < len(value) else _none()
    if isinstance(value, Mapping):
        return _some(value[key]) if key in value else _none()
    raise NoSuchOverload()


def opt_list(items: CelValue, optional: CelValue) -> list[object]:
    """A list literal with ``?`` elements: absent ones left out."""
    assert isinstance(items, list) and isinstance(optional, list)
    out: list[object] = []
    for item, is_optional in zip(items, optional):
        if is_optional:
            present, value = _optional(item)
            if present:
                out.append(value)
        else:
            out.append(item)
    return out


def opt_map(entries: CelValue, optional: CelValue) -> dict[object, object]:
    """A map literal with ``?`` entries: absent ones left out."""
    assert isinstance(entries, list) and isinstance(optional, list)
    out: dict[object, object] = {}
    for (key, item), is_optional in zip(entries, optional):
        if is_optional:
            present, value = _optional(item)
            if present:
                out[key] = value
        else:
            out[key] = item
    return out


def pairs(container: CelValue) -> list[list[object]]:
    """``[index, value]`` of a list or ``[key, value]`` of a map, for two-variable comprehensions."""
    if isinstance(container, list):
        return [[i, v] for i, v in enumerate(container)]
    if isinstance(container, Mapping):
        return [[k, v] for k, v in container.items()]
    raise ValueError(f"got '{type(container).__name__}', expected iterable type")


def pairs_to_map(entries: CelValue) -> dict[object, object]:
    assert isinstance(entries, list)
    return {entry[0]: entry[1] for entry in entries}


def merge_maps(maps: CelValue) -> dict[object, object]:
    """``transformMapEntry``'s result: every map the step made, a key at most once."""
    assert isinstance(maps, list)
    out: dict[object, object] = {}
    for entry in maps:
        if not isinstance(entry, Mapping):
            raise NoSuchOverload()
        for key, value in entry.items():
            if key in out:
                raise ValueError(f"insert failed: key {key} already exists")
            out[key] = value
    return out


def sort_by(items: CelValue, keys: CelValue) -> list[object]:
    """``@sortByAssociatedKeys``: the list ordered by the keys computed for its elements."""
    if not isinstance(items, list) or not isinstance(keys, list):
        raise NoSuchOverload()
    if len(items) != len(keys):
        raise ValueError(f"@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got {len(items)} and {len(keys)} elements respectively.")
    order = sorted(range(len(items)), key=lambda i: keys[i])
    return [items[i] for i in order]


LOWERED_FUNCTIONS: dict[str, CelFunction] = {
    "k8s_sort_by": sort_by,
    "k8s_opt_select": opt_select,
    "k8s_opt_index": opt_index,
    "k8s_opt_list": opt_list,
    "k8s_opt_map": opt_map,
    "k8s_pairs": pairs,
    "k8s_pairs_to_map": pairs_to_map,
    "k8s_merge_maps": merge_maps,
}


def _function_name(qualified: str) -> str:
    return "k8s_" + qualified.replace(".", "_")


class _Writer:
    def __init__(self, checked: Checked) -> None:
        self.checked = checked
        self.lowered = False
        self.depth = 0

    def write(self, node: Node) -> str:
        if isinstance(node, Literal):
            return _literal(node)
        if isinstance(node, Ident):
            return node.name
        if isinstance(node, Select):
            inner = f"{self.write(node.operand)}.{node.field}"
            return f"has({inner})" if node.test_only else inner
        if isinstance(node, Call):
            return self.call(node)
        if isinstance(node, ListExpr):
            items = ", ".join(self.write(e) for e in node.elements)
            if node.optional_indices:
                self.lowered = True
                flags = ", ".join("true" if i in node.optional_indices else "false" for i in range(len(node.elements)))
                return f"k8s_opt_list([{items}], [{flags}])"
            return f"[{items}]"
        if isinstance(node, MapExpr):
            if any(optional for _, _, optional in node.entries):
                self.lowered = True
                entries = ", ".join(f"[{self.write(k)}, {self.write(v)}]" for k, v, _ in node.entries)
                flags = ", ".join("true" if optional else "false" for _, _, optional in node.entries)
                return f"k8s_opt_map([{entries}], [{flags}])"
            return "{" + ", ".join(f"{self.write(k)}: {self.write(v)}" for k, v, _ in node.entries) + "}"
        if isinstance(node, Comprehension):
            return self.comprehension(node)
        raise TypeError(node)

    def call(self, node: Call) -> str:
        args = [self.write(a) for a in node.args]
        if node.function in _BINARY:
            return f"({args[0]} {_BINARY[node.function]} {args[1]})"
        if node.function == "!_":
            return f"!({args[0]})"
        if node.function == "-_":
            return f"-({args[0]})"
        if node.function == "_?_:_":
            return f"({args[0]} ? {args[1]} : {args[2]})"
        if node.function == "_[_]":
            return f"{args[0]}[{args[1]}]"
        if node.function == "_?._":
            self.lowered = True
            return f"k8s_opt_select({args[0]}, {args[1]})"
        if node.function == "_[?_]":
            self.lowered = True
            return f"k8s_opt_index({args[0]}, {args[1]})"
        overloads = {o.id for o in self.checked.overloads.get(node.id, [])}
        if node.function == "string" and overloads and overloads <= _NET_TO_STRING:
            self.lowered = True
            return f"k8s_net_to_string({args[0]})"
        name = node.function
        if "." in name and name not in _ENGINE_QUALIFIED:
            self.lowered = True
            name = _function_name(name)
        if node.target is not None:
            return f"{self.write(node.target)}.{name}({', '.join(args)})"
        return f"{name}({', '.join(args)})"

    def comprehension(self, node: Comprehension) -> str:
        args = node.macro_args
        if node.macro == "bind":
            self.lowered = True
            var = node.accu_var
            return f"[{self.write(args[1])}].map({var}, {self.write(args[2])})[0]"
        if node.macro == "sortBy":
            self.lowered = True
            listed = self.write(node.accu_init)
            return f"k8s_sort_by({listed}, {listed}.map({args[0].name if isinstance(args[0], Ident) else ''}, {self.write(args[1])}))"
        target = self.write(node.iter_range)
        if node.iter_var2 is None and node.macro not in _TWO_VARIABLE:
            macro = "exists_one" if node.macro == "exists_one" else node.macro
            rest = ", ".join(self.write(a) for a in args[1:])
            return f"{target}.{macro}({node.iter_var}, {rest})"
        # Two variables: range over [key, value] pairs, each variable bound from the pair.
        self.lowered = True
        self.depth += 1
        pair = f"k8s__p{self.depth}"
        key, value = node.iter_var, node.iter_var2 or "k8s__unused"

        def bound(expr: Node) -> str:
            return f"[{pair}[0]].map({key}, [{pair}[1]].map({value}, {self.write(expr)})[0])[0]"

        exprs = list(args[2:])
        source = f"k8s_pairs({target})"
        if node.macro in ("all", "exists"):
            text = f"{source}.{node.macro}({pair}, {bound(exprs[0])})"
        elif node.macro == "exists_one":
            text = f"{source}.exists_one({pair}, {bound(exprs[0])})"
        else:
            predicate = bound(exprs[0]) if len(exprs) == 2 else None
            result = exprs[-1]
            if node.macro == "transformList":
                element = bound(result)
            elif node.macro == "transformMap":
                element = f"[{pair}[0], {bound(result)}]"
            else:
                element = bound(result)
            mapped = f"{source}.map({pair}, {predicate}, {element})" if predicate else f"{source}.map({pair}, {element})"
            text = {"transformList": mapped, "transformMap": f"k8s_pairs_to_map({mapped})", "transformMapEntry": f"k8s_merge_maps({mapped})"}[node.macro]
        self.depth -= 1
        return text


def _literal(node: Literal) -> str:
    if node.kind == "string":
        return json.dumps(node.value, ensure_ascii=False)
    if node.kind == "bytes":
        assert isinstance(node.value, bytes)
        return 'b"' + "".join(f"\\x{b:02x}" for b in node.value) + '"'
    if node.kind == "bool":
        return "true" if node.value else "false"
    if node.kind == "null":
        return "null"
    if node.kind == "uint":
        return f"{node.value}u"
    if node.kind == "double":
        assert isinstance(node.value, float)
        if math.isinf(node.value) or math.isnan(node.value):
            return f'double("{"NaN" if math.isnan(node.value) else ("+" if node.value > 0 else "-") + "Inf"}")'
        return f"({node.value!r})"
    return f"({node.value})"


def write(checked: Checked) -> str:
    """The expression as engine source, whether or not it needed lowering."""
    return _Writer(checked).write(checked.root)


def lower(checked: Checked) -> str | None:
    """The engine's source for the expression, or None when it runs as written."""
    writer = _Writer(checked)
    text = writer.write(checked.root)
    return text if writer.lowered else None

