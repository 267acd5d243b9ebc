"""The GPU plugins keep the plugin SDK's contract (kubesched.testing), as any plugin must."""

from __future__ import annotations

import pytest

from kubesched.plugins.gpushare import best_fit, dot_product, fgd, gpu_clustering, gpu_packing, random_score, share
from kubesched.testing import assert_declarations, assert_unreserve_idempotent, random_clusters

CLUSTERS = random_clusters(6)


def test_gpu_share_declares_its_points_and_unreserves_idempotently() -> None:
    assert_declarations(share.spec, None, ["preFilter", "filter", "reserve"], CLUSTERS)
    assert_unreserve_idempotent(share.spec, None, CLUSTERS)


@pytest.mark.parametrize(("spec", "args", "points"), [
    (random_score.spec, {"seed": 3}, ["preFilter", "preScore", "score"]),
    (dot_product.spec, None, ["score"]),
    (gpu_clustering.spec, None, ["score"]),
    (gpu_packing.spec, None, ["score"]),
    (best_fit.spec, None, ["score"]),
    (fgd.spec, {"typicalPods": [{"cpuMilli": 1000, "gpuMilli": 500, "gpuCount": 1, "weight": 2}]}, ["preFilter", "score"]),
], ids=lambda v: getattr(v, "name", ""))
def test_each_policy_declares_its_points(spec: object, args: object, points: list[str]) -> None:
    assert_declarations(spec, args, points, CLUSTERS)  # type: ignore[arg-type]
