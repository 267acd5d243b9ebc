"""Kubernetes' CEL (upstream's ``k8s.io/apiserver/pkg/cel`` and
``k8s.io/dynamic-resource-allocation/cel``), on the ``common-expression-language`` engine, with
the DRA device environment as its one declaration set: what DynamicResources, the structured
allocator, NodeResourcesFit's DRA scoring and the API-server-side validation of DRA objects use.

The public surface is this package's names:

* ``CelCache``: device selectors compiled once per expression (``get_or_compile``), least
  recently used dropped first; one per plugin, safe to share between threads.
* ``CompilationResult``: one compiled selector: ``error`` (upstream's ``Detail``, e.g.
  ``compilation failed: ...``), ``max_cost`` (cel-go's worst-case estimate) and
  ``device_matches(driver, device)``, which raises ``CelError`` on a runtime error (worded
  ``COST_LIMIT_EXCEEDED`` when an evaluation exceeds its budget, ``MAX_COST``).
* ``validate_selector(expression)``: the compile error or None; ``selector_problem(expression)``:
  why the API server refuses a selector, worded as its field error, or None.

Inside, one job per module. The compile side of cel-go: ``lexer`` and ``syntax`` (the parser, to
cel-go's AST with its macros expanded), ``celtypes`` and ``checker`` (types and the type check),
``estimates``, ``cost`` and ``cost_library`` (the worst-case cost estimate) and ``lowering``
(rewriting what the engine lacks into what it has). Declarations: ``declarations`` (Kubernetes'
base environment: CEL's standard library, cel-go's extensions, Kubernetes' libraries),
``environment`` (what one environment declares besides) and ``dra_device`` (the DRA device
environment). Libraries run in Python: ``library`` (quantity, semver, lists, regex),
``netlib`` (IP, CIDR, URL), ``formats`` and ``semver``. The engine is named in ``engine`` only,
and loaded on the first compile. Device selectors: ``compile`` (compiling and evaluating
against a device, results kept per device as the expression sees it), ``frontend`` (what
upstream decides before anything runs), ``analysis`` (loaded with the engine), ``references``
(for what the engine alone understood), ``cache`` and ``limits``.
"""

from .cache import CelCache, selector_problem, validate_selector
from .compile import COST_LIMIT_EXCEEDED, CelError, CompilationResult
from .limits import MAX_COST

__all__ = ["CelCache", "CelError", "CompilationResult", "validate_selector", "selector_problem", "COST_LIMIT_EXCEEDED", "MAX_COST"]
