"""Fragmentation as the FGD paper measures it, and the typical pods it is measured against."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kubesched.plugins.gpushare import FragmentationModel, PodShape, TypicalPod, typical_pods

from . import reference as ref


def test_typical_pods_are_the_most_frequent_shapes_covering_95_percent() -> None:
    shapes = [PodShape(1000, 500, 1)] * 60 + [PodShape(2000, 1000, 1)] * 30 + [PodShape(3000, 0, 0)] * 6 \
        + [PodShape(9000, 1000, 8)] * 4
    typical = typical_pods(shapes)
    assert typical == [TypicalPod(PodShape(1000, 500, 1), 60.0), TypicalPod(PodShape(2000, 1000, 1), 30.0),
                       TypicalPod(PodShape(3000, 0, 0), 6.0)]  # 96 of 100 pods: the 8-GPU shape is left out


def test_equally_frequent_shapes_are_taken_larger_first() -> None:
    typical = typical_pods([PodShape(1000, 300, 1), PodShape(1000, 700, 1)], popularity=0.5)
    assert [t.shape for t in typical] == [PodShape(1000, 700, 1)]


@pytest.mark.parametrize("seed", range(5))
def test_node_fragmentation_matches_the_paper_definition(seed: int) -> None:
    rng = random.Random(seed)
    typical = [TypicalPod(PodShape(rng.choice([1000, 4000, 12000]), rng.choice([0, 150, 300, 500, 800, 1000]),
                                   rng.choice([1, 2])), float(rng.randint(1, 50))) for _ in range(8)]
    model = FragmentationModel(typical)
    nodes = [ref.Node(rng.choice([0, 2000, 8000, 64000]), tuple(rng.choice([0, 120, 300, 500, 870, 1000])
                                                               for _ in range(8))) for _ in range(40)]
    free = np.array([n.free for n in nodes], dtype=np.int64)
    cpu = np.array([n.cpu_left for n in nodes], dtype=np.int64)
    access = np.tile(model.wants_gpu, (len(nodes), 1))
    ours = model.fragmentation(model.stats(free), cpu, access)
    paper = [ref.node_fragmentation(n, [(ref.Pod(t.shape.cpu_milli, t.shape.gpu_milli if t.shape.gpu_count else 0,
                                                 t.shape.gpu_count), t.weight) for t in typical]) for n in nodes]
    assert np.allclose(ours, paper)


def test_an_idle_node_is_fragmented_only_by_the_cpu_only_typical_pods() -> None:
    # The paper counts every free GPU as a fragment for a pod that asks for none.
    model = FragmentationModel([TypicalPod(PodShape(1000, 500, 1), 3.0), TypicalPod(PodShape(1000, 0, 0), 1.0)])
    idle = model.fragmentation(model.stats(np.array([[1000, 1000]])), np.array([8000]), np.array([[True, False]]))
    assert idle.tolist() == [500.0]  # a quarter of the 2,000 free milli-GPU
