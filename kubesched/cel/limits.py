"""Upstream's limits on DRA selectors (k8s.io/api/resource/v1) and cel-go's error for an
evaluation past its budget."""

from __future__ import annotations

__all__ = ["MAX_COST", "MAX_EXPRESSION_LENGTH", "COST_LIMIT_EXCEEDED"]

MAX_COST = 1_000_000  # CELSelectorExpressionMaxCost: per evaluation, and the estimate's limit
MAX_EXPRESSION_LENGTH = 10 * 1024  # CELSelectorExpressionMaxLength (bytes)
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"  # interpreter/runtimecost.go
