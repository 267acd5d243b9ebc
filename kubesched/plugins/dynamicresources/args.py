"""``DynamicResourcesArgs`` (kubescheduler.config.k8s.io/v1): the plugin's two timeouts.

* ``bindingTimeout``: how long PreBind waits for devices' binding conditions (600 s by
  default, with DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on); at least
  one second.
* ``filterTimeout``: upstream's bound on one Filter call's allocation (10 s by default,
  with DRASchedulerFilterTimeout on); zero or positive. Decoded and validated; kubesched
  does not apply it (docs/dra.md, "Not modelled").

Both are Go durations (``"90s"``, ``"1m30s"``), kept as written (so ``config show`` writes
them back; the defaults as Go prints them). Validation is upstream's
``ValidateDynamicResourcesArgs``; a field whose gate ``--feature-gates`` turned off is
refused by ``check_gates`` when the plugin is built.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class DynamicResourcesArgs:
    """Defaulted as upstream's ``SetDefaults_DynamicResourcesArgs`` at v1.36's gates."""

    filter_timeout: str | None = DEFAULT_FILTER_TIMEOUT
    binding_timeout: str | None = DEFAULT_BINDING_TIMEOUT

    def validate(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        for name, text in (("filterTimeout", self.filter_timeout), ("bindingTimeout", self.binding_timeout)):
            if text is not None and _nanos(text) is None:
                problems.append((name, f"time: invalid duration {go_quote(text)}"))
        if problems:
            return problems
        filter_nanos, binding_nanos = _nanos(self.filter_timeout), _nanos(self.binding_timeout)
        if filter_nanos is not None and filter_nanos < 0:
            problems.append(("filterTimeout", invalid(self.filter_timeout, "must be zero or positive")))
        if binding_nanos is not None and binding_nanos < NANOS_PER_SECOND:
            problems.append(("bindingTimeout", invalid(self.binding_timeout, "must be at least 1 second")))
        return problems

    def check_gates(self, features: Features) -> None:
        """Upstream refuses a field whose feature gate is off (``ArgsError``). With the gate off
        upstream does not default the field either; a value equal to the default is taken for
        the default here, and let through."""
        if self.filter_timeout not in (None, DEFAULT_FILTER_TIMEOUT) and not features.enable_dra_scheduler_filter_timeout:
            raise ArgsError("filterTimeout", "Forbidden: DRASchedulingFilterTimeout feature gate is disabled")
        if self.binding_timeout not in (None, DEFAULT_BINDING_TIMEOUT) and not (
                features.enable_dra_device_binding_conditions and features.enable_dra_resource_claim_device_status):
            raise ArgsError("bindingTimeout", "Forbidden: DRADeviceBindingConditions or "
                                              "DRAResourceClaimDeviceStatus feature gate is disabled")

    def filter_timeout_seconds(self) -> float:
        """How long one node's allocation may take in Filter (0: no limit)."""
        nanos = _nanos(self.filter_timeout)
        return (nanos if nanos is not None else _nanos(DEFAULT_FILTER_TIMEOUT) or 0) / NANOS_PER_SECOND

    def binding_timeout_seconds(self) -> float:
        nanos = _nanos(self.binding_timeout)
        return (nanos if nanos is not None else _DEFAULT_BINDING_NANOS) / NANOS_PER_SECOND
