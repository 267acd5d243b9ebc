"""Dataclass plugin args: one strict decoder, as upstream decodes pluginConfig args."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import pytest

from kubesched.framework import ArgsError, decode_args


@dataclass(frozen=True)
class Shape:
    utilization: int
    score: int = 0


@dataclass(frozen=True)
class Args:
    timeout_seconds: int = 60
    ratio: float = 0.5
    mode: Literal["Pack", "Spread"] = "Pack"
    enabled: bool = True
    label: str | None = None
    resources: list[str] = field(default_factory=list)
    weights: dict[str, int] = field(default_factory=dict)
    shape: tuple[Shape, ...] = ()
    custom: str = field(default="x", metadata={"json": "customName"})

    def validate(self) -> list[tuple[str, str]]:
        if self.timeout_seconds < 0:
            return [("timeoutSeconds", f"Invalid value: {self.timeout_seconds}: must be non-negative")]
        return []


def test_missing_args_take_the_dataclass_defaults():
    assert decode_args(Args, None) == Args()


def test_fields_are_read_by_their_camel_case_names():
    got = decode_args(Args, {"timeoutSeconds": 5, "ratio": 1, "mode": "Spread", "enabled": False, "label": "a",
                             "resources": ["cpu"], "weights": {"cpu": 2}, "shape": [{"utilization": 10}],
                             "customName": "y"})
    assert got == Args(5, 1.0, "Spread", False, "a", ["cpu"], {"cpu": 2}, (Shape(10, 0),), "y")


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        ({"timeout": 1}, "timeout", 'unknown field "timeout"'),
        ({"timeoutSeconds": "5"}, "timeoutSeconds", 'must be an integer, got "5"'),
        ({"timeoutSeconds": True}, "timeoutSeconds", "must be an integer, got true"),
        ({"enabled": 1}, "enabled", "must be a boolean, got 1"),
        ({"mode": "Fill"}, "mode", 'Unsupported value: "Fill": supported values: "Pack", "Spread"'),
        ({"resources": "cpu"}, "resources", "must be a list, got string"),
        ({"resources": ["cpu", 3]}, "resources[1]", "must be a string, got 3"),
        ({"weights": {"cpu": "x"}}, "weights.cpu", 'must be an integer, got "x"'),
        ({"shape": [{"score": 1}]}, "shape[0].utilization", "Required value"),
        ({"shape": [{"utilization": 1, "extra": 0}]}, "shape[0].extra", 'unknown field "extra"'),
        ({"timeoutSeconds": -1}, "timeoutSeconds", "Invalid value: -1: must be non-negative"),
        ("text", "", "must be an object, got string"),
    ],
)
def test_bad_args_name_the_field(raw: object, path: str, message: str):
    with pytest.raises(ArgsError) as err:
        decode_args(Args, raw)
    assert (err.value.field, err.value.message) == (path, message)


def test_a_path_prefix_is_kept_in_errors():
    with pytest.raises(ArgsError) as err:
        decode_args(Args, {"ratio": "x"}, "args")
    assert err.value.field == "args.ratio"


def test_api_version_and_kind_are_accepted_as_upstream_args_carry_them():
    assert decode_args(Args, {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "MyArgs"}) == Args()
