"""The documents of a YAML stream, parsed fast.

Cluster dumps are big (``kubectl get ... -o yaml`` of a 5,000-node cluster is hundreds
of megabytes), and PyYAML, even with libyaml, builds every scalar in Python: 50 times
slower than the same dump as JSON. ``yaml_rs`` (Rust) parses it about 3 times slower
than JSON instead.

Its schema is YAML 1.2 core, while Kubernetes' own YAML (sigs.k8s.io/yaml) is YAML 1.1.
For what kubectl writes the two agree: kubectl quotes every string that YAML 1.1 would
read as something else (``"yes"``, ``"on"``, ``"0755"``). Hand-written files differ only
in those unquoted forms: ``yes``/``no``/``on``/``off`` stay strings and ``0755`` is 755.
Timestamps stay strings, as in JSON; duplicate keys are an error, as kubectl makes them.
"""

from __future__ import annotations

import re

import yaml_rs

__all__ = ["YAMLError", "parse_yaml", "yaml_documents"]

_SEPARATOR = re.compile(r"^---(?:[ \t]|$)", re.M)
_POSITION = re.compile(r"at line (\d+), column (\d+)")


class YAMLError(ValueError):
    """Not YAML; ``str()`` is one line: where, and what is wrong."""


def _decode(text: bytes) -> str:
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError as err:
        raise YAMLError(f"not UTF-8 text (byte {err.start})") from None


def _several_documents(text: str) -> bool:
    """Whether the stream holds more than one document (``yaml_rs`` then returns a list of
    them, which a single document that is a list would look like too)."""
    separators = [m.start() for m in _SEPARATOR.finditer(text)]
    if not separators:
        return False
    if len(separators) > 1:
        return True
    before = text[: separators[0]]
    return any(line.strip() and not line.lstrip().startswith(("#", "%")) for line in before.splitlines())


def yaml_documents(text: bytes) -> list[object]:
    """Every document of ``text``, empty ones included as None."""
    return _whole_stream(_decode(text))


def _whole_stream(decoded: str) -> list[object]:
    parsed = parse_yaml(decoded)
    if isinstance(parsed, list) and _several_documents(decoded):
        return list(parsed)
    return [parsed]


def parse_yaml(body: str) -> object:
    """One YAML document (or a stream, as yaml_rs reads it); ``YAMLError`` in one line."""
    try:
        return yaml_rs.loads(body, parse_datetime=False)
    except yaml_rs.YAMLDecodeError as err:
        raise YAMLError(_one_line(err)) from None


def _one_line(err: Exception) -> str:
    lines = [line for line in str(err).splitlines() if line.strip()]
    found = _POSITION.search(lines[0]) if lines else None
    where = f" at line {found.group(1)}, column {found.group(2)}" if found else ""
    problem = lines[-1].strip() if len(lines) > 1 else (lines[0] if lines else "unreadable")
    return f"invalid YAML{where}: {problem}"
