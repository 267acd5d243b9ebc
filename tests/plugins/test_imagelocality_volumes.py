"""ImageLocality scores image volumes beside the containers' images (upstream's
``sumImageScores``), and divides by the containers only: upstream's "pod with ImageVolume"."""

from __future__ import annotations

from kubesched.objects.pod import parse_pod
from kubesched.plugins import imagelocality

from ..helpers import Cluster, container, make_pod, node, pod, scores

MB = 1024 * 1024


def with_image_volume(reference: str) -> dict:
    raw = pod("p", containers=[container("c", image="gcr.io/30")])
    raw["spec"]["volumes"] = [{"name": "imageVolume", "image": {"reference": reference}}]
    return raw


def cluster() -> Cluster:
    return Cluster([
        node("node1", images=[(["gcr.io/300:latest"], 300 * MB), (["gcr.io/600:latest"], 600 * MB),
                              (["gcr.io/900:latest"], 900 * MB)]),
        node("node2", images=[(["gcr.io/400:latest"], 400 * MB), (["gcr.io/30:latest"], 30 * MB)]),
    ])


def test_an_image_volume_counts_in_the_sum_and_not_in_the_container_count():
    # node1: 100 * (300M * 1/2 - 23M) / (1000M - 23M) = 12; node2: 30M, under 23M once spread: 0
    got = scores(imagelocality.new(None, None), parse_pod(with_image_volume("gcr.io/300")), cluster())
    assert got == {"node1": 12, "node2": 0}


def test_without_the_image_volume_the_pod_scores_its_container_only():
    got = scores(imagelocality.new(None, None), make_pod("p", containers=[container("c", image="gcr.io/30")]), cluster())
    assert got == {"node1": 0, "node2": 0}
