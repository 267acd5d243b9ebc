"""``image_rows`` answers as a scan of the nodes would, whether it found the image alone (the
first images asked for) or had indexed every image (once many were asked for), and stays
so as nodes come, change and go."""

from __future__ import annotations

import random

import pytest

from kubesched.cache.cache import Cache
from kubesched.cache.node_indexes import _IMAGES_ONE_BY_ONE
from kubesched.cache.node_table import NodeTable
from kubesched.objects.node import Node, parse_node

IMAGES = [f"repo/img{i}:v1" for i in range(_IMAGES_ONE_BY_ONE + 8)]


def _node(name: str, images: list[str], size: int) -> Node:
    return parse_node({
        "metadata": {"name": name},
        "status": {"allocatable": {"cpu": "2", "memory": "1Gi", "pods": "10"},
                   "images": [{"names": [i], "sizeBytes": size} for i in images],
                   "conditions": [{"type": "Ready", "status": "True"}]},
    })


def _scanned(table: NodeTable, image: str) -> list[tuple[str, int]]:
    return sorted((node.name, node.images[image]) for node in table.nodes if node is not None and image in node.images)


def _answered(table: NodeTable, image: str) -> list[tuple[str, int]]:
    rows, sizes = table.image_rows(image)
    return sorted((table.names[r], s) for r, s in zip(rows.tolist(), sizes.tolist()))


@pytest.mark.parametrize("asked_before_changes", [1, _IMAGES_ONE_BY_ONE - 1, len(IMAGES)])
def test_image_rows_match_a_scan_of_the_nodes_as_nodes_change(asked_before_changes: int) -> None:
    rng = random.Random(asked_before_changes)
    cache = Cache()
    for i in range(30):
        cache.add_node(_node(f"n{i}", rng.sample(IMAGES, 4), 100 + i))
    table = cache.table
    for image in IMAGES[:asked_before_changes]:
        assert _answered(table, image) == _scanned(table, image)
    for step in range(60):
        name = f"n{rng.randrange(40)}"
        if cache.nodes.get(name) is not None and rng.random() < 0.2:
            cache.remove_node(name)
        elif cache.nodes.get(name) is not None:
            cache.update_node(_node(name, rng.sample(IMAGES, 4), rng.randrange(1, 500)))
        else:
            cache.add_node(_node(name, rng.sample(IMAGES, 3), step))
        image = rng.choice(IMAGES)
        assert _answered(table, image) == _scanned(table, image), (step, image)
    for image in IMAGES + ["repo/absent:v1"]:
        assert _answered(table, image) == _scanned(table, image), image
