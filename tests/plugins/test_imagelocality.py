"""ImageLocality: favour nodes that already hold the pod's images, scaled by how many
nodes hold them (spread) and clamped between 23MB and 1000MB per container."""

from __future__ import annotations

import pytest

from kubesched.objects.pod import normalized_image_name
from kubesched.plugins import imagelocality

from ..helpers import Cluster, container, make_pod, node, scores

MB = 1024 * 1024


def plugin():
    return imagelocality.new(None, None)


def pod_with(*images, init=()):
    return make_pod(
        "p",
        containers=[container(f"c{i}", image=img) for i, img in enumerate(images)],
        init_containers=[container(f"i{i}", image=img) for i, img in enumerate(init)] or None,
    )


def priority(summed_mb, containers):
    """Upstream's calculatePriority, on whole megabytes."""
    top = 1000 * containers
    clamped = min(max(summed_mb, 23), top)
    return 100 * (clamped - 23) // (top - 23)


@pytest.mark.parametrize(
    "images, init, expected",
    [
        pytest.param(["gcr.io/40", "gcr.io/250"], (), {"n1": 0, "n2": priority(125, 2)}, id="two containers, images on one node each"),
        pytest.param(["gcr.io/300"], (), {"n1": priority(150, 1), "n2": 0}, id="one container"),
        pytest.param(["gcr.io/10"], (), {"n1": 0, "n2": 0}, id="an image under the 23MB threshold scores 0"),
        pytest.param(["gcr.io/shared"], (), {"n1": priority(500, 1), "n2": priority(500, 1)}, id="an image on every node keeps its size"),
        pytest.param(["gcr.io/huge"], (), {"n1": 100, "n2": 0}, id="clamped at 1000MB per container"),
        pytest.param(["gcr.io/none"], (), {"n1": 0, "n2": 0}, id="an image no node has"),
        pytest.param(["gcr.io/40"], ["gcr.io/250"], {"n1": 0, "n2": priority(125, 2)}, id="init containers count"),
        pytest.param(["gcr.io/300:latest"], (), {"n1": priority(150, 1), "n2": 0}, id="an explicit latest tag"),
        pytest.param(["gcr.io/300:v2"], (), {"n1": 0, "n2": 0}, id="another tag is another image"),
    ],
)
def test_score(images, init, expected):
    cluster = Cluster(
        [
            node("n1", images=[(["gcr.io/40:latest"], 40 * MB), (["gcr.io/300:latest"], 300 * MB),
                               (["gcr.io/shared:latest"], 500 * MB), (["gcr.io/huge:latest"], 4000 * MB)]),
            node("n2", images=[(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest"], 10 * MB),
                               (["gcr.io/shared:latest"], 500 * MB)]),
        ]
    )
    assert scores(plugin(), pod_with(*images, init=init), cluster) == expected


def test_spread_counts_every_node_in_the_snapshot_not_just_the_scored_ones():
    nodes = [node(f"n{i}", images=[(["app:latest"], 800 * MB)] if i < 2 else None) for i in range(4)]
    cluster = Cluster(nodes)
    # two of four nodes hold the image: 800MB * 2/4 = 400MB
    assert scores(plugin(), pod_with("app"), cluster, names=["n0", "n1"]) == {"n0": priority(400, 1), "n1": priority(400, 1)}


def test_every_name_of_an_image_matches():
    cluster = Cluster([node("n", images=[(["repo/app:latest", "repo/app@sha256:abc"], 600 * MB)])])
    assert scores(plugin(), pod_with("repo/app@sha256:abc"), cluster) == {"n": priority(600, 1)}


@pytest.mark.parametrize(
    "name, normalized",
    [
        ("nginx", "nginx:latest"),
        ("nginx:1.25", "nginx:1.25"),
        ("registry:5000/app", "registry:5000/app:latest"),
        ("registry:5000/app:v1", "registry:5000/app:v1"),
        ("app@sha256:abc", "app@sha256:abc"),
    ],
)
def test_image_names_without_a_tag_mean_latest(name, normalized):
    assert normalized_image_name(name) == normalized
