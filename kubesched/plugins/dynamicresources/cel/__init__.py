"""CEL device selectors with Kubernetes' DRA environment (``device.driver``, typed
``device.attributes``, ``device.capacity`` quantities, ``device.allowMultipleAllocations``, the
quantity and semver libraries), on the ``common-expression-language`` engine."""

from .cache import CelCache, validate_selector
from .compile import CelError, CompilationResult

__all__ = ["CelCache", "CelError", "CompilationResult", "validate_selector"]
