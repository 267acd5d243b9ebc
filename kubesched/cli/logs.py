"""Structured log lines for ``kubesched run``: one event per line, objects named.

The shape follows klog's structured text format that kube-scheduler writes
(``"message" key="value" ...``), prefixed with an ISO timestamp and the level, so
the usual log pipelines can split it: fields given as ``extra={"pod": ..., "node":
...}`` become ``pod="ns/name" node="n1"``.

``-v`` follows klog's verbosity: 0 logs warnings, errors and the lifecycle (info),
2 adds a line per scheduling decision, 4 and above is debug.
"""

from __future__ import annotations

import logging
import sys
import time

__all__ = ["StructuredFormatter", "configure_logging", "DECISIONS"]

# The logger of per-pod decisions: enabled from -v 2, as upstream logs them at V(2).
DECISIONS = "kubesched.decisions"

_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}
_LEVELS = {logging.DEBUG: "DEBUG", logging.INFO: "INFO", logging.WARNING: "WARN", logging.ERROR: "ERROR",
           logging.CRITICAL: "FATAL"}


def _quote(value: object) -> str:
    text = str(value)
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class StructuredFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z"
        parts = [stamp, _LEVELS.get(record.levelno, record.levelname), record.name, _quote(record.getMessage())]
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                parts.append(f"{key}={_quote(value)}")
        if record.exc_info:
            parts.append(f"err={_quote(self.formatException(record.exc_info))}")
        return " ".join(parts)


def configure_logging(verbosity: int) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(StructuredFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbosity >= 4 else logging.INFO)
    logging.getLogger(DECISIONS).setLevel(logging.INFO if verbosity >= 2 else logging.WARNING)
    logging.getLogger("aiohttp").setLevel(logging.WARNING)
