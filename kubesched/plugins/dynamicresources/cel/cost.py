"""cel-go's worst-case cost estimate (checker/cost.go) with Kubernetes' library estimator
(apiserver/pkg/cel/library/cost.go) and the DRA size estimator (dynamic-resource-allocation/cel).

The API server refuses a selector whose estimate exceeds ``CELSelectorExpressionMaxCost``
(1,000,000) ("too complex, exceeds cost limit"); the scheduler evaluates with that limit as
the runtime cost budget. Costs are pairs (min, max) of unsigned 64-bit integers that saturate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from .celtypes import CelType
from .checker import Checked
from .declarations import CIDR, IP, QUANTITY, SEMVER, URL, FORMAT
from .syntax import ACCUMULATOR, Call, Comprehension, Ident, ListExpr, Literal, MapExpr, Node, Select

__all__ = ["Estimate", "estimate_cost", "device_sizes", "DeclSize", "DEVICE_SIZES", "UNKNOWN"]

_U64 = 2**64 - 1
_STRING_FACTOR = 0.1  # common.StringTraversalCostFactor
_REGEX_FACTOR = 0.25  # common.RegexStringLengthCostFactor
_LIST_CREATE, _MAP_CREATE = 10, 30
_MAX_FORMAT_SIZE = 64  # cel.MaxFormatSize


@dataclass(slots=True, frozen=True)
class Estimate:
    """A (min, max) size or cost."""

    min: int
    max: int

    def add(self, other: Estimate) -> Estimate:
        return Estimate(min(self.min + other.min, _U64), min(self.max + other.max, _U64))

    def multiply(self, other: Estimate) -> Estimate:
        return Estimate(min(self.min * other.min, _U64), min(self.max * other.max, _U64))

    def factor(self, per_unit: float) -> Estimate:
        return Estimate(_by_factor(self.min, per_unit), _by_factor(self.max, per_unit))

    def union(self, other: Estimate) -> Estimate:
        return Estimate(min(self.min, other.min), max(self.max, other.max))


def _by_factor(x: int, y: float) -> int:
    fx = float(x)
    if fx > 0 and y > 0 and fx > _U64 / y:
        return _U64
    ceil = math.ceil(fx * y)
    return _U64 if ceil >= 2.0**64 else int(ceil)


def _fixed(n: int) -> Estimate:
    return Estimate(n, n)


UNKNOWN = Estimate(0, _U64)
_ZERO = _fixed(0)
_ONE = _fixed(1)


@dataclass(slots=True, frozen=True)
class DeclSize:
    """A declared type's maximum size (``DeclType.MaxElements``) and its parts."""

    max: int
    fields: tuple[tuple[str, DeclSize], ...] = ()
    key: DeclSize | None = None
    elem: DeclSize | None = None
    attribute: bool = False  # upstream's attributeType: any name of an attribute map has it


def _device_sizes(driver: int, domain: int, ident: int, attribute: int, domains: int, ids: int) -> DeclSize:
    value = DeclSize(attribute, attribute=True)
    inner_attributes = DeclSize(ids, key=DeclSize(ident), elem=value)
    inner_capacity = DeclSize(ids, key=DeclSize(ident), elem=DeclSize(0))
    return DeclSize(0, fields=(
        ("driver", DeclSize(driver)),
        ("allowMultipleAllocations", DeclSize(1)),
        ("attributes", DeclSize(domains, key=DeclSize(domain), elem=inner_attributes)),
        ("capacity", DeclSize(domains, key=DeclSize(domain), elem=inner_capacity)),
    ))


# DriverNameMaxLength, DeviceMaxDomainLength, DeviceMaxIDLength, DeviceAttributeMaxValueLength,
# ResourceSliceMaxAttributesAndCapacitiesPerDevice.
DEVICE_SIZES = _device_sizes(63, 63, 32, 64, 32, 32)


def device_sizes(driver: int, domain: int, ident: int, attribute: int, domains: int, ids: int) -> DeclSize:
    """The sizes of one device's values (for its own bound on an evaluation's cost)."""
    return _device_sizes(driver, domain, ident, attribute, domains, ids)


def _size_from_path(path: list[str] | None, device: DeclSize) -> Estimate | None:
    """The DRA ``sizeEstimator``: sizes of what ``device`` holds, by path."""
    if not path or path[0] != "device":
        return None
    node = device
    for name in path[1:]:
        if name in ("@items", "@values"):
            if node.elem is None:
                return None
            node = node.elem
        elif name == "@keys":
            if node.key is None:
                return None
            node = node.key
        else:
            found = dict(node.fields).get(name)
            if found is None:
                if node.elem is not None and node.elem.attribute:
                    node = node.elem
                    continue
                return None
            node = found
    return Estimate(0, node.max)


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


@dataclass(slots=True)
class _AstNode:
    """What an estimator sees of an argument: its path, type, node and computed size."""

    path: list[str] | None
    type: CelType
    expr: Node | None
    size: Estimate | None


@dataclass(slots=True)
class _Coster:
    checked: Checked
    device: DeclSize
    paths: dict[int, list[str]] = field(default_factory=dict)
    locals: dict[str, list[_Local]] = field(default_factory=dict)
    sizes: dict[int, Estimate] = field(default_factory=dict)
    entries: dict[int, _EntrySize] = field(default_factory=dict)

    def cost(self, e: Node) -> Estimate:
        if isinstance(e, Literal):
            return _ZERO
        if isinstance(e, Ident):
            local = self.peek(e.name)
            self.paths[e.id] = list(local.path or []) if local is not None else [e.name]
            return _ONE
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
        return _ZERO

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
            total = total.add(_ONE)
        self.paths[e.id] = self.path(e.operand) + [e.field]
        return total

    def node(self, e: Node) -> _AstNode:
        path: list[str] | None = self.path(e)
        if path and path[0] in (ACCUMULATOR, "@__result__"):
            path = None
        return _AstNode(path, self.type_of(e), e, self.compute_size(e))

    def call(self, e: Call) -> Estimate:
        if e.function == "dyn" and e.target is None and len(e.args) == 1:
            arg_cost = self.cost(e.args[0])
            self.copy_sizes(e, e.args[0])
            return _ONE.add(arg_cost)
        arg_costs = [self.cost(arg) for arg in e.args]
        arg_nodes = [self.node(arg) for arg in e.args]
        overloads = self.checked.overloads.get(e.id, [])
        if not overloads:
            return _ZERO
        total = _ZERO
        target: _AstNode | None = None
        if e.target is not None:
            total = total.add(self.cost(e.target))
            target = self.node(e.target)
        fn_cost = Estimate(_U64, 0)
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
        total = _ZERO
        item = Estimate(0 if not e.elements else _U64, 0)
        for element in e.elements:
            total = total.add(self.cost(element))
            item = item.union(self.size_or_unknown(element))
        self.entries[e.id] = _EntrySize("list", _ONE, item)
        return total.add(_fixed(_LIST_CREATE))

    def create_map(self, e: MapExpr) -> Estimate:
        total = _ZERO
        empty = not e.entries
        key = Estimate(0 if empty else _U64, 0)
        val = Estimate(0 if empty else _U64, 0)
        for k, v, _ in e.entries:
            total = total.add(self.cost(k)).add(self.cost(v))
            key = key.union(self.size_or_unknown(k))
            val = val.union(self.size_or_unknown(v))
        self.entries[e.id] = _EntrySize("map", key, val)
        return total.add(_fixed(_MAP_CREATE))

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

    def function_cost(self, e: Call, function: str, overload: str, target: _AstNode | None, args: list[_AstNode], arg_costs: list[Estimate]) -> tuple[Estimate, Estimate | None]:
        arg_sum = _ZERO
        for cost in arg_costs:
            arg_sum = arg_sum.add(cost)
        special = _OVERLOAD_ESTIMATORS.get(overload)
        if special is not None:
            found = special(self, target, args)
            if found is not None:
                return found[0].add(arg_sum), found[1]
        library = self.library_cost(function, overload, target, args)
        if library is not None:
            return library[0].add(arg_sum), library[1]
        return self.builtin_cost(e, overload, target, args, arg_costs, arg_sum)

    def builtin_cost(self, e: Call, overload: str, target: _AstNode | None, args: list[_AstNode], arg_costs: list[Estimate], arg_sum: Estimate) -> tuple[Estimate, Estimate | None]:
        if overload == "string_format" and target is not None:
            return self.sized(target).factor(_STRING_FACTOR).add(arg_sum), None
        if overload == "string_to_bytes" and len(args) == 1:
            sz = self.sized(args[0])
            return sz.factor(_STRING_FACTOR).add(arg_sum), Estimate(sz.min, min(sz.max * 4, _U64))
        if overload == "bytes_to_string" and len(args) == 1:
            sz = self.sized(args[0])
            return sz.factor(_STRING_FACTOR).add(arg_sum), Estimate(sz.min // 4, sz.max)
        if overload == "strings_quote" and len(args) == 1:
            sz = self.sized(args[0])
            return sz.factor(_STRING_FACTOR).add(arg_sum), Estimate(sz.min + 2, min(sz.max * 2 + 2, _U64))
        if overload in ("starts_with_string", "ends_with_string") and len(args) == 1:
            return self.sized(args[0]).factor(_STRING_FACTOR).add(arg_sum), None
        if overload == "in_list" and len(args) == 2:
            return self.sized(args[1]).factor(1).add(arg_sum), None
        if overload == "matches_string" and target is not None and len(args) == 1:
            string_cost = self.sized(target).add(_ONE).factor(_STRING_FACTOR)
            regex_cost = self.sized(args[0]).factor(_REGEX_FACTOR)
            return string_cost.multiply(regex_cost).add(arg_sum), None
        if overload == "contains_string" and target is not None and len(args) == 1:
            return self.sized(target).factor(_STRING_FACTOR).multiply(self.sized(args[0]).factor(_STRING_FACTOR)).add(arg_sum), None
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
                return _ONE.add(arg_sum), result
            return result.factor(_STRING_FACTOR).add(arg_sum), result
        if overload in _SIZED_COMPARISONS:
            lhs, rhs = self.sized(args[0]), self.sized(args[1])
            smallest = min(lhs.max, rhs.max)
            return Estimate(1 if smallest > 0 else 0, smallest).factor(_STRING_FACTOR).add(arg_sum), None
        return _ONE.add(arg_sum), None

    def library_cost(self, function: str, overload: str, target: _AstNode | None, args: list[_AstNode]) -> tuple[Estimate, Estimate | None] | None:
        """Kubernetes' ``library.CostEstimator.EstimateCallCost``."""
        if function in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
            if target.type.params:
                element = target.type.params[0]
                elem_cost = _ONE
                if element.kind in ("string", "bytes"):
                    item = _AstNode(target.path + ["@items"] if target.path is not None else None, element, None, None)
                    elem_cost = elem_cost.add(self.sized(item).factor(_STRING_FACTOR))
                return self.sized(target).multiply(elem_cost), None
            return self.sized(target).factor(_STRING_FACTOR), None
        if function == "url" and len(args) == 1:
            sz = self.sized(args[0])
            return sz.factor(_STRING_FACTOR), sz
        if function in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
            sz = self.sized(target)
            return sz.factor(_STRING_FACTOR), sz
        if function == "replace" and target is not None and len(args) >= 2:
            return self.replace_cost(self.sized(target), self.sized(args[0]), self.sized(args[1]))
        if function == "split" and target is not None:
            sz = self.sized(target)
            limit = sz.max
            if len(args) > 1 and isinstance(args[1].expr, Literal) and args[1].expr.kind == "int":
                limit = _literal_int(args[1].expr.value)
            return sz.factor(2 * _STRING_FACTOR), Estimate(0, limit)
        if function == "join" and target is not None:
            list_size = self.sized(target)
            size = _ZERO
            if target.type.params:
                item = _AstNode(target.path + ["@items"] if target.path is not None else None, target.type.params[0], None, None)
                size = list_size.multiply(self.sized(item))
            if args:
                separators = Estimate(max(list_size.min - 1, 0), max(list_size.max - 1, 0))
                size = size.add(self.sized(args[0]).multiply(separators))
            return size.factor(_STRING_FACTOR), size
        if function in ("find", "findAll") and target is not None and args:
            sz = self.sized(target)
            string_cost = sz.add(_ONE).factor(_STRING_FACTOR)
            return string_cost.multiply(self.sized(args[0]).factor(_REGEX_FACTOR)), Estimate(0, sz.max)
        if function in ("cidr", "isIP", "isCIDR") and args:
            return self.sized(args[0]).factor(_STRING_FACTOR), None
        if function == "ip":
            if overload == "cidr_ip":
                return _ONE, None
            if args:
                return self.sized(args[0]).factor(_STRING_FACTOR), None
        if function == "ip.isCanonical" and args:
            return self.sized(args[0]).factor(2 * _STRING_FACTOR), None
        if function in ("masked", "prefixLength", "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast"):
            return _ONE, None
        if function in ("containsIP", "containsCIDR") and args:
            ip_size = Estimate(4, 16)
            cost = ip_size.add(ip_size).factor(_STRING_FACTOR)
            if function == "containsCIDR":
                cost = cost.add(ip_size.factor(_STRING_FACTOR)).add(_ONE)
            if overload in ("cidr_contains_ip_string", "cidr_contains_cidr_string"):
                cost = cost.add(self.sized(args[0]).factor(_STRING_FACTOR))
            return cost, None
        if function in ("quantity", "isQuantity", "semver", "isSemver") and args:
            return self.sized(args[0]).factor(_STRING_FACTOR), None
        if function == "format.named":
            return _ONE, None
        if function == "validate" and args:
            # MaxNameFormatRegexSize (128) times the regex factor, per character.
            return self.sized(args[0]).factor(_STRING_FACTOR).factor(128 * _REGEX_FACTOR), None
        if function in ("sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch",
                        "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery"):
            return _ONE, None
        if function == "_==_" and len(args) == 2:
            lhs, rhs = args
            if lhs.type == rhs.type:
                if lhs.type in (IP, CIDR, QUANTITY, SEMVER):
                    return _ONE, None
                if lhs.type == FORMAT:
                    return Estimate(1, _MAX_FORMAT_SIZE).factor(_STRING_FACTOR), None
                if lhs.type == URL:
                    size = _ONE
                    if rhs.size is not None:
                        size = rhs.size.union(rhs.size)  # upstream compares the right side with itself
                    return Estimate(1, size.max).factor(_STRING_FACTOR), None
        return None

    @staticmethod
    def replace_cost(sz: Estimate, to_replace: Estimate, replace_with: Estimate) -> tuple[Estimate, Estimate]:
        count_max = retained_max = count_min = retained_min = 0
        if to_replace.min == 0:
            count_max = sz.max + 1 if sz.max < _U64 else sz.max
            retained_max = sz.max
        elif replace_with.max <= to_replace.min:
            retained_max = sz.max
        else:
            count_max = math.ceil(sz.max / to_replace.min)
        if to_replace.max == 0:
            count_min = sz.min + 1 if sz.min < _U64 else sz.min
            retained_min = sz.min
        elif to_replace.max <= replace_with.min:
            retained_min = sz.min
        else:
            count_min = math.ceil(sz.min / to_replace.max)
        size = Estimate(count_min, count_max).multiply(replace_with).add(Estimate(retained_min, retained_max))
        return sz.factor(2 * _STRING_FACTOR), size

    # Sizes.
    def sized(self, node: _AstNode) -> Estimate:
        """``sizeEstimate``: the computed size, else the estimator's, else unknown."""
        if node.size is not None:
            return node.size
        found = _size_from_path(node.path, self.device)
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
        by_path = _size_from_path(self.path(e), self.device)
        if by_path is not None:
            self.sizes[e.id] = by_path
            return by_path
        if _is_scalar(self.type_of(e)):
            return _ONE
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
            return _fixed(len(str(e.value)))
        if e.kind == "bytes":
            return _fixed(len(e.value)) if isinstance(e.value, bytes) else None
        return _ONE
    if isinstance(e, ListExpr):
        return _fixed(len(e.elements))
    if isinstance(e, MapExpr):
        return _fixed(len(e.entries))
    return None


def _is_scalar(t: CelType) -> bool:
    if t.kind in ("bool", "double", "duration", "int", "timestamp", "uint"):
        return True
    return t.kind == "opaque" and t.name == "optional_type" and _is_scalar(t.params[0])


# cel-go extension libraries' overload estimators (sets, lists).
def _estimate_size(coster: _Coster, node: _AstNode) -> Estimate:
    return coster.sized(node)


def _int_literal(node: _AstNode, default: int) -> int:
    if isinstance(node.expr, Literal) and node.expr.kind == "int":
        return _literal_int(node.expr.value)
    return default


def _literal_int(value: object) -> int:
    """An int literal as cel-go's estimators read it (``uint64(i)``)."""
    return value % 2**64 if isinstance(value, int) else 0


def _list_call(factor: float, size: Estimate) -> tuple[Estimate, Estimate]:
    return size.factor(factor).add(_ONE).add(_fixed(_LIST_CREATE)), size


def _sets(factor: float) -> Callable[[_Coster, _AstNode | None, list[_AstNode]], tuple[Estimate, Estimate | None] | None]:
    def estimate(coster: _Coster, target: _AstNode | None, args: list[_AstNode]) -> tuple[Estimate, Estimate | None] | None:
        if len(args) != 2:
            return None
        return _estimate_size(coster, args[0]).multiply(_estimate_size(coster, args[1])).factor(factor).add(_ONE), None
    return estimate


def _slice(coster: _Coster, target: _AstNode | None, args: list[_AstNode]) -> tuple[Estimate, Estimate | None] | None:
    if target is None or len(args) != 2:
        return None
    sz = _estimate_size(coster, target)
    return _list_call(1, _fixed(max(_int_literal(args[1], sz.max) - _int_literal(args[0], 0), 0)))


def _range(coster: _Coster, target: _AstNode | None, args: list[_AstNode]) -> tuple[Estimate, Estimate | None] | None:
    if target is not None or len(args) != 1:
        return None
    return _list_call(1, _fixed(_int_literal(args[0], _U64)))


def _reverse(coster: _Coster, target: _AstNode | None, args: list[_AstNode]) -> tuple[Estimate, Estimate | None] | None:
    if target is None or args:
        return None
    return _list_call(1, _estimate_size(coster, target))


def _flatten(coster: _Coster, target: _AstNode | None, args: list[_AstNode]) -> tuple[Estimate, Estimate | None] | None:
    if target is None or len(args) > 1:
        return None
    depth = _int_literal(args[0], _U64) if args else 1
    return _list_call(float(depth), _estimate_size(coster, target))


def _distinct(coster: _Coster, target: _AstNode | None, args: list[_AstNode]) -> tuple[Estimate, Estimate | None] | None:
    if target is None or args:
        return None
    sz = _estimate_size(coster, target)
    return _list_call(2.0, sz.multiply(sz))


def _sort(coster: _Coster, target: _AstNode | None, args: list[_AstNode]) -> tuple[Estimate, Estimate | None] | None:
    node = target if not args else args[0]
    if target is None or len(args) > 1 or node is None:
        return None
    sz = _estimate_size(coster, node)
    element = node.type.params[0] if node.type.params else None
    factor = 2.0 + (_STRING_FACTOR if element is not None and element.kind in ("string", "bytes") else 0.0)
    return _list_call(factor, sz.multiply(sz))


_OVERLOAD_ESTIMATORS: dict[str, Callable[[_Coster, _AstNode | None, list[_AstNode]], tuple[Estimate, Estimate | None] | None]] = {
    "list_sets_contains_list": _sets(1), "list_sets_intersects_list": _sets(1), "list_sets_equivalent_list": _sets(2),
    "list_slice": _slice, "list_flatten": _flatten, "list_flatten_int": _flatten, "lists_range": _range,
    "list_reverse": _reverse, "list_distinct": _distinct,
}
_OVERLOAD_ESTIMATORS.update({f"list_{t}_{suffix}": _sort for t in ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
                             for suffix in ("sort", "sortByAssociatedKeys")})


def estimate_cost(checked: Checked, device: DeclSize = DEVICE_SIZES) -> Estimate:
    """The (min, max) cost of evaluating the checked expression, with ``device``'s sizes."""
    return _Coster(checked, device).cost(checked.root)
