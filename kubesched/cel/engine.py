"""The CEL engine (``common-expression-language``), loaded the first time a selector is compiled.
The only module that names the engine's package: the others reach it through ``engine()``,
``extension_functions()`` and, for annotations, ``Program``.

The engine's package imports its command-line shell (typer, rich, prompt_toolkit, pygments)
whenever it is imported, about a quarter of a second. DynamicResources is in the default
profile, so importing the engine with the plugin would make every ``kubesched run`` and
``simulate`` pay that, even on clusters without a single DeviceClass. It is loaded here by
name on first use instead; a cluster without DRA selectors never loads it.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Mapping
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the engine's compiled program, for annotations (loaded on first compile)
    from cel import Program as Program

__all__ = ["ENGINE_MODULE", "ExtensionFunction", "engine", "extension_functions"]

ENGINE_MODULE = "cel"

# The engine logs every failing function call (a quantity that does not parse, ...) as a
# warning; those failures are reported as CelError instead, so its logger stays quiet.
_ENGINE_LOG = logging.getLogger(ENGINE_MODULE)
_ENGINE_LOG.addHandler(logging.NullHandler())
_ENGINE_LOG.propagate = False


class ExtensionFunction(Protocol):
    """One of the engine package's library functions: CEL values in, a CEL value out."""

    def __call__(self, *args: object) -> object: ...


@cache
def engine() -> ModuleType:
    """The engine's module (``compile`` and ``Program``)."""
    return importlib.import_module(ENGINE_MODULE)


@cache
def extension_functions() -> Mapping[str, Mapping[str, ExtensionFunction]]:
    """The engine package's Python implementations of cel-go's extension libraries
    (``strings``, ``sets``, ``lists``, ``core``), by library and function name."""
    stdlib = importlib.import_module(f"{ENGINE_MODULE}.stdlib")
    extensions: Mapping[str, Mapping[str, ExtensionFunction]] = stdlib.EXTENSIONS
    return extensions
