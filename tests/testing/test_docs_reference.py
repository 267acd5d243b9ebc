"""docs/plugins.md's tables of ``PodInfo``, ``Node`` and ``NodeInfo`` members are the classes'
members: none missing, none that does not exist."""

from __future__ import annotations

import dataclasses
import re

import pytest

from kubesched.objects import Node, NodeInfo, PodInfo

from .tutorial import ROOT

DOC = (ROOT / "docs" / "plugins.md").read_text()


def documented(cls: type) -> set[str]:
    """The member names in the first column of the table under ``#### `Class```."""
    section = DOC.split(f"#### `{cls.__name__}`\n", 1)[1].split("\n#", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            names.update(re.sub(r"\(.*\)", "", name) for name in re.findall(r"`([^`]+)`", first))
    return names


def members(cls: type) -> set[str]:
    found = {f.name for f in dataclasses.fields(cls)}
    found.update(name for name in vars(cls) if not name.startswith("_"))
    return found


@pytest.mark.parametrize("cls", [PodInfo, Node, NodeInfo], ids=lambda c: c.__name__)
def test_the_reference_lists_every_member_and_no_other(cls: type) -> None:
    assert documented(cls) == members(cls)
