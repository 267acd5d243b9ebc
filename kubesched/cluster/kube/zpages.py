"""kube-scheduler's z-pages: ``/configz``, ``/flagz`` and ``/statusz``.

* ``/configz`` answers ``{"componentconfig": <the KubeSchedulerConfiguration in use>}``
  (application/json), as component-base's configz handler does;
* ``/flagz`` and ``/statusz`` answer in the plain-text form of apiserver's ``flagz`` and
  ``statusz`` packages: a header naming the component and warning that the page is not
  for machines, then one ``name<delimiter>value`` line per flag (sorted) or the start
  time, uptime, runtime and binary versions and the served paths. Like upstream, the
  delimiter is picked at random per answer, so nobody parses the page.
"""

from __future__ import annotations

import platform
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["ZPages", "flagz_text", "statusz_text"]

_DELIMITERS = (":", ": ", "=", " ")
_HEADER = ("\n{component} {page}\nWarning: This endpoint is not meant to be machine parseable, has no formatting "
           "compatibility guarantees and is for debugging purposes only.\n\n")


def _delimiter(rng: Callable[[], float]) -> str:
    return _DELIMITERS[int(rng() * len(_DELIMITERS)) % len(_DELIMITERS)]


def flagz_text(component: str, flags: Mapping[str, str], rng: Callable[[], float] = random.random) -> str:
    delimiter = _delimiter(rng)
    lines = [f"{name}{delimiter}{flags[name]}\n" for name in sorted(flags)]
    return _HEADER.format(component=component, page="flagz") + "".join(lines)


def _uptime(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600} hr {(whole // 60) % 60:02d} min {whole % 60:02d} sec"


def statusz_text(component: str, started: float, now: float, binary_version: str, paths: Sequence[str],
                 rng: Callable[[], float] = random.random) -> str:
    delimiter = _delimiter(rng)
    lines = [
        f"Started{delimiter} {time.strftime('%a %b %d %H:%M:%S UTC %Y', time.gmtime(started))}",
        f"Up{delimiter} {_uptime(now - started)}",
        f"Go version{delimiter} python{platform.python_version()}",
        f"Binary version{delimiter} {binary_version}",
    ]
    if paths:
        lines.append(f"Paths{delimiter} {' '.join(paths)}")
    return _HEADER.format(component=component, page="statusz") + "\n".join(lines) + "\n"


@dataclass(slots=True)
class ZPages:
    """What the z-pages show: the component's configuration, its flags, its version."""

    componentconfig: Callable[[], Mapping[str, object]]
    flags: Mapping[str, str] = field(default_factory=dict)
    binary_version: str = ""
    component: str = "kube-scheduler"
    started: float = field(default_factory=time.time)
