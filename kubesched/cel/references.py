"""The reference check for an expression this package's parser does not understand (the
engine alone accepted it): the variables and functions it names must be declared in the DRA
environment, or the expression is a compile error as cel-go reports one."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .library import all_functions

if TYPE_CHECKING:
    from .engine import Program

__all__ = ["check_references"]


# What cel-go's checker knows besides ``device`` and the libraries: CEL's standard functions,
# type names, and the variables comprehension macros bind.
_STANDARD_FUNCTIONS = frozenset(
    "size contains startsWith endsWith matches int uint double string bytes bool timestamp duration type dyn "
    "getDate getDayOfMonth getDayOfWeek getDayOfYear getFullYear getHours getMilliseconds getMinutes getMonth getSeconds".split()
)
# Functions of Kubernetes' base environment that this engine does not provide (URLs, IPs,
# CIDRs, format, optionals, two-variable comprehensions): upstream accepts expressions that use
# them, so they are not compile errors here either; evaluating one fails at run time.
_UNPROVIDED = frozenset(
    "url isURL getScheme getHost getHostname getPort getEscapedPath getQuery ip isIP cidr isCIDR family isUnspecified "
    "isLoopback isLinkLocalMulticast isLinkLocalUnicast isGlobalUnicast containsIP containsCIDR masked prefixLength "
    "format optMap optFlatMap hasValue value orValue or of none ofNonZeroValue exists all existsOne exists_one "
    "transformList transformMap transformMapEntry".split()
)
_TYPE_NAMES = frozenset("int uint double bool string bytes list map null_type type optional".split())
_BOUND = re.compile(r"\.\s*(?:all|exists|exists_one|map|filter)\s*\(\s*([A-Za-z_]\w*)\s*,")


def _located(expression: str, name: str, message: str) -> str:
    """cel-go's error text: ``ERROR: <input>:line:column: message`` and the line with a caret."""
    match = re.search(rf"(?<![\w.]){re.escape(name)}\b", expression) or re.search(rf"\b{re.escape(name)}\b", expression)
    offset = match.start() if match else 0
    line_start = expression.rfind("\n", 0, offset) + 1
    line_end = expression.find("\n", offset)
    line = expression[line_start : line_end if line_end >= 0 else len(expression)]
    line_number = expression.count("\n", 0, offset) + 1
    column = offset - line_start
    return f"ERROR: <input>:{line_number}:{column + 1}: {message}\n | {line}\n | {'.' * column}^"


def check_references(expression: str, program: Program) -> str | None:
    """The first reference cel-go's checker would reject in the DRA environment."""
    references = program.references()
    bound = set(_BOUND.findall(expression))
    namespaces = {name.partition(".")[0] for name in all_functions() if "." in name}  # sets.contains(...)
    for name in references.get("variables", []):
        if name != "device" and name not in bound and name not in _TYPE_NAMES and name not in namespaces:
            return _located(expression, name, f"undeclared reference to '{name}' (in container '')")
    for name in references.get("functions", []):
        if name[:1] in ("_", "!", "@", "-") or name in _STANDARD_FUNCTIONS or name in all_functions() or name in _UNPROVIDED:
            continue
        return _located(expression, name, f"undeclared reference to '{name}' (in container '')")
    return None
