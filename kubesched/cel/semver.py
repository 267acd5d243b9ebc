"""Semantic versions as Kubernetes' CEL semver library and DRA version attributes read them
(``github.com/blang/semver/v4``: strict parsing, and the optional normalization of
``semver(s, true)``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Version", "parse_semver", "normalize_semver", "SemverError"]

_NUMBER = r"(0|[1-9][0-9]*)"
_IDENT = r"[0-9A-Za-z-]+"
_STRICT = re.compile(rf"^{_NUMBER}\.{_NUMBER}\.{_NUMBER}(?:-({_IDENT}(?:\.{_IDENT})*))?(?:\+({_IDENT}(?:\.{_IDENT})*))?$")


class SemverError(ValueError):
    """Not a semantic version."""


@dataclass(slots=True, frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...] = ()
    build: tuple[str, ...] = ()

    def compare(self, other: "Version") -> int:
        """blang's ``Compare``: build metadata ignored; a pre-release sorts before the release."""
        mine = (self.major, self.minor, self.patch)
        theirs = (other.major, other.minor, other.patch)
        if mine != theirs:
            return -1 if mine < theirs else 1
        if not self.pre or not other.pre:
            return (len(other.pre) > 0) - (len(self.pre) > 0)
        for a, b in zip(self.pre, other.pre):
            if a == b:
                continue
            if isinstance(a, int) and isinstance(b, int):
                return -1 if a < b else 1
            if isinstance(a, int):
                return -1
            if isinstance(b, int):
                return 1
            return -1 if str(a) < str(b) else 1
        return (len(self.pre) > len(other.pre)) - (len(self.pre) < len(other.pre))

    def key(self) -> str:
        """A text equal for versions that compare equal (build metadata dropped)."""
        pre = ".".join(str(p) for p in self.pre)
        return f"{self.major}.{self.minor}.{self.patch}" + (f"-{pre}" if pre else "")


@lru_cache(maxsize=4096)
def parse_semver(text: str) -> Version:
    """``semver.Parse``: strict ``MAJOR.MINOR.PATCH[-pre][+build]``."""
    match = _STRICT.match(text)
    if match is None:
        raise SemverError(_why_not(text))
    pre: list[int | str] = []
    if match[4]:
        for part in match[4].split("."):
            if part.isdigit():
                if len(part) > 1 and part[0] == "0":
                    raise SemverError(f"Numeric PreRelease version must not contain leading zeroes {part!r}")
                pre.append(int(part))
            else:
                pre.append(part)
    build = tuple(match[5].split(".")) if match[5] else ()
    return Version(int(match[1]), int(match[2]), int(match[3]), tuple(pre), build)


def _why_not(text: str) -> str:
    """blang/semver's message for a string that is not a version."""
    if not text:
        return "Version string empty"
    parts = text.split(".", 2)
    if len(parts) != 3:
        return "No Major.Minor.Patch elements found"
    core = [parts[0], parts[1], re.split(r"[-+]", parts[2], maxsplit=1)[0]]
    for name, part in zip(("major", "minor", "patch"), core):
        if not part or not part.isdigit():
            return f"Invalid character(s) found in {name} number {part!r}".replace("'", '"')
        if len(part) > 1 and part[0] == "0":
            return f'{name.capitalize()} number must not contain leading zeroes "{part}"'
    return f'Invalid character(s) found in version "{text}"'


def normalize_semver(text: str) -> str:
    """What ``semver(s, true)`` parses (the library's ``normalizeAndParse``): a leading ``v``
    dropped, leading zeros of the first three dot-separated parts removed, missing minor and
    patch filled with 0 (a short version must not carry pre-release or build data)."""
    parts = text.removeprefix("v").split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            stripped = part.lstrip("0")
            if not stripped or not stripped[0].isdigit():
                stripped = "0" + stripped
            parts[i] = stripped
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            raise SemverError("short version cannot contain PreRelease/Build meta data")
        parts += ["0"] * (3 - len(parts))
    return ".".join(parts)
