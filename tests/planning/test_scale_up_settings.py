"""Per-pool limits and prices: the pools file, the caps on new nodes, prices from a label."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.objects.node import parse_node
from kubesched.planning.node_pools import NodePool
from kubesched.planning.scale_up_settings import (
    PoolSettings,
    SettingsError,
    check_pools_named,
    pool_cap,
    pool_price,
    read_pool_settings,
)
from tests.helpers import node

SMALL = NodePool("small", "node.kubernetes.io/instance-type", ("s1", "s2", "s3"), "s1", True)


def test_the_pools_file_maps_pool_names_to_settings(tmp_path: Path):
    path = tmp_path / "pools.yaml"
    path.write_text("small: {maxSize: 40, price: 0.096}\nbig: {maxNodes: 10}\n'*': {maxNodes: 100}\n")
    assert read_pool_settings(str(path)) == {
        "small": PoolSettings(max_size=40, price=0.096), "big": PoolSettings(max_nodes=10),
        "*": PoolSettings(max_nodes=100)}


@pytest.mark.parametrize(("text", "problem"), [
    ("small: {maxSize: -1}\n", "P: pool small: maxSize must be an integer, 0 or more"),
    ("small: {maxNodes: many}\n", "P: pool small: maxNodes must be an integer, 0 or more"),
    ("small: {price: cheap}\n", "P: pool small: price must be a number, 0 or more"),
    ("small: {minSize: 1}\n", "P: pool small: unknown field minSize (known: maxSize, maxNodes, price)"),
    ("small: 3\n", "P: pool small: want a map of maxSize, maxNodes, price"),
    ("- small\n", "P: want a map from pool name to settings (maxSize, maxNodes, price)"),
])
def test_a_bad_pools_file_is_one_line_naming_the_pool_and_field(tmp_path: Path, text: str, problem: str):
    path = tmp_path / "pools.yaml"
    path.write_text(text)
    with pytest.raises(SettingsError) as err:
        read_pool_settings(str(path))
    assert err.value.lines == [problem.replace("P:", f"{path}:")]


def test_a_pools_file_naming_a_pool_the_snapshot_lacks_is_an_error():
    with pytest.raises(SettingsError) as err:
        check_pools_named({"smal": PoolSettings(max_nodes=1), "*": PoolSettings()}, [SMALL], "pools.yaml")
    assert err.value.lines == ["pools.yaml: pool smal: no node has node.kubernetes.io/instance-type=smal"]


@pytest.mark.parametrize(("settings", "max_nodes", "cap"), [
    ({}, 1000, 1000),
    ({}, 5, 5),
    ({"small": PoolSettings(max_nodes=7)}, 1000, 7),
    ({"small": PoolSettings(max_size=10)}, 1000, 7),  # 3 nodes already
    ({"small": PoolSettings(max_size=2)}, 1000, 0),
    ({"small": PoolSettings(max_size=10, max_nodes=4)}, 1000, 4),
    ({"*": PoolSettings(max_nodes=9)}, 1000, 9),
    ({"small": PoolSettings(max_nodes=20), "*": PoolSettings(max_nodes=9)}, 1000, 20),
])
def test_the_lowest_cap_on_new_nodes_wins(settings, max_nodes, cap):
    assert pool_cap(SMALL, settings, max_nodes) == cap


def _node(labels: dict[str, str]):
    return parse_node(node("s1", labels=labels))


def test_a_price_comes_from_the_file_before_the_label():
    example = _node({"price": "0.5"})
    assert pool_price(SMALL, example, {"small": PoolSettings(price=0.25)}, "price") == 0.25
    assert pool_price(SMALL, example, {}, "price") == 0.5
    assert pool_price(SMALL, example, {}, None) is None
    assert pool_price(SMALL, _node({}), {}, "price") is None


def test_a_price_label_holding_no_number_is_an_error_naming_the_node():
    with pytest.raises(SettingsError) as err:
        pool_price(SMALL, _node({"price": "cheap"}), {}, "price")
    assert err.value.lines == ["--price-label price: node s1 has price=cheap, not a price (a number, 0 or more)"]
