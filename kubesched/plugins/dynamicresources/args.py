"""``DynamicResourcesArgs`` (kubescheduler.config.k8s.io/v1): the plugin's two timeouts.

* ``bindingTimeout``: how long PreBind waits for devices' binding conditions (600 s by
  default, with DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on); at least
  one second.
* ``filterTimeout``: upstream's bound on one Filter call's allocation (10 s by default,
  with DRASchedulerFilterTimeout on); zero or positive. Decoded and validated; kubesched
  does not apply it (docs/dra.md, "Not modelled").

Both are Go durations (``"90s"``, ``"1m30s"``), kept as written (so ``config show`` writes
them back; the defaults as Go prints them). Defaulting is upstream's
``SetDefaults_DynamicResourcesArgs``: each field only when its gates are on, so with them
off ``config show`` leaves it out. Validation is upstream's ``ValidateDynamicResourcesArgs``
with the gates: a field whose gate is off is refused (``Forbidden``), when the config is
decoded (``GatedArgs``: with the field's path) and again when the plugin is built
(``check_gates``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ...framework.args import ArgsError, go_quote, invalid
from ...framework.config_go import NANOS_PER_SECOND, format_duration, parse_duration
from ...framework.features import Features

__all__ = ["DynamicResourcesArgs", "DEFAULT_BINDING_TIMEOUT", "DEFAULT_FILTER_TIMEOUT"]

_DEFAULT_BINDING_NANOS = 600 * NANOS_PER_SECOND  # config.DynamicResourcesBindingTimeoutDefault
DEFAULT_BINDING_TIMEOUT = format_duration(_DEFAULT_BINDING_NANOS)  # "10m0s", as Go writes it back
DEFAULT_FILTER_TIMEOUT = format_duration(10 * NANOS_PER_SECOND)  # config.DynamicResourcesFilterTimeoutDefault


def _nanos(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return parse_duration(text)
    except ValueError:
        return None


def _binding_gates(features: Features) -> bool:
    return features.enable_dra_device_binding_conditions and features.enable_dra_resource_claim_device_status


@dataclass(frozen=True, slots=True)
class DynamicResourcesArgs:
    """The args as written (None: not given); ``defaulted`` applies upstream's defaults for the gates."""

    filter_timeout: str | None = None
    binding_timeout: str | None = None

    def defaulted(self, features: Features) -> "DynamicResourcesArgs":
        """``SetDefaults_DynamicResourcesArgs``: filterTimeout 10s with DRASchedulerFilterTimeout on,
        bindingTimeout 10m0s with DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on."""
        filter_timeout, binding_timeout = self.filter_timeout, self.binding_timeout
        if filter_timeout is None and features.enable_dra_scheduler_filter_timeout:
            filter_timeout = DEFAULT_FILTER_TIMEOUT
        if binding_timeout is None and _binding_gates(features):
            binding_timeout = DEFAULT_BINDING_TIMEOUT
        return replace(self, filter_timeout=filter_timeout, binding_timeout=binding_timeout)

    def problems(self, features: Features) -> list[tuple[str, str]]:
        """``ValidateDynamicResourcesArgs`` for these gates, after the durations' decoding."""
        problems: list[tuple[str, str]] = []
        for name, text in (("filterTimeout", self.filter_timeout), ("bindingTimeout", self.binding_timeout)):
            if text is not None and _nanos(text) is None:
                problems.append((name, f"time: invalid duration {go_quote(text)}"))
        if problems:
            return problems
        filter_nanos, binding_nanos = _nanos(self.filter_timeout), _nanos(self.binding_timeout)
        if not features.enable_dra_scheduler_filter_timeout:
            if filter_nanos is not None:
                problems.append(("filterTimeout", "Forbidden: DRASchedulingFilterTimeout feature gate is disabled"))
        elif filter_nanos is not None and filter_nanos < 0:
            problems.append(("filterTimeout", invalid(self.filter_timeout, "must be zero or positive")))
        if not _binding_gates(features):
            if binding_nanos is not None:
                problems.append(("bindingTimeout", "Forbidden: DRADeviceBindingConditions or "
                                                   "DRAResourceClaimDeviceStatus feature gate is disabled"))
        elif binding_nanos is not None and binding_nanos < NANOS_PER_SECOND:
            problems.append(("bindingTimeout", invalid(self.binding_timeout, "must be at least 1 second")))
        return problems

    def check_gates(self, features: Features) -> None:
        """Upstream's New validates its args again with the plugin's gates: the first problem
        as an ``ArgsError``."""
        problems = self.problems(features)
        if problems:
            raise ArgsError(*problems[0])

    def filter_timeout_seconds(self) -> float:
        """How long one node's allocation may take in Filter (0, as when unset: no limit)."""
        nanos = _nanos(self.filter_timeout)
        return (nanos or 0) / NANOS_PER_SECOND

    def binding_timeout_seconds(self) -> float:
        nanos = _nanos(self.binding_timeout)
        return (nanos if nanos is not None else _DEFAULT_BINDING_NANOS) / NANOS_PER_SECOND

