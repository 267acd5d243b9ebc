"""Results averaged over seeds, one curve per policy (and per trace, mode, arrival target, tie-break)."""

from __future__ import annotations

from pathlib import Path
from statistics import fmean

from kubesched.replay import ReplaySpec, run_replay
from kubesched.replay.report import final_rows, summarize

DATA = Path(__file__).parent / "data"
NODES, PODS = str(DATA / "nodes.csv"), str(DATA / "pods.csv")


def test_seeds_are_averaged_and_other_settings_kept_apart() -> None:
    results = [run_replay(ReplaySpec(NODES, PODS, policy, seed, arrival=arrival))
               for policy in ("FGD", "Random") for arrival in (1.0, 1.3) for seed in (1, 2)]
    curves = summarize(results)
    assert [c.label for c in curves] == ["Random · 100%", "Random · 130%", "FGD · 100%", "FGD · 130%"]
    fgd_130 = curves[-1]
    ends = [r.final.allocation_ratio for r in results if r.policy == "FGD" and r.spec.arrival == 1.3]
    assert fgd_130.seeds == [1, 2] and abs(fgd_130.final_allocation - fmean(ends)) < 1e-12


def test_the_paper_column_appears_only_for_the_papers_run() -> None:
    result = run_replay(ReplaySpec(NODES, PODS, "FGD", 1))
    assert [row.paper for row in final_rows(summarize([result]))] == [None]  # not the default trace


SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "alibaba-gpu-v2023"


def test_a_sample_of_the_papers_trace_is_not_the_papers_run() -> None:
    result = run_replay(ReplaySpec(str(SAMPLE / "openb_node_list_gpu_node.csv"),
                                   str(SAMPLE / "openb_pod_list_default.csv"), "FGD", 42, arrival=1.3))
    assert [row.paper for row in final_rows(summarize([result]))] == [None]
    result.nodes = 1213  # the paper's cluster: the same figures are then set beside the paper's
    assert [row.paper for row in final_rows(summarize([result]))] == [0.954]
