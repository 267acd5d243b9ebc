"""Dataclass plugin args: one strict decoder, as upstream decodes pluginConfig args."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Literal

import pytest

from kubesched.framework import ArgsError, decode_args
from kubesched.framework.args import (
    Int32,
    Int64,
    duplicate,
    forbidden,
    go_quote,
    invalid,
    label_name_problems,
    not_supported,
    required,
)
from kubesched.framework.registry import GatedArgs
from kubesched.objects.errors import ObjectError
from kubesched.plugins.registry import in_tree_registry


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
        ({"weights": {"cpu": "x"}}, "weights[cpu]", 'must be an integer, got "x"'),
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


# -- Go's sized integers, nulls, bespoke fields, defaulting ---------------------------------
def _selector(raw: object, path: str) -> tuple[str, ...]:
    if not isinstance(raw, str):
        raise ObjectError(f"{path}.matchLabels", "must be a map of strings")
    if "=" not in raw:
        raise ArgsError(path, f"Invalid value: {go_quote(raw)}: must be key=value")
    return tuple(raw.split("=", 1))


@dataclass(frozen=True, slots=True)
class Sized:
    weight: Int32 = 1
    budget: Int64 = 0
    name: str = "n"
    selector: tuple[str, ...] | None = field(default=None, metadata={"decode": _selector})

    def __post_init__(self) -> None:
        if self.weight == 0:  # as a SetDefaults_* func: 0 means the default
            object.__setattr__(self, "weight", 1)


@pytest.mark.parametrize(
    ("raw", "path", "message"),
    [
        ({"weight": 2**31}, "weight", "must be a 32-bit integer, got 2147483648"),
        ({"weight": -(2**31) - 1}, "weight", "must be a 32-bit integer, got -2147483649"),
        ({"budget": 2**63}, "budget", "must be a 64-bit integer, got 9223372036854775808"),
        ({"weight": "1"}, "weight", 'must be an integer, got "1"'),
        ({"selector": "app"}, "selector", 'Invalid value: "app": must be key=value'),
        ({"selector": 3}, "selector.matchLabels", "must be a map of strings"),
    ],
)
def test_sized_integers_and_bespoke_fields(raw: object, path: str, message: str):
    with pytest.raises(ArgsError) as err:
        decode_args(Sized, raw, "")
    assert (err.value.field, err.value.message) == (path, message)


def test_bespoke_fields_get_the_full_path():
    with pytest.raises(ArgsError) as err:
        decode_args(Sized, {"selector": 3}, "args")
    assert err.value.field == "args.selector.matchLabels"


def test_ranges_hold_at_the_bounds_and_a_decoder_reads_its_field():
    got = decode_args(Sized, {"weight": 2**31 - 1, "budget": -(2**63), "selector": "app=web"})
    assert got == Sized(2**31 - 1, -(2**63), "n", ("app", "web"))


def test_null_is_the_default_as_in_go():
    assert decode_args(Sized, {"weight": None, "name": None, "selector": None}) == Sized()


def test_post_init_defaulting_applies_to_decoded_values():
    assert decode_args(Sized, {"weight": 0}).weight == 1


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (invalid(101, "not in valid range [0, 100]"), "Invalid value: 101: not in valid range [0, 100]"),
        (invalid("a/b/c", "bad"), 'Invalid value: "a/b/c": bad'),
        (invalid(True, "bad"), "Invalid value: true: bad"),
        (required("can not be empty"), "Required value: can not be empty"),
        (required(), "Required value"),
        (forbidden("must be nil"), "Forbidden: must be nil"),
        (duplicate("cpu"), 'Duplicate value: "cpu"'),
        (not_supported("x", ["System", "List"]), 'Unsupported value: "x": supported values: "System", "List"'),
        (go_quote('a"b\\c\n'), '"a\\"b\\\\c\\n"'),
    ],
)
def test_messages_print_as_field_errors_do(message: str, expected: str):
    assert message == expected


def test_label_names_are_checked_as_validate_label_name():
    assert label_name_problems("example.com/gpu", "p") == []
    assert label_name_problems("a/b/c", "p") == [(
        "p",
        'Invalid value: "a/b/c": a qualified name must consist of alphanumeric characters, \'-\', \'_\' or \'.\', '
        "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
        "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
        "prefix and '/' (e.g. 'example.com/MyName')",
    )]


def test_every_in_tree_plugin_with_args_decodes_them_with_decode_args():
    registry = in_tree_registry()
    with_args = [spec for spec in registry.specs() if spec.takes_args]
    assert sorted(spec.name for spec in with_args) == [
        "DefaultPreemption", "DynamicResources", "InterPodAffinity", "NodeAffinity", "NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread",
        "VolumeBinding",
    ]
    for spec in with_args:
        assert spec.parse_args is None and spec.args_type is not None
        assert dataclasses.is_dataclass(spec.args_type)
        params = spec.args_type.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen and hasattr(spec.args_type, "__slots__")
        defaults = spec.args_type()
        if isinstance(defaults, GatedArgs):  # defaulted for the gates, as SetDefaults_ reads them
            defaults = defaults.defaulted(registry.features)
        assert spec.decode(None) == defaults
