"""One Dask cluster for the sweep tests: two worker processes, started once (a few seconds),
so that every spec and result really crosses a process boundary as on a remote cluster."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from dask.distributed import Client, LocalCluster

DATA = Path(__file__).parent / "data"
NODES = str(DATA / "nodes.csv")
PODS = str(DATA / "pods.csv")
BAD_PODS = str(DATA / "bad-pods.csv")  # gpu_milli 'lots' on line 3
SNAPSHOT = str(DATA / "cluster.yaml")
PACKING = str(DATA / "most-allocated.yaml")


@pytest.fixture(scope="session")
def cluster() -> Iterator[LocalCluster]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": ":0"}, silence_logs=logging.CRITICAL) as local:
        yield local


@pytest.fixture
def client(cluster: LocalCluster) -> Iterator[Client]:
    with Client(cluster.scheduler_address) as connected:
        yield connected
