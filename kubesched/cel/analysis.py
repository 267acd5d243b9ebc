"""What compiling a selector needs beyond the engine, in one module ``compile`` loads by name
on the first compile (like the engine): the parser, type checker, cost estimator, lowering and
the IP/CIDR/URL/format libraries take a few tens of milliseconds to import, which every
``run`` and ``simulate`` would otherwise pay with DynamicResources in the default profile."""

from __future__ import annotations

from collections.abc import Mapping

from kubesched.objects.dra import Device

from .checker import Checked
from .cost import estimate_cost
from .dra_device import VARIABLE, device_sizes
from .formats import FORMAT_FUNCTIONS
from .frontend import Analysis, analyze
from .library import CelFunction, all_functions
from .limits import MAX_COST
from .lowering import LOWERED_FUNCTIONS
from .netlib import NET_FUNCTIONS

__all__ = ["Analysis", "analyze", "over_budget", "engine_functions"]


def engine_functions() -> Mapping[str, CelFunction]:
    """Every Python function an expression may call: the libraries' (``all_functions``), the IP,
    CIDR, URL and format ones, and what ``lowering`` writes (optional selection, pairs for
    two-variable comprehensions, namespaced functions under ``k8s_`` names)."""
    functions = dict(all_functions())
    functions.update(NET_FUNCTIONS)
    functions.update(FORMAT_FUNCTIONS)
    functions.update(LOWERED_FUNCTIONS)
    for name, function in all_functions().items():
        if "." in name:
            functions["k8s_" + name.replace(".", "_")] = function
    return functions


def over_budget(checked: Checked, driver: str, device: Device) -> bool:
    """Whether evaluating on this device may cost more than the runtime budget: the
    worst-case estimate again, with the sizes of this device's values."""
    domains: dict[str, int] = {}
    longest_domain = longest_id = 0
    longest_value = 1
    for name in [*device.attributes, *device.capacity]:
        domain, sep, ident = str(name).partition("/")
        if not sep:
            domain, ident = driver, str(name)
        domains[domain] = domains.get(domain, 0) + 1
        longest_domain, longest_id = max(longest_domain, len(domain)), max(longest_id, len(ident))
    for attribute in device.attributes.values():
        if isinstance(attribute.value, str):
            longest_value = max(longest_value, len(attribute.value))
    sizes = device_sizes(len(driver), longest_domain, longest_id, longest_value, len(domains), max(domains.values(), default=0))
    return estimate_cost(checked, {VARIABLE: sizes}).max > MAX_COST
