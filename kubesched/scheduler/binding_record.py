"""What became of an attempt after its node was chosen: Reserve, Permit (and a wait
there), PreBind and Bind, as ``--explain`` and the reports show it.

The scheduling cycle's record (``Attempt``) is handed to observers as soon as a node is
chosen; the rest happens later (a pod held at Permit binds or is rejected minutes of
virtual time on). So a chosen attempt carries ``binding``, a JSON-ready dict that the
binding cycle fills in place, and ``result`` says how far it got:

* ``{"result": "pending"}`` until the binding cycle ends (``"waiting"`` is written for a
  pod still held at Permit when the run ends);
* ``"bound"``; or ``"unschedulable"`` / ``"error"`` with the ``stage`` that failed
  (``Reserve``, ``Permit``, ``PreBind``, ``Bind``), its ``plugin`` and ``message``;
* ``permit``: ``code`` (upstream's label: ``Success``, ``Wait``, a rejection), and for a
  wait each plugin's ``timeout`` (Go duration) and ``reason`` (its Wait status's message),
  then ``outcome`` (``allowed``, ``rejected``) and ``waited`` (seconds held).

Pods that waited at Permit are also listed in the scheduler's ``permit_log`` (one
``PermitWait`` each), which the summary report groups by plugin, reason and outcome.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..framework.config_go import NANOS_PER_SECOND, format_duration
from ..framework.status import Code, Status
from .attempt import Attempt

__all__ = ["PermitWait", "binding_started", "permit_ran", "wait_ended", "binding_failed", "binding_bound"]


@dataclass(slots=True)
class PermitWait:
    """One pod's wait at Permit: the plugins and their reasons, how it ended, how long it took."""

    pod: str
    reasons: dict[str, str]  # plugin -> the message of its Wait status
    outcome: str  # "allowed" or "rejected"
    message: str  # the rejection's message ("" when allowed)
    waited: float


def _go(seconds: float) -> str:
    return format_duration(round(seconds * NANOS_PER_SECOND))


def binding_started(attempt: Attempt | None) -> None:
    if attempt is not None:
        attempt.binding = {"result": "pending"}


def _binding(attempt: Attempt | None) -> dict[str, Any] | None:
    return attempt.binding if attempt is not None else None


def permit_ran(attempt: Attempt | None, status: Status | None, waits: dict[str, float],
               reasons: dict[str, str]) -> None:
    """What RunPermitPlugins answered: success, a rejection, or Wait (with each plugin's timeout and reason)."""
    binding = _binding(attempt)
    if binding is None:
        return
    code = Code.SUCCESS if status is None else status.code
    permit: dict[str, Any] = {"code": code.label}
    if status is not None and code != Code.WAIT:
        permit.update(plugin=status.plugin or None, message=status.message)
    if waits:
        permit["waits"] = [{"plugin": p, "timeout": _go(t), "reason": reasons.get(p, "")} for p, t in sorted(waits.items())]
    binding["permit"] = permit


def wait_ended(attempt: Attempt | None, status: Status | None, waited: float) -> None:
    binding = _binding(attempt)
    if binding is None or "permit" not in binding:
        return
    permit = binding["permit"]
    permit["outcome"] = "allowed" if status is None else "rejected"
    permit["waited"] = waited
    if status is not None:
        permit.update(plugin=status.plugin or None, message=status.message)


def binding_failed(attempt: Attempt | None, stage: str, status: Status) -> None:
    binding = _binding(attempt)
    if binding is None:
        return
    binding.update(result="unschedulable" if status.is_rejected() else "error", stage=stage,
                   plugin=status.plugin or None, message=status.message)
    _decided(attempt)


def binding_bound(attempt: Attempt | None) -> None:
    binding = _binding(attempt)
    if binding is not None:
        binding["result"] = "bound"
        _decided(attempt)


def _decided(attempt: Attempt | None) -> None:
    if attempt is not None and attempt.on_decided is not None:
        tell, attempt.on_decided = attempt.on_decided, None
        tell(attempt)
