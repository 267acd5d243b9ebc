"""Device selectors: CEL expressions compiled once, evaluated against a device.

Upstream (``k8s.io/dynamic-resource-allocation/cel``) declares ``device`` with ``driver``,
``allowMultipleAllocations``, ``attributes[domain][id]`` (int, bool, string, or a semver for
version attributes) and ``capacity[domain][id]`` (quantities). An attribute or capacity name
without a domain belongs to the driver's domain; a domain the device lacks reads as an empty
map, so ``device.attributes["other"].x`` fails with ``no such key: x`` (a runtime error, which
the allocator turns into an error, not into "no match").

Compiling does what upstream's compiler does before anything runs (``frontend``: cel-go's type
check, the bool result, the worst-case cost that the runtime budget is held against); the
engine then runs the expression, or what ``lowering`` made of it.

A selector's outcome depends only on what it can see of the device, so results are kept per
(expression, driver, ``Device.selector_key``): identical devices on thousands of nodes are
evaluated once. The engine context of such a device is built once too.
"""

from __future__ import annotations

import importlib
import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Protocol, TypeVar, cast

from kubesched.objects.dra import Device

from .engine import engine
from .library import CelFunction, quantity_value, semver_value
from .limits import COST_LIMIT_EXCEEDED, MAX_COST
from .references import check_references
from .semver import SemverError, parse_semver

if TYPE_CHECKING:  # the engine and the analysis are loaded on first compile (engine.py, analysis.py)
    from .checker import Checked
    from .engine import Program
    from .frontend import Analysis

__all__ = ["CelError", "CompilationResult", "DeviceEnvironments", "compile_selector", "COST_LIMIT_EXCEEDED", "engine_functions"]


class _Analysis(Protocol):
    """What compiling uses of the ``analysis`` module."""

    def analyze(self, expression: str, consumable_capacity: bool = True) -> Analysis: ...

    def over_budget(self, checked: Checked, driver: str, device: Device) -> bool: ...

    def engine_functions(self) -> Mapping[str, CelFunction]: ...


@cache
def _analysis() -> _Analysis:
    """``analysis``, imported on the first compile (see its docstring)."""
    return cast(_Analysis, importlib.import_module(f"{__package__}.analysis"))


# The domains a compiled expression indexes literally (device.attributes["d"], capacity['d']).
_DOMAIN_LITERAL = re.compile(r"""(?:attributes|capacity)\s*\[\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\]""")
_RESULTS_LIMIT = 1 << 17
_ENVIRONMENTS_LIMIT = 1 << 15

DeviceKey = tuple[object, ...]
_T = TypeVar("_T")


class CelError(Exception):
    """A selector that failed to evaluate (upstream: a CEL runtime error)."""


def _split_name(name: str, driver: str) -> tuple[str, str]:
    """``parseQualifiedName``: ``domain/id``, or the driver's domain for a bare id."""
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


# ``device.attributes["domain"].name`` / ``device.capacity["domain"]["name"]``: a literal lookup.
_LITERAL_LOOKUP = re.compile(
    r"""\bdevice\s*\.\s*(attributes|capacity)\s*\[\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\]"""
    r"""\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)(?!\s*[(\w])|\[\s*(?:"([^"\\]*)"|'([^'\\]*)')\s*\])"""
)
_DEVICE_FIELD = re.compile(r"\bdevice\s*\.\s*(driver|allowMultipleAllocations)\b")
_DEVICE = re.compile(r"\bdevice\b")
_MISSING = ("missing",)

Projection = tuple[tuple[str, str, str], ...]


def projection(expression: str) -> Projection | None:
    """The (``attributes``|``capacity``, domain, name) an expression reads, when it reads the
    device only through literal lookups, ``device.driver`` and ``device.allowMultipleAllocations``
    (then its outcome depends on nothing else); None otherwise."""
    lookups = _LITERAL_LOOKUP.findall(expression)
    uses = len(_DEVICE.findall(expression))
    if uses != len(lookups) + len(_DEVICE_FIELD.findall(expression)):
        return None
    found: dict[tuple[str, str, str], None] = {}
    for kind, domain_dq, domain_sq, field_name, name_dq, name_sq in lookups:
        found[(kind, domain_dq or domain_sq, field_name or name_dq or name_sq)] = None
    return tuple(found)


def _lookup(mapping: Mapping[str, _T], domain: str, name: str, driver: str) -> _T | None:
    """What upstream's ``device.attributes[domain][name]`` finds (a bare name is in the driver's domain)."""
    found = mapping.get(f"{domain}/{name}")
    if found is None and domain == driver:
        found = mapping.get(name)
    return found


class DeviceEnvironments:
    """The ``device`` variable per (driver, device content), for expressions that read more
    than literal lookups, with every domain that any compiled expression names present (empty
    when the device has none of it)."""

    def __init__(self) -> None:
        self._domains: set[str] = set()
        self._version = 0
        self._contexts: OrderedDict[DeviceKey, tuple[int, dict[str, object]]] = OrderedDict()

    def note_domains(self, expression: str) -> None:
        found = {a or b for a, b in _DOMAIN_LITERAL.findall(expression)} - self._domains
        if found:
            self._domains |= found
            self._version += 1

    def context(self, driver: str, device: Device) -> dict[str, object]:
        key = (driver, device.selector_key)
        cached = self._contexts.get(key)
        if cached is not None and cached[0] == self._version:
            return cached[1]
        attributes: dict[str, dict[str, object]] = {domain: {} for domain in self._domains}
        for name, attribute in device.attributes.items():
            domain, ident = _split_name(name, driver)
            value: object = attribute.value
            if attribute.kind == "version":
                try:
                    value = semver_value(parse_semver(str(attribute.value)))
                except SemverError as err:
                    raise CelError(f"attribute {name}: parse semantic version: {err}") from None
            attributes.setdefault(domain, {})[ident] = value
        capacity: dict[str, dict[str, object]] = {domain: {} for domain in self._domains}
        for name, cap in device.capacity.items():
            domain, ident = _split_name(name, driver)
            capacity.setdefault(domain, {})[ident] = quantity_value(cap.value.value)
        context: dict[str, object] = {
            "driver": driver,
            "allowMultipleAllocations": bool(device.allow_multiple_allocations),
            "attributes": attributes,
            "capacity": capacity,
        }
        if len(self._contexts) >= _ENVIRONMENTS_LIMIT:
            self._contexts.popitem(last=False)
        self._contexts[key] = (self._version, context)
        return context


def _runtime_message(err: Exception) -> str:
    """cel-go's wording for the engine's runtime errors."""
    if isinstance(err, KeyError):
        return f"no such key: {err.args[0] if err.args else ''}"
    if isinstance(err, ZeroDivisionError):
        return "modulus by zero" if "modulo" in str(err) or "remainder" in str(err) else "division by zero"
    if isinstance(err, OverflowError):
        return "integer overflow"
    text = str(err)
    match = re.match(r"Function '[^']*' error: (?:Python function call failed: \w+: )?(.*?)(?:\. Check function arguments and their types\.)?$", text, re.S)
    if match:
        return match[1]
    if isinstance(err, TypeError) and "overload" in text.lower():
        return "no such overload"
    return text


@dataclass(slots=True, eq=False)
class CompilationResult:
    """One compiled selector. ``error`` is the compile error (upstream's ``Detail``), if any.

    Outcomes are cached per device *as the expression sees it*: for an expression that reads
    only literal attributes/capacities (``projection``), the driver and those values; otherwise
    the device's whole ``selector_key``. Devices that look alike to it are evaluated once."""

    expression: str
    error: str | None
    program: Program | None
    environments: DeviceEnvironments
    projection: Projection | None = None
    functions: dict[str, CelFunction] = field(default_factory=dict)
    # cel-go's worst-case cost estimate (None when not estimated) and the checked AST.
    max_cost: int | None = None
    checked: Checked | None = None
    _results: dict[DeviceKey, bool | str] = field(default_factory=dict)
    # The outcome per device object (kept alive here, so its id stays its own).
    _by_device: dict[int, tuple[Device, str, bool | str]] = field(default_factory=dict)

    def device_matches(self, driver: str, device: Device) -> bool:
        """Whether the device satisfies the selector; ``CelError`` on a runtime error."""
        seen = self._by_device.get(id(device))
        if seen is not None and seen[0] is device and seen[1] == driver:
            found = seen[2]
        else:
            key = self._key(driver, device)
            cached = self._results.get(key)
            if cached is None:
                cached = self._evaluate(driver, device)
                if len(self._results) >= _RESULTS_LIMIT:
                    self._results.clear()
                self._results[key] = cached
            found = cached
            if len(self._by_device) >= _RESULTS_LIMIT:
                self._by_device.clear()
            self._by_device[id(device)] = (device, driver, found)
        if isinstance(found, str):
            raise CelError(found)
        return found

    def _key(self, driver: str, device: Device) -> DeviceKey:
        if self.projection is None:
            return (driver, device.selector_key)
        values: list[object] = [driver, bool(device.allow_multiple_allocations)]
        for kind, domain, name in self.projection:
            if kind == "attributes":
                attribute = _lookup(device.attributes, domain, name, driver)
                values.append(_MISSING if attribute is None else (attribute.kind, attribute.value))
            else:
                capacity = _lookup(device.capacity, domain, name, driver)
                values.append(_MISSING if capacity is None else capacity.value.value)
        return tuple(values)

    def evaluate(self, driver: str, device: Device) -> bool:
        """One evaluation by the engine, without the result cache (for measurements)."""
        found = self._evaluate(driver, device)
        if isinstance(found, str):
            raise CelError(found)
        return found

    def _evaluate(self, driver: str, device: Device) -> bool | str:
        if self.program is None:
            return self.error or "compilation failed"
        bad_version = _versions_ok(device)
        if bad_version is not None:
            return bad_version
        if self.max_cost is not None and self.max_cost > MAX_COST and self._over_budget(driver, device):
            return COST_LIMIT_EXCEEDED
        try:
            if self.projection is None:
                result = self.program.execute({"device": self.environments.context(driver, device), **self.functions})
            else:
                result = self.program.execute(self._projected(driver, device))
        except CelError as err:
            return str(err)
        except Exception as err:  # the engine raises builtin exception types for CEL errors
            return _runtime_message(err)
        if not isinstance(result, bool):
            return f"CEL result of type {_type_name(result)} could not be converted to bool"
        return result

    def _over_budget(self, driver: str, device: Device) -> bool:
        """Whether evaluating on this device may cost more than the runtime budget: the
        worst-case estimate again, with the sizes of this device's values (the estimate over
        all devices exceeded it). Only expressions the API server would refuse get here."""
        assert self.checked is not None
        return _analysis().over_budget(self.checked, driver, device)

    def _projected(self, driver: str, device: Device) -> dict[str, object]:
        """The variables of an evaluation: the device reduced to what the expression reads
        (every domain it names present, empty when the device has nothing there)."""
        attributes: dict[str, dict[str, object]] = {}
        capacity: dict[str, dict[str, object]] = {}
        assert self.projection is not None
        for kind, domain, name in self.projection:
            if kind == "attributes":
                values = attributes.setdefault(domain, {})
                attribute = _lookup(device.attributes, domain, name, driver)
                if attribute is not None:
                    values[name] = semver_value(parse_semver(str(attribute.value))) if attribute.kind == "version" else attribute.value
            else:
                quantities = capacity.setdefault(domain, {})
                cap = _lookup(device.capacity, domain, name, driver)
                if cap is not None:
                    quantities[name] = quantity_value(cap.value.value)
        variables: dict[str, object] = {
            "device": {
                "driver": driver,
                "allowMultipleAllocations": bool(device.allow_multiple_allocations),
                "attributes": attributes,
                "capacity": capacity,
            }
        }
        variables.update(self.functions)
        return variables


def _versions_ok(device: Device) -> str | None:
    """Upstream converts every attribute before evaluating: an unparsable version attribute
    fails every selector on the device. (The API server rejects such slices, so parsed slices
    never have one; kept for records built otherwise.)"""
    for name, attribute in device.attributes.items():
        if attribute.kind == "version":
            try:
                parse_semver(str(attribute.value))
            except SemverError as err:
                return f"attribute {name}: parse semantic version: {err}"
    return None


def _type_name(value: object) -> str:
    if isinstance(value, str):
        return "string"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "double"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "map"
    if value is None:
        return "null_type"
    return type(value).__name__


def engine_functions() -> Mapping[str, CelFunction]:
    """Every Python function an expression may call (``analysis.engine_functions``)."""
    return _engine_functions()


@cache
def _engine_functions() -> Mapping[str, CelFunction]:
    return _analysis().engine_functions()


def compile_selector(expression: str, environments: DeviceEnvironments, consumable_capacity: bool = True) -> CompilationResult:
    """Compile once, as upstream's ``CompileCELExpression``: a syntax error, a type error (an
    undeclared reference, no matching overload, ...) or a result that is not a bool becomes
    ``error``; otherwise ``max_cost`` is cel-go's worst-case estimate of one evaluation."""
    program: Program | None = None
    syntax_error: str | None = None
    try:
        program = engine().compile(expression)
    except Exception as err:  # the engine reports parse errors as ValueError
        syntax_error = re.sub(r"^Failed to parse expression '.*?': ", "", str(err), flags=re.S)
        # cel-go indents the snippet and caret lines by one space, and parses optional syntax.
        syntax_error = re.sub(r"(?m)^\| ", " | ", syntax_error)
        blocks = re.split(r"\n(?=ERROR: )", syntax_error)
        kept = [block for block in blocks if "unsupported syntax" not in block.partition("\n")[0]]
        if kept and len(kept) < len(blocks):
            syntax_error = "\n".join(kept)  # real syntax errors besides optional syntax
    analysis = _analysis().analyze(expression, consumable_capacity)
    if syntax_error is not None and ("unsupported syntax" not in syntax_error or analysis.checked is None):
        # The engine's parser decides syntax errors, except for optional syntax (lowered below).
        return CompilationResult(expression, f"compilation failed: {syntax_error}", None, environments)
    if analysis.error is not None:
        return CompilationResult(expression, analysis.error, None, environments)
    if analysis.checked is None:  # beyond this package's parser: the engine's references only
        assert program is not None
        unknown = check_references(expression, program)
        if unknown is not None:
            return CompilationResult(expression, f"compilation failed: {unknown}", None, environments)
    elif analysis.source != expression:
        try:
            program = engine().compile(analysis.source)
        except Exception as err:
            return CompilationResult(expression, f"compilation failed: {err}", None, environments)
    assert program is not None
    environments.note_domains(expression)
    used = set(program.functions())
    functions = {name: fn for name, fn in engine_functions().items() if name in used}
    result = CompilationResult(expression, None, program, environments, projection(expression), functions)
    result.max_cost = analysis.max_cost
    result.checked = analysis.checked
    return result
