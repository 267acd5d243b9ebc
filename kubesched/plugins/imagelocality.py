"""ImageLocality: favour nodes that already have the pod's images, weighted by how widely spread they are."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..framework.interfaces import MAX_NODE_SCORE

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB  # below this an image is cheap to pull
MAX_CONTAINER_THRESHOLD = 1000 * MB  # per container


def _priority(sums: np.ndarray, containers: int) -> np.ndarray:
    """``calculatePriority``: clamp the summed image score and scale it to 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * containers
    clamped = np.clip(sums, MIN_THRESHOLD, max_threshold)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


class ImageLocality:
    name = NAME

    def score_nodes(self, state: Any, pod: Any, snapshot: Any, rows: np.ndarray) -> np.ndarray:
        table = snapshot.table
        total_nodes = table.num_nodes
        if not pod.images or total_nodes == 0:
            return _priority(np.zeros(len(rows), dtype=np.int64), max(len(pod.images), 1))
        sums = np.zeros(table.size, dtype=np.int64)
        for image in pod.images:
            with_image, sizes = table.image_rows(image)
            if len(with_image):
                spread = len(with_image) / total_nodes
                sums[with_image] += (sizes.astype(np.float64) * spread).astype(np.int64)
        return _priority(sums[rows], len(pod.images))


def new(args: Any, handle: Any) -> ImageLocality:
    return ImageLocality()
