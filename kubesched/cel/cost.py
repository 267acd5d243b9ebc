"""cel-go's worst-case cost estimate (checker/cost.go) with Kubernetes' library estimator
(apiserver/pkg/cel/library/cost.go) and the DRA size estimator (dynamic-resource-allocation/cel).

The API server refuses a selector whose estimate exceeds ``CELSelectorExpressionMaxCost``
(1,000,000) ("too complex, exceeds cost limit"); the scheduler evaluates with that limit as
the runtime cost budget. Costs are pairs (min, max) of unsigned 64-bit integers that saturate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .celtypes import CelType
from .checker import Checked
from .cost_library import OVERLOAD_ESTIMATORS, library_cost
from .dra_device import DEVICE_ENVIRONMENT
from .estimates import (
    LIST_CREATE, MAP_CREATE, ONE, REGEX_FACTOR, STRING_FACTOR, U64, UNKNOWN, ZERO, AstNode, DeclSize, Estimate, fixed,
    size_from_path,
)
from .syntax import ACCUMULATOR, Call, Comprehension, Ident, ListExpr, Literal, MapExpr, Node, Select

__all__ = ["Estimate", "SizeEstimator", "estimate_cost", "DeclSize", "UNKNOWN"]


@dataclass(slots=True)
class _EntrySize:
    container: str  # list map
    key: Estimate
    val: Estimate

    def union(self, other: _EntrySize | None) -> _EntrySize | None:
        if other is None:
            return None
        return _EntrySize(self.container, self.key.union(other.key), self.val.union(other.val))


@dataclass(slots=True)
class _Local:
    path: list[str] | None
    size: Estimate | None
    entry: _EntrySize | None


# An estimator's ``EstimateSize``: a node's size from its path and type, or None (unknown).
SizeEstimator = Callable[[list[str] | None, CelType], Estimate | None]


@dataclass(slots=True)
class _Coster:
    checked: Checked
    estimator: SizeEstimator
    paths: dict[int, list[str]] = field(default_factory=dict)
    locals: dict[str, list[_Local]] = field(default_factory=dict)
    sizes: dict[int, Estimate] = field(default_factory=dict)
    entries: dict[int, _EntrySize] = field(default_factory=dict)

    def cost(self, e: Node) -> Estimate:
        if isinstance(e, Literal):
            return ZERO
        if isinstance(e, Ident):
            local = self.peek(e.name)
            self.paths[e.id] = list(local.path or []) if local is not None else [e.name]
            return ONE
        if isinstance(e, Select):
            return self.select(e)
        if isinstance(e, Call):
            return self.call(e)
        if isinstance(e, ListExpr):
            return self.create_list(e)
        if isinstance(e, MapExpr):
            return self.create_map(e)
        if isinstance(e, Comprehension):
            return self.bind(e) if self.is_bind(e) else self.comprehension(e)
        return ZERO

    # Scopes of comprehension variables.
    def push(self, name: str, path: list[str] | None, size: Estimate | None, entry: _EntrySize | None) -> None:
        self.locals.setdefault(name, []).append(_Local(path, size, entry))

    def pop(self, name: str) -> None:
        self.locals[name].pop()

    def peek(self, name: str) -> _Local | None:
        stack = self.locals.get(name)
        return stack[-1] if stack else None

    def type_of(self, e: Node) -> CelType:
        return self.checked.type_of(e)

    def path(self, e: Node) -> list[str]:
        if isinstance(e, Ident):
            local = self.peek(e.name)
            if local is not None:
                return list(local.path or [])
        return list(self.paths.get(e.id, []))

    def select(self, e: Select) -> Estimate:
        if e.test_only:  # PresenceTestHasCost(false)
            return self.cost(e.operand)
        total = self.cost(e.operand)
        if self.type_of(e.operand).kind in ("map", "struct", "param"):
            total = total.add(ONE)
        self.paths[e.id] = self.path(e.operand) + [e.field]
        return total

    def node(self, e: Node) -> AstNode:
        path: list[str] | None = self.path(e)
        if path and path[0] in (ACCUMULATOR, "@__result__"):
            path = None
        return AstNode(path, self.type_of(e), e, self.compute_size(e))

    def call(self, e: Call) -> Estimate:
        if e.function == "dyn" and e.target is None and len(e.args) == 1:
            arg_cost = self.cost(e.args[0])
            self.copy_sizes(e, e.args[0])
            return ONE.add(arg_cost)
        arg_costs = [self.cost(arg) for arg in e.args]
        arg_nodes = [self.node(arg) for arg in e.args]
        overloads = self.checked.overloads.get(e.id, [])
        if not overloads:
            return ZERO
        total = ZERO
        target: AstNode | None = None
        if e.target is not None:
            total = total.add(self.cost(e.target))
            target = self.node(e.target)
        fn_cost = Estimate(U64, 0)
        result_size: Estimate | None = None
        for overload in overloads:
            cost, size = self.function_cost(e, e.function, overload.id, target, arg_nodes, arg_costs)
            fn_cost = fn_cost.union(cost)
            if size is not None:
                result_size = size if result_size is None else result_size.union(size)
            if overload.id in ("index_list", "index_map") and e.args:
                entry = self.entry_size(e.args[0])
                result_size = entry.val if entry is not None else None
                self.paths[e.id] = self.path(e.args[0]) + ["@items" if overload.id == "index_list" else "@values"]
            if result_size is None:
                result_size = self.compute_size(e)
        if result_size is not None:
            self.sizes[e.id] = result_size
        return total.add(fn_cost)

    def create_list(self, e: ListExpr) -> Estimate:
        total = ZERO
        item = Estimate(0 if not e.elements else U64, 0)
        for element in e.elements:
            total = total.add(self.cost(element))
            item = item.union(self.size_or_unknown(element))
        self.entries[e.id] = _EntrySize("list", ONE, item)
        return total.add(fixed(LIST_CREATE))

    def create_map(self, e: MapExpr) -> Estimate:
        total = ZERO
        empty = not e.entries
        key = Estimate(0 if empty else U64, 0)
        val = Estimate(0 if empty else U64, 0)
        for k, v, _ in e.entries:
            total = total.add(self.cost(k)).add(self.cost(v))
            key = key.union(self.size_or_unknown(k))
            val = val.union(self.size_or_unknown(v))
        self.entries[e.id] = _EntrySize("map", key, val)
        return total.add(fixed(MAP_CREATE))

    def container(self, entry: _EntrySize | None, range_: Node) -> str:
        if entry is not None:
            return entry.container
        return self.type_of(range_).kind

    def comprehension(self, e: Comprehension) -> Estimate:
        total = self.cost(e.iter_range).add(self.cost(e.accu_init))
        self.push(e.accu_var, self.path(e.accu_init), self.compute_size(e.accu_init), self.entry_size(e.accu_init))
        entry = self.entry_size(e.iter_range)
        range_path = self.path(e.iter_range)
        is_list = self.container(entry, e.iter_range) == "list"
        if e.iter_var2 is not None:
            self.push(e.iter_var, range_path + ["@indices" if is_list else "@keys"], entry.key if entry else None, None)
            self.push(e.iter_var2, range_path + ["@items" if is_list else "@values"], entry.val if entry else None, None)
        else:
            size = (entry.val if is_list else entry.key) if entry is not None else None
            self.push(e.iter_var, range_path + ["@items" if is_list else "@keys"], size, None)
        loop = self.cost(e.loop_condition)
        step = self.cost(e.loop_step)
        self.pop(e.iter_var)
        if e.iter_var2 is not None:
            self.pop(e.iter_var2)
        total = total.add(self.cost(e.result))
        self.pop(e.accu_var)
        count = self.size_or_unknown(e.iter_range)
        total = total.add(count.multiply(step.add(loop)))
        if isinstance(e.accu_init, Literal):
            init_size = self.compute_size(e.accu_init)
            if init_size is not None:
                self.sizes[e.id] = init_size
        elif isinstance(e.accu_init, (ListExpr, MapExpr)):
            self.sizes[e.id] = count
            step_entry = self.entry_size(e.loop_step)
            if step_entry is not None:
                self.entries[e.id] = step_entry
        return total

    @staticmethod
    def is_bind(e: Comprehension) -> bool:
        return (isinstance(e.iter_range, ListExpr) and not e.iter_range.elements and isinstance(e.loop_condition, Literal)
                and e.loop_condition.value is False and e.accu_var != ACCUMULATOR)

    def bind(self, e: Comprehension) -> Estimate:
        total = self.cost(e.iter_range).add(self.cost(e.accu_init))
        self.push(e.accu_var, self.path(e.accu_init), self.compute_size(e.accu_init), self.entry_size(e.accu_init))
        total = total.add(self.cost(e.result))
        self.pop(e.accu_var)
        self.copy_sizes(e, e.result)
        return total

    def function_cost(self, e: Call, function: str, overload: str, target: AstNode | None, args: list[AstNode], arg_costs: list[Estimate]) -> tuple[Estimate, Estimate | None]:
        arg_sum = ZERO
        for cost in arg_costs:
            arg_sum = arg_sum.add(cost)
        special = OVERLOAD_ESTIMATORS.get(overload)
        if special is not None:
            found = special(self.sized, target, args)
            if found is not None:
                return found[0].add(arg_sum), found[1]
        library = library_cost(self.sized, function, overload, target, args)
        if library is not None:
            return library[0].add(arg_sum), library[1]
        return self.builtin_cost(e, overload, target, args, arg_costs, arg_sum)

    def builtin_cost(self, e: Call, overload: str, target: AstNode | None, args: list[AstNode], arg_costs: list[Estimate], arg_sum: Estimate) -> tuple[Estimate, Estimate | None]:
        if overload == "string_format" and target is not None:
            return self.sized(target).factor(STRING_FACTOR).add(arg_sum), None
        if overload == "string_to_bytes" and len(args) == 1:
            sz = self.sized(args[0])
            return sz.factor(STRING_FACTOR).add(arg_sum), Estimate(sz.min, min(sz.max * 4, U64))
        if overload == "bytes_to_string" and len(args) == 1:
            sz = self.sized(args[0])
            return sz.factor(STRING_FACTOR).add(arg_sum), Estimate(sz.min // 4, sz.max)
        if overload == "strings_quote" and len(args) == 1:
            sz = self.sized(args[0])
            return sz.factor(STRING_FACTOR).add(arg_sum), Estimate(sz.min + 2, min(sz.max * 2 + 2, U64))
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return self.sized(args[0]).factor(STRING_FACTOR).add(arg_sum), None
        if overload == "in_list" and len(args) == 2:
            return self.sized(args[1]).factor(1).add(arg_sum), None
        if overload == "matches_string" and target is not None and len(args) == 1:
            string_cost = self.sized(target).add(ONE).factor(STRING_FACTOR)
            regex_cost = self.sized(args[0]).factor(REGEX_FACTOR)
            return string_cost.multiply(regex_cost).add(arg_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            return self.sized(target).factor(STRING_FACTOR).multiply(self.sized(args[0]).factor(STRING_FACTOR)).add(arg_sum), None
        if overload in ("logical_or", "logical_and"):
            lhs, rhs = arg_costs[0], arg_costs[1]
            return Estimate(lhs.min, lhs.add(rhs).max), None
        if overload == "conditional":
            size = self.sized(args[1]).union(self.sized(args[2]))
            first = self.entry_size(e.args[1])
            joined = first.union(self.entry_size(e.args[2])) if first is not None else None
            if joined is not None:
                self.entries[e.id] = joined
            return arg_costs[0].add(arg_costs[1].union(arg_costs[2])), size
        if overload in ("add_string", "add_bytes", "add_list") and len(args) == 2:
            result = self.sized(args[0]).add(self.sized(args[1]))
            left = self.entry_size(e.args[0])
            joined = left.union(self.entry_size(e.args[1])) if left is not None else None
            if joined is not None:
                self.entries[e.id] = joined
            if overload == "add_list":
                return ONE.add(arg_sum), result
            return result.factor(STRING_FACTOR).add(arg_sum), result
        if overload in _SIZED_COMPARISONS:
            lhs, rhs = self.sized(args[0]), self.sized(args[1])
            smallest = min(lhs.max, rhs.max)
            return Estimate(1 if smallest > 0 else 0, smallest).factor(STRING_FACTOR).add(arg_sum), None
        return ONE.add(arg_sum), None

    # Sizes.
    def sized(self, node: AstNode) -> Estimate:
        """``sizeEstimate``: the computed size, else the estimator's, else unknown."""
        if node.size is not None:
            return node.size
        found = self.estimator(node.path, node.type)
        return found if found is not None else UNKNOWN

    def size_or_unknown(self, e: Node) -> Estimate:
        found = self.compute_size(e)
        return found if found is not None else UNKNOWN

    def copy_sizes(self, dst: Node, src: Node) -> None:
        size = self.compute_size(src)
        if size is not None:
            self.sizes[dst.id] = size
        entry = self.entry_size(src)
        if entry is not None:
            self.entries[dst.id] = entry

    def compute_size(self, e: Node) -> Estimate | None:
        found = self.sizes.get(e.id)
        if found is not None:
            return found
        literal = _expr_size(e)
        if literal is not None:
            return literal
        by_path = self.estimator(self.path(e), self.type_of(e))
        if by_path is not None:
            self.sizes[e.id] = by_path
            return by_path
        if _is_scalar(self.type_of(e)):
            return ONE
        if isinstance(e, Ident):
            local = self.peek(e.name)
            if local is not None and local.size is not None:
                return local.size
        return None

    def entry_size(self, e: Node) -> _EntrySize | None:
        found = self.entries.get(e.id)
        if found is not None:
            return found
        if isinstance(e, Ident):
            local = self.peek(e.name)
            if local is not None:
                return local.entry
        return None


_SIZED_COMPARISONS = frozenset(
    ["equals", "not_equals"] + [f"{op}_{t}" for op in ("less", "greater", "less_equals", "greater_equals") for t in ("string", "bytes")]
)


def _expr_size(e: Node) -> Estimate | None:
    if isinstance(e, Literal):
        if e.kind == "string":
            return fixed(len(str(e.value)))
        if e.kind == "bytes":
            return fixed(len(e.value)) if isinstance(e.value, bytes) else None
        return ONE
    if isinstance(e, ListExpr):
        return fixed(len(e.elements))
    if isinstance(e, MapExpr):
        return fixed(len(e.entries))
    return None


def _is_scalar(t: CelType) -> bool:
    if t.kind in ("bool", "double", "duration", "int", "timestamp", "uint"):
        return True
    return t.kind == "opaque" and t.name == "optional_type" and _is_scalar(t.params[0])


def estimate_cost(checked: Checked, sizes: Mapping[str, DeclSize] = DEVICE_ENVIRONMENT.sizes,
                  estimator: SizeEstimator | None = None) -> Estimate:
    """The (min, max) cost of evaluating the checked expression: sizes from ``estimator``, by
    default by path in ``sizes`` (each variable's declared sizes; the DRA device
    environment's unless given others)."""
    if estimator is None:
        def estimator(path: list[str] | None, _type: CelType) -> Estimate | None:
            return size_from_path(path, sizes)
    return _Coster(checked, estimator).cost(checked.root)
