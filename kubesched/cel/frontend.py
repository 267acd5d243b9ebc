"""What upstream's ``CompileCELExpression`` decides before anything runs: parse, type check in
the DRA environment, the result type (``bool`` or the unknown type), and the worst-case cost.

``analyze`` returns the compile error (upstream's ``Detail``: ``compilation failed: ...`` or
``must evaluate to bool or the unknown type, not int``), the source the engine runs (the
expression, or its ``lowering``), and the estimated maximum cost that the API server compares
with ``CELSelectorExpressionMaxCost`` and the scheduler uses to decide whether an evaluation
needs its cost bounded.
"""

from __future__ import annotations

from dataclasses import dataclass

from .checker import Checked, check, display_errors
from .cost import estimate_cost
from .lowering import lower
from .syntax import ParseError, parse

__all__ = ["Analysis", "analyze", "ACCEPTED_RESULT_KINDS"]

# DRAListTypeAttributes is off at v1.36: bool or the unknown type (``any``), not dyn.
ACCEPTED_RESULT_KINDS = frozenset({"bool", "any"})


@dataclass(slots=True)
class Analysis:
    error: str | None
    source: str  # what the engine compiles
    checked: Checked | None  # None: not understood here (the engine alone decides)
    max_cost: int | None


def analyze(expression: str, consumable_capacity: bool = True) -> Analysis:
    try:
        root = parse(expression)
    except (ParseError, RecursionError):
        return Analysis(None, expression, None, None)
    try:
        checked = check(root, consumable_capacity)
        max_cost = estimate_cost(checked).max if not checked.errors else None
    except RecursionError:  # deeper than this package walks: the engine alone decides
        return Analysis(None, expression, None, None)
    if checked.errors:
        return Analysis("compilation failed: " + display_errors(expression, checked.errors), expression, checked, None)
    output = checked.output_type
    if output.kind not in ACCEPTED_RESULT_KINDS:
        return Analysis(f"must evaluate to bool or the unknown type, not {output.type_name()}", expression, checked, None)
    try:
        lowered = lower(checked)
    except RecursionError:
        return Analysis(None, expression, None, None)
    return Analysis(None, lowered if lowered is not None else expression, checked, max_cost)
