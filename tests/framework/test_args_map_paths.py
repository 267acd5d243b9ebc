"""Map keys in an args error's path are written as upstream's field paths write them
(``field.NewPath("limits").Key("team-a").Key("gpu")`` is ``limits[team-a][gpu]``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kubesched.framework import ArgsError, decode_args


@dataclass(frozen=True)
class QuotaArgs:
    limits: dict[str, dict[str, int]] = field(default_factory=dict)
    teams: list[dict[str, str]] = field(default_factory=list)


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        ({"limits": {"team-a": {"gpu": "x"}}}, "limits[team-a][gpu]"),
        ({"limits": {"team-a": 3}}, "limits[team-a]"),
        ({"limits": {"acme.io/team": {"cpu": True}}}, "limits[acme.io/team][cpu]"),
        ({"teams": [{"name": 1}]}, "teams[0][name]"),
    ],
)
def test_a_map_key_is_written_in_brackets(raw: dict, path: str) -> None:
    with pytest.raises(ArgsError) as err:
        decode_args(QuotaArgs, raw)
    assert err.value.field == path
