"""ImageLocality: favour nodes that already have the pod's images, weighted by how widely spread they are."""

from __future__ import annotations

import numpy as np

from ..framework import MAX_NODE_SCORE, CycleState, Handle, IntArray, NodeTableView, RowArray, SnapshotView, Status
from ..framework.signing import IMAGE_NAMES_SIGNER, REPEATED_IMAGES, SignFragment, UnsignedRead, image_names_signer
from ..objects.pod import PodInfo
from .helper import zero_scores

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB  # below this an image is cheap to pull
MAX_CONTAINER_THRESHOLD = 1000 * MB  # per container


def _priority(sums: IntArray, containers: int) -> IntArray:
    """``calculatePriority``: clamp the summed image score and scale it to 0..100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * containers
    clamped = np.clip(sums, MIN_THRESHOLD, max_threshold)
    return MAX_NODE_SCORE * (clamped - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


VOLUME_IMAGES = UnsignedRead(
    "volume_images",
    "upstream's ImageLocality signs its containers' images only; an image volume's reference is in the volumes' "
    "signature (VolumesSigner) of the volume plugins, which the default profile has",
    lambda pod: pod.copy_with(volume_images=()),
)


def _scores(table: NodeTableView, images: tuple[str, ...], containers: int) -> IntArray | None:
    """Per row, the score of a pod with ``images`` (its containers' and its image volumes')
    and ``containers`` containers (which depends on the nodes alone); None when 0 everywhere."""
    total_nodes = table.num_nodes
    if not images or total_nodes == 0 or containers == 0:
        return None  # the clamped sum is the minimum threshold: score 0
    sums = np.zeros(table.size, dtype=np.int64)
    found = False
    for image in images:
        with_image, sizes = table.image_rows(image)
        if len(with_image):
            found = True
            spread = len(with_image) / total_nodes
            sums[with_image] += (sizes.astype(np.float64) * spread).astype(np.int64)
    if not found:
        return None
    per_row = _priority(sums, containers)
    per_row.flags.writeable = False
    return per_row


class ImageLocality:
    name = NAME

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """OpportunisticBatching: Score reads the normalised image names only; upstream signs
        them as a set, not how many containers repeat one."""
        return [SignFragment(IMAGE_NAMES_SIGNER, image_names_signer(pod))], None

    upstream_unsigned_reads = (REPEATED_IMAGES, VOLUME_IMAGES)

    def score_nodes(self, state: CycleState, pod: PodInfo, snapshot: SnapshotView, rows: RowArray) -> IntArray:
        """``sumImageScores`` over the containers' images and the image volumes', scaled by the
        number of containers (image volumes add to the sum, not to the count)."""
        table = snapshot.table
        images = pod.images + pod.volume_images if pod.volume_images else pod.images
        containers = len(pod.images)
        per_row = table.node_derived((NAME, images, containers), lambda: _scores(table, images, containers))
        if per_row is None:
            return zero_scores(len(rows))
        return per_row[rows]


def new(args: None, handle: Handle) -> ImageLocality:
    return ImageLocality()
