"""The sweep on a Dask LocalCluster: the same results as running the specs one after another,
failures kept apart from the results, Ctrl-C cancelling what has not finished."""

from __future__ import annotations

import dataclasses

import pytest
from dask.distributed import Client, LocalCluster

from kubesched.planning import CompareResult, run_compare
from kubesched.replay import ReplayResult, ReplaySpec, run_replay
from kubesched.sweep import CompareGrid, Done, ReplayGrid, connect, run_sweep

from .conftest import BAD_PODS, NODES, PACKING, PODS, SNAPSHOT


def _timeless_replay(result: ReplayResult) -> ReplayResult:
    return dataclasses.replace(result, seconds=0.0)


def _timeless_compare(result: CompareResult) -> CompareResult:
    return dataclasses.replace(result, configs=[dataclasses.replace(run, seconds=0.0) for run in result.configs])


def test_replays_on_the_cluster_equal_the_same_replays_run_one_after_another(client: Client) -> None:
    specs = ReplayGrid(NODES, (PODS,), ("FGD", "Random", "BestFit"), (42, 43), (1.0, 1.3)).specs()
    outcome = run_sweep(client, run_replay, specs)
    assert outcome.failures == [] and not outcome.interrupted and outcome.workers == 2
    assert [_timeless_replay(r) for r in outcome.finished] == [_timeless_replay(run_replay(s)) for s in specs]
    assert [r.spec for r in outcome.finished] == specs  # gathered as they finish, returned in grid order


def test_comparisons_on_the_cluster_equal_the_same_comparisons_run_one_after_another(client: Client) -> None:
    specs = CompareGrid((SNAPSHOT,), ("default", PACKING), (42, 43, 44)).specs()
    outcome = run_sweep(client, run_compare, specs)
    assert outcome.failures == []
    assert [_timeless_compare(r) for r in outcome.finished] == [_timeless_compare(run_compare(s)) for s in specs]


def test_a_failing_task_is_reported_with_its_spec_and_error_and_the_others_finish(client: Client) -> None:
    specs = ReplayGrid(NODES, (PODS, BAD_PODS, PODS.replace("pods.csv", "gone.csv")), ("FGD",)).specs()
    outcome = run_sweep(client, run_replay, specs)
    assert [r.spec for r in outcome.finished] == [specs[0]]
    assert outcome.results[1] is None and outcome.results[2] is None
    assert [(f.index, f.task) for f in outcome.failures] == [
        (1, "FGD seed 42, arrival 130%, bad-pods.csv"), (2, "FGD seed 42, arrival 130%, gone.csv")]
    assert outcome.failures[0].error == f"TraceError: {BAD_PODS}:3: gpu_milli: must be an integer, got 'lots'"
    assert outcome.failures[1].error.startswith("TraceError: ") and "No such file or directory" in outcome.failures[1].error
    assert outcome.cancelled == 0


def test_progress_sees_every_task_once_as_it_finishes(client: Client) -> None:
    specs = ReplayGrid(NODES, (PODS, BAD_PODS), ("FGD", "Random"), (1, 2)).specs()
    seen: list[Done[ReplaySpec, ReplayResult]] = []
    run_sweep(client, run_replay, specs, seen.append)
    assert sorted(d.index for d in seen) == list(range(len(specs)))
    assert [d.completed for d in seen] == list(range(1, len(specs) + 1))
    assert all((d.failure is None) == (d.result is not None) and d.spec == specs[d.index] for d in seen)
    assert sum(d.failure is not None for d in seen) == 4


def test_ctrl_c_cancels_the_tasks_not_finished_and_keeps_the_results_gathered(client: Client) -> None:
    specs = ReplayGrid(NODES, (PODS,), seeds=tuple(range(8))).specs()  # 48 replays

    def interrupt(done: Done[ReplaySpec, ReplayResult]) -> None:
        if done.completed == 2:
            raise KeyboardInterrupt

    outcome = run_sweep(client, run_replay, specs, interrupt)
    assert outcome.interrupted
    assert len(outcome.finished) == 2 and outcome.failures == []
    assert outcome.cancelled == len(specs) - 2
    assert client.submit(sum, [1, 2]).result() == 3  # the cluster is still usable


def test_connecting_to_an_address_where_no_scheduler_listens_raises_oserror() -> None:
    with pytest.raises(OSError, match=r"^cannot reach the Dask scheduler at tcp://127\.0\.0\.1:1: "):
        with connect("tcp://127.0.0.1:1", timeout=0.5):
            pass


def test_connect_closes_its_client_when_the_block_is_interrupted(cluster: LocalCluster) -> None:
    with pytest.raises(KeyboardInterrupt):
        with connect(cluster.scheduler_address) as client:
            raise KeyboardInterrupt
    assert client.status == "closed"
