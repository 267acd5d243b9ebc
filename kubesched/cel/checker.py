"""cel-go's type checker (checker/checker.go) over ``syntax``'s AST, in an ``Environment`` (the
DRA device environment unless given another).

It gives each node its type and each call the overloads that may serve it (what the cost
estimator needs), and reports what cel-go reports: undeclared references, calls no overload
accepts (``found no matching overload for '_==_' applied to '(string, int)'``), undefined
fields of the environment's object types (``device``), comprehension ranges that are neither list nor map, and mismatched
loop types; each at the node cel-go locates it at, in its display format.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import kubesched.cel.celtypes as t  # the module itself: the package's face imports this one
from .celtypes import CelType
from .declarations import FUNCTIONS, Overload
from .dra_device import DEVICE_ENVIRONMENT
from .environment import Environment
from .engine import engine
from .syntax import Call, Comprehension, Ident, ListExpr, Literal, MapExpr, Node, Select

__all__ = ["Checked", "check", "display_errors"]

_LITERAL_TYPES = {"int": t.INT, "uint": t.UINT, "double": t.DOUBLE, "string": t.STRING, "bytes": t.BYTES, "bool": t.BOOL, "null": t.NULL}
_TYPE_IDENTS = {"int": t.INT, "uint": t.UINT, "double": t.DOUBLE, "string": t.STRING, "bytes": t.BYTES, "bool": t.BOOL,
                "null_type": t.NULL, "list": t.list_of(t.DYN), "map": t.map_of(t.DYN, t.DYN), "type": t.type_of(t.DYN), "dyn": t.DYN}
_MAX_ERRORS = 100


@dataclass(slots=True)
class Checked:
    """The checker's result: types and overloads by node id, errors as (offset, message)."""

    root: Node
    types: dict[int, CelType] = field(default_factory=dict)
    overloads: dict[int, list[Overload]] = field(default_factory=dict)
    errors: list[tuple[int, str]] = field(default_factory=list)
    mapping: t.Mapping = field(default_factory=dict)

    def type_of(self, node: Node) -> CelType:
        return t.substitute(self.mapping, self.types.get(node.id, t.DYN))

    @property
    def output_type(self) -> CelType:
        return t.substitute(self.mapping, self.types.get(self.root.id, t.DYN), True)


class _Checker:
    def __init__(self, root: Node, env: Environment) -> None:
        self.result = Checked(root)
        self.scopes: list[dict[str, CelType]] = []
        self.variables = env.variables
        self.fields = env.fields

    def error(self, node: Node, message: str) -> None:
        self.result.errors.append((node.offset, message))

    def set(self, node: Node, type_: CelType) -> CelType:
        self.result.types[node.id] = type_
        return type_

    def sub(self, type_: CelType) -> CelType:
        return t.substitute(self.result.mapping, type_)

    def assignable(self, expected: CelType, actual: CelType) -> bool:
        trial = dict(self.result.mapping)
        if t.assignable(trial, expected, actual):
            self.result.mapping = trial
            return True
        return False

    def check(self, node: Node) -> CelType:
        if isinstance(node, Literal):
            return self.set(node, _LITERAL_TYPES[node.kind])
        if isinstance(node, Ident):
            return self.set(node, self.ident(node))
        if isinstance(node, Select):
            return self.set(node, self.select(node))
        if isinstance(node, Call):
            return self.set(node, self.call(node))
        if isinstance(node, ListExpr):
            return self.set(node, self.list_(node))
        if isinstance(node, MapExpr):
            return self.set(node, self.map_(node))
        if isinstance(node, Comprehension):
            return self.set(node, self.comprehension(node))
        raise TypeError(node)

    def ident(self, node: Ident) -> CelType:
        for scope in reversed(self.scopes):
            if node.name in scope:
                return scope[node.name]
        found = self.variables.get(node.name) or _TYPE_IDENTS.get(node.name)
        if found is not None:
            return found if node.name in self.variables else t.type_of(found)
        self.error(node, f"undeclared reference to '{node.name}' (in container '')")
        return t.ERROR

    def select(self, node: Select) -> CelType:
        operand = self.sub(self.check(node.operand))
        optional = False
        if not node.test_only and operand.kind == "opaque" and operand.name == "optional_type":
            operand, optional = operand.params[0], True
        result = self.field(node, operand, node.field)
        if node.test_only:
            return t.BOOL
        return t.optional_of(result) if optional else result

    def field(self, node: Node, operand: CelType, name: str) -> CelType:
        if operand.kind == "map":
            return operand.params[1]
        declared = self.fields.get(operand) if operand.kind == "struct" else None
        if declared is not None:
            found = declared.get(name)
            if found is None:
                self.error(node, f"undefined field '{name}'")
                return t.ERROR
            return found
        if operand.kind == "struct":
            self.error(node, f"undefined field '{name}'")
            return t.ERROR
        if operand.kind == "param":
            return t.DYN
        if operand.kind not in ("dyn", "any", "error"):
            self.error(node, f"type '{operand}' does not support field selection")
        return t.DYN

    def call(self, node: Call) -> CelType:
        if node.function == "_?._":
            return self.opt_select(node)
        arg_types = [self.check(arg) for arg in node.args]
        if node.target is None:
            overloads = FUNCTIONS.get(node.function)
            if overloads is None:
                self.error(node, f"undeclared reference to '{node.function}' (in container '')")
                return t.ERROR
            return self.resolve(node, node.function, overloads, None, arg_types)
        qualified = _qualified_name(node.target)
        if qualified is not None and not self.is_local(qualified.partition(".")[0]):
            name = f"{qualified}.{node.function}"
            if name in FUNCTIONS:
                node.function, node.target = name, None
                return self.resolve(node, name, FUNCTIONS[name], None, arg_types)
        target_type = self.check(node.target)
        overloads = FUNCTIONS.get(node.function)
        if overloads is None:
            self.error(node, f"undeclared reference to '{node.function}' (in container '')")
            return t.ERROR
        return self.resolve(node, node.function, overloads, target_type, arg_types)

    def is_local(self, name: str) -> bool:
        return any(name in scope for scope in self.scopes) or name in self.variables

    def resolve(self, node: Call, name: str, overloads: list[Overload], target: CelType | None, arg_types: list[CelType]) -> CelType:
        actual = ([target] if target is not None else []) + arg_types
        result: CelType | None = None
        matched: list[Overload] = []
        for overload in overloads:
            if overload.member != (target is not None) or len(overload.args) != len(actual):
                continue
            renames = {p.name: t.fresh() for p in _params(overload)}
            args = [_rename(a, renames) for a in overload.args]
            if all(self.assignable_list(args, actual)):
                matched.append(overload)
                found = self.sub(_rename(overload.result, renames))
                if result is None:
                    result = found
                elif result.kind not in ("dyn", "any") and found != result:
                    result = t.DYN
        if result is None:
            shown = [t.substitute(self.result.mapping, a, True) for a in actual]
            if target is not None:
                signature = f"{shown[0]}.({', '.join(str(a) for a in shown[1:])})"
            else:
                signature = f"({', '.join(str(a) for a in shown)})"
            self.error(node, f"found no matching overload for '{name}' applied to '{signature}'")
            return t.ERROR
        self.result.overloads[node.id] = matched
        return result

    def assignable_list(self, expected: list[CelType], actual: list[CelType]) -> list[bool]:
        trial = dict(self.result.mapping)
        ok = all(t.assignable(trial, e, a) for e, a in zip(expected, actual))
        if ok:
            self.result.mapping = trial
        return [ok]

    def opt_select(self, node: Call) -> CelType:
        operand = self.sub(self.check(node.args[0]))
        field_name = node.args[1]
        assert isinstance(field_name, Literal)
        self.set(field_name, t.STRING)
        if operand.kind == "opaque" and operand.name == "optional_type":
            operand = operand.params[0]
        result = t.optional_of(self.field(node, operand, str(field_name.value)))
        self.result.overloads[node.id] = [Overload("select_optional_field", (t.DYN, t.STRING), result)]
        return result

    def list_(self, node: ListExpr) -> CelType:
        elem: CelType | None = None
        for i, element in enumerate(node.elements):
            found = self.check(element)
            if i in node.optional_indices:
                found = self.sub(found)
                if found.kind == "opaque" and found.name == "optional_type":
                    found = found.params[0]
                elif found.kind not in ("dyn", "any", "error", "param"):
                    self.error(element, f"expected type 'optional_type({found})' but found '{found}'")
            elem = self.join(element, elem, found)
        return t.list_of(elem if elem is not None else t.fresh())

    def map_(self, node: MapExpr) -> CelType:
        key: CelType | None = None
        value: CelType | None = None
        for k, v, optional in node.entries:
            key = self.join(k, key, self.check(k))
            found = self.check(v)
            if optional:
                found = self.sub(found)
                if found.kind == "opaque" and found.name == "optional_type":
                    found = found.params[0]
            value = self.join(v, value, found)
        return t.map_of(key if key is not None else t.fresh(), value if value is not None else t.fresh())

    def join(self, node: Node, previous: CelType | None, found: CelType) -> CelType:
        """An aggregate literal's element type (``joinTypes``; mixed types make it dyn)."""
        if previous is None:
            return found
        if self.assignable(previous, found):
            return previous if self.sub(previous).kind in ("dyn", "any") else found
        return t.DYN

    def comprehension(self, node: Comprehension) -> CelType:
        range_type = self.sub(self.check(node.iter_range))
        accu_type = self.check(node.accu_init)
        self.scopes.append({node.accu_var: accu_type})
        var2: CelType | None = None
        if range_type.kind == "list":
            var = range_type.params[0]
            if node.iter_var2 is not None:
                var, var2 = t.INT, var
        elif range_type.kind == "map":
            var = range_type.params[0]
            var2 = range_type.params[1]
        elif range_type.kind in ("dyn", "error", "param"):
            self.assignable(t.DYN, range_type)
            var = var2 = t.DYN
        else:
            self.error(node.iter_range, f"expression of type '{range_type}' cannot be range of a comprehension (must be list, map, or dynamic)")
            var = var2 = t.ERROR
        loop_scope = {node.iter_var: var}
        if node.iter_var2 is not None:
            loop_scope[node.iter_var2] = var2 if var2 is not None else t.DYN
        self.scopes.append(loop_scope)
        cond = self.check(node.loop_condition)
        if not self.assignable(t.BOOL, cond):
            self.error(node.loop_condition, f"expected type 'bool' but found '{self.sub(cond)}'")
        step = self.check(node.loop_step)
        if not self.assignable(accu_type, step):
            self.error(node.loop_step, f"expected type '{self.sub(accu_type)}' but found '{self.sub(step)}'")
        self.scopes.pop()
        result = self.check(node.result)
        self.scopes.pop()
        return self.sub(result)


def _qualified_name(node: Node) -> str | None:
    if isinstance(node, Ident):
        return node.name
    if isinstance(node, Select) and not node.test_only:
        prefix = _qualified_name(node.operand)
        return f"{prefix}.{node.field}" if prefix is not None else None
    return None


def _params(overload: Overload) -> set[CelType]:
    found: set[CelType] = set()

    def walk(type_: CelType) -> None:
        if type_.kind == "param":
            found.add(type_)
        for p in type_.params:
            walk(p)

    for arg in (*overload.args, overload.result):
        walk(arg)
    return found


def _rename(type_: CelType, renames: dict[str, CelType]) -> CelType:
    if type_.kind == "param":
        return renames.get(type_.name, type_)
    if type_.params:
        return CelType(type_.kind, type_.name, tuple(_rename(p, renames) for p in type_.params))
    return type_


def check(root: Node, env: Environment = DEVICE_ENVIRONMENT, validators: bool = True) -> Checked:
    """Type check ``root`` in ``env`` (by default the DRA device environment); then, when it type
    checks, the base environment's AST validators (homogeneous aggregate literals, literal
    arguments) unless ``validators`` is False."""
    checker = _Checker(root, env)
    checker.check(root)
    if validators and not checker.result.errors:
        _homogeneous_literals(checker.result, root)
        _literal_arguments(checker.result, root)
    return checker.result


def _literal_arguments(checked: Checked, root: Node) -> None:
    """cel-go's literal validators in Kubernetes' base environment: a literal pattern given to
    ``matches`` (its first argument, the receiver aside) must compile (the engine's regex
    syntax, RE2's), a literal given to ``duration()`` or ``timestamp()`` must convert."""
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(_children(node))
        if not isinstance(node, Call) or node.function not in _LITERAL_VALIDATED or not node.args:
            continue
        argument = node.args[0]
        if isinstance(argument, Literal) and isinstance(argument.value, str):
            probe = _LITERAL_VALIDATED[node.function].format(json.dumps(argument.value))
            try:
                engine().evaluate(probe)
            except Exception:  # the engine raises builtin exception types for CEL errors
                checked.errors.append((argument.offset, f"invalid {node.function} argument"))


_LITERAL_VALIDATED = {"matches": '"".matches({})', "duration": "duration({})", "timestamp": "timestamp({})"}


def _children(node: Node) -> list[Node]:
    if isinstance(node, Select):
        return [node.operand]
    if isinstance(node, Call):
        return ([node.target] if node.target is not None else []) + node.args
    if isinstance(node, ListExpr):
        return list(node.elements)
    if isinstance(node, MapExpr):
        return [n for k, v, _ in node.entries for n in (k, v)]
    if isinstance(node, Comprehension):
        return [node.iter_range, node.accu_init, node.loop_condition, node.loop_step, node.result]
    return []


def _homogeneous_literals(checked: Checked, root: Node) -> None:
    """``cel.ValidateHomogeneousAggregateLiterals`` (Kubernetes' base environment since 1.29):
    every element of a list literal, every key and every value of a map literal, of one type."""

    def element_type(node: Node, optional: bool) -> CelType:
        found = t.substitute(checked.mapping, checked.types.get(node.id, t.DYN), True)
        return found.params[0] if optional and found.params else found

    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, exempt = stack.pop()
        # Literals inside a format() call are exempt (cel-go's string format validator says so).
        inside_format = exempt or (isinstance(node, Call) and node.function == "format")
        stack.extend((child, inside_format) for child in _children(node))
        if exempt:
            continue
        if isinstance(node, ListExpr):
            first: CelType | None = None
            for i, element in enumerate(node.elements):
                found = element_type(element, i in node.optional_indices)
                if first is None:
                    first = found
                elif found != first:
                    checked.errors.append((element.offset, f"expected type '{first}' but found '{found}'"))
                    break
        elif isinstance(node, MapExpr) and node.entries:
            key0 = element_type(node.entries[0][0], False)
            value0 = element_type(node.entries[0][1], node.entries[0][2])
            for key, value, optional in node.entries[1:]:
                if element_type(key, False) != key0:
                    checked.errors.append((key.offset, f"expected type '{key0}' but found '{element_type(key, False)}'"))
                if element_type(value, optional) != value0:
                    checked.errors.append((value.offset, f"expected type '{value0}' but found '{element_type(value, optional)}'"))


def display_errors(expression: str, errors: list[tuple[int, str]]) -> str:
    """cel-go's ``Issues.String()``: each error as ``ERROR: <input>:line:col: msg`` with the
    line and a caret under the column, sorted by position."""
    out = []
    ordered = sorted(errors, key=lambda e: _line_col(expression, e[0]))
    for offset, message in ordered[:_MAX_ERRORS]:
        line, column = _line_col(expression, offset)
        text = expression.split("\n")[line - 1]
        snippet = text.replace("\t", " ")
        marker = "".join("\uff0e" if len(ch.encode()) > 1 else "." for ch in snippet[:column])
        marker += "\uff3e" if column < len(snippet) and len(snippet[column].encode()) > 1 else "^"
        out.append(f"ERROR: <input>:{line}:{column + 1}: {message}\n | {snippet}\n | {marker}")
    if len(errors) > _MAX_ERRORS:
        out.append(f"{len(errors) - _MAX_ERRORS} more errors were truncated")
    return "\n".join(out)


def _line_col(expression: str, offset: int) -> tuple[int, int]:
    line = expression.count("\n", 0, offset) + 1
    start = expression.rfind("\n", 0, offset) + 1
    return line, offset - start
