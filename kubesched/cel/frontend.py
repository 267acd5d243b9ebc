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
from .dra_device import device_environment
from .lowering import lower
from .syntax import ParseError, parse

__all__ = ["Analysis", "analyze"]


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
        env = device_environment(consumable_capacity)
        checked = check(root, env)
        max_cost = estimate_cost(checked, env.sizes).max if not checked.errors else None
    except RecursionError:  # deeper than this package walks: the engine alone decides
        return Analysis(None, expression, None, None)
    if checked.errors:
        return Analysis("compilation failed: " + display_errors(expression, checked.errors), expression, checked, None)
    output = checked.output_type
    if output.kind not in env.result_kinds:
        return Analysis(f"must evaluate to bool or the unknown type, not {output.type_name()}", expression, checked, None)
    try:
        lowered = lower(checked)
    except RecursionError:
        return Analysis(None, expression, None, None)
    return Analysis(None, lowered if lowered is not None else expression, checked, max_cost)
