"""CEL device selectors with Kubernetes' DRA environment (``device.driver``, typed
``device.attributes``, ``device.capacity`` quantities, ``device.allowMultipleAllocations``, the
quantity and semver libraries), on the ``common-expression-language`` engine."""

from .cache import CelCache, selector_problem, validate_selector
from .compile import COST_LIMIT_EXCEEDED, CelError, CompilationResult
from .limits import MAX_COST

__all__ = ["CelCache", "CelError", "CompilationResult", "validate_selector", "selector_problem", "COST_LIMIT_EXCEEDED", "MAX_COST"]
