"""Quantities (``resource.Quantity``): every suffix and exponent form, rounding, bad strings."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubesched.objects.errors import ObjectError
from kubesched.objects.pod import parse_pod
from kubesched.objects.quantity import QuantityError, milli_value, parse_quantity, value

from ..helpers import pod

KI, MI, GI, TI, PI, EI = (2**10 * 2 ** (10 * i) for i in range(6))


@pytest.mark.parametrize(
    "text, exact",
    [
        # plain numbers
        ("0", 0),
        ("1", 1),
        ("+1", 1),
        ("-1", -1),
        ("12345", 12345),
        ("1.5", Fraction(3, 2)),
        (".5", Fraction(1, 2)),
        ("5.", 5),
        ("0.001", Fraction(1, 1000)),
        # binary suffixes
        ("1Ki", KI),
        ("1Mi", MI),
        ("1Gi", GI),
        ("1Ti", TI),
        ("1Pi", PI),
        ("1Ei", EI),
        ("1.5Gi", 3 * GI // 2),
        ("0.5Ki", 512),
        # decimal suffixes
        ("1n", Fraction(1, 10**9)),
        ("1u", Fraction(1, 10**6)),
        ("100m", Fraction(1, 10)),
        ("1k", 1000),
        ("1M", 10**6),
        ("1G", 10**9),
        ("1T", 10**12),
        ("1P", 10**15),
        ("1E", 10**18),  # a bare E is exa, not an exponent
        ("2.5k", 2500),
        # exponents
        ("1e3", 1000),
        ("1E3", 1000),
        ("1e+3", 1000),
        ("1e-3", Fraction(1, 1000)),
        ("1.5e2", 150),
        ("12e0", 12),
    ],
)
def test_every_suffix_and_exponent_form_parses_exactly(text, exact):
    assert parse_quantity(text) == exact


@pytest.mark.parametrize(
    "given, exact",
    [(3, 3), (0, 0), (0.5, Fraction(1, 2)), (2.25, Fraction(9, 4))],
)
def test_yaml_numbers_are_quantities(given, exact):
    assert parse_quantity(given) == exact


@pytest.mark.parametrize(
    "text, whole, milli",
    [
        ("1", 1, 1000),
        ("100m", 1, 100),  # Value() rounds a fraction up
        ("1m", 1, 1),
        ("1500m", 2, 1500),
        ("2000m", 2, 2000),
        ("0.1", 1, 100),
        ("1n", 1, 1),  # MilliValue() rounds up too
        ("1u", 1, 1),
        ("1500u", 1, 2),
        ("1.0001", 2, 1001),
        ("0", 0, 0),
        ("1Ki", 1024, 1024000),
        ("1.5Gi", 1610612736, 1610612736000),
        ("200Mi", 209715200, 209715200000),
        ("1e-3", 1, 1),
    ],
)
def test_value_and_milli_value_round_up(text, whole, milli):
    assert value(text) == whole
    assert milli_value(text) == milli


@pytest.mark.parametrize("text, whole", [("-1.5", -2), ("-100m", -1), ("-2", -2)])
def test_value_of_a_negative_fraction_rounds_away_from_zero(text, whole):
    assert value(text) == whole


@pytest.mark.parametrize(
    "text",
    ["", " 1", "1 ", "1 Gi", "1K", "1ki", "1Gb", "abc", "Gi", "1e", "1e3.5", "1.2.3", "--1", "+-1", "e3", "1Mi3", "0x10", "1_000"],
)
def test_malformed_strings_are_rejected(text):
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize("bad", [True, None, [], {}])
def test_non_string_values_are_rejected(bad):
    with pytest.raises((QuantityError, TypeError)):
        parse_quantity(bad)


def test_a_bad_request_names_the_container_and_resource():
    raw = pod("p", requests={"cpu": "lots"})
    with pytest.raises(ObjectError) as err:
        parse_pod(raw)
    assert err.value.field == "spec.containers[0].resources.requests.cpu"


def test_a_bad_init_container_request_names_its_path():
    raw = pod("p", init_containers=[{"name": "i", "image": "x", "resources": {"requests": {"memory": "1GB"}}}])
    with pytest.raises(ObjectError) as err:
        parse_pod(raw)
    assert err.value.field == "spec.initContainers[0].resources.requests.memory"


def test_a_bad_overhead_names_its_path():
    with pytest.raises(ObjectError) as err:
        parse_pod(pod("p", overhead={"cpu": "x"}))
    assert err.value.field == "spec.overhead.cpu"
