"""The CEL engine (``common-expression-language``), loaded the first time a selector is compiled.

The engine's package imports its command-line shell (typer, rich, prompt_toolkit, pygments)
whenever it is imported, about a quarter of a second. DynamicResources is in the default
profile, so importing the engine with the plugin would make every ``kubesched run`` and
``simulate`` pay that, even on clusters without a single DeviceClass. It is loaded here by
name on first use instead; a cluster without DRA selectors never loads it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from functools import cache
from types import ModuleType
from typing import Protocol

__all__ = ["ExtensionFunction", "engine", "extension_functions"]

ENGINE_MODULE = "cel"


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
