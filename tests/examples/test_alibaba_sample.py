"""The shipped sample of Alibaba's GPU trace (examples/alibaba-gpu-v2023) makes the replay
and sweep examples of the docs run from a fresh clone: no data folder of any machine."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from contextlib import chdir
from pathlib import Path

import pytest
from click.testing import CliRunner

from kubesched.cli.main import cli
from kubesched.replay import ReplaySpec, run_replay
from kubesched.replay.alibaba import read_nodes, read_pods
from kubesched.sweep import ReplayGrid, load_grid, missing_files

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "alibaba-gpu-v2023"
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
SAMPLE_BYTES = 300_000  # "a few hundred KB at most"


def _commands(page: str, prefix: str) -> list[str]:
    """The ``prefix`` commands of the page's sh/console blocks, continuation lines joined."""
    found = []
    for lang, body in BLOCK.findall((ROOT / "docs" / page).read_text()):
        if lang in ("sh", "console"):
            for line in body.replace("\\\n", " ").splitlines():
                line = line.removeprefix("$ ").strip()
                if line.startswith(prefix):
                    found.append(line)
    return found


def test_the_sample_is_small_and_holds_the_files_the_docs_name() -> None:
    files = sorted(p.name for p in SAMPLE.glob("*.csv"))
    assert files == ["openb_node_list_gpu_node.csv", "openb_pod_list_default.csv", "openb_pod_list_gpushare40.csv",
                     "openb_pod_list_gpuspec33.csv"]
    assert sum(p.stat().st_size for p in SAMPLE.iterdir()) < SAMPLE_BYTES


def test_the_sample_is_a_valid_trace_with_gpu_pods_of_each_kind() -> None:
    nodes = read_nodes(SAMPLE / "openb_node_list_gpu_node.csv")
    pods = read_pods(SAMPLE / "openb_pod_list_default.csv", need_times=True)
    assert len(nodes) > 100 and len(pods) == 800
    assert {p.num_gpu > 1 for p in pods} == {True, False}
    assert any(p.num_gpu == 1 and p.gpu_milli < 1000 for p in pods)  # GPU sharing


def test_the_sample_says_where_the_trace_comes_from_and_its_terms() -> None:
    readme = (SAMPLE / "README.md").read_text()
    assert "github.com/alibaba/clusterdata" in readme and "cluster-trace-gpu-v2023/csv" in readme
    assert "research or study" in readme and "KUBESCHED_GPU_TRACE" in readme


@pytest.mark.parametrize("folder", ["docs", "benchmarks", "examples"])
def test_no_doc_or_script_names_a_folder_of_one_machine(folder: str) -> None:
    named = [str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*")
             if p.is_file() and p.suffix in (".md", ".py", ".yaml") and "/work/" in p.read_text()]
    assert named == []


def test_the_replay_docs_command_runs_on_the_sample(tmp_path: Path) -> None:
    [command] = _commands("replay.md", "kubesched replay $KUBESCHED_GPU_TRACE")
    args = shlex.split(command.replace("$KUBESCHED_GPU_TRACE", str(SAMPLE)))[2:]
    assert args[args.index("--seeds") + 1] == "10" and args[args.index("--output") + 1] == "fgd-experiment"
    args[args.index("--seeds"):args.index("--seeds") + 2] = ["--seed", "42", "--policy", "FGD"]  # one of the 60
    args[args.index("--output") + 1] = str(tmp_path / "fgd-experiment")
    result = CliRunner().invoke(cli, ["replay", *args])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "fgd-experiment" / "replay.json").is_file()
    assert "121 nodes (620 GPUs)" in result.output


def test_the_sweep_grid_file_reads_the_sample_beside_it() -> None:
    grid = load_grid(str(SAMPLE / "fgd-variants.yaml"))
    assert isinstance(grid, ReplayGrid)
    assert [Path(v).name for v in grid.variants] == ["openb_pod_list_default.csv", "openb_pod_list_gpushare40.csv"]
    assert missing_files(grid) == [] and grid.size == 6 * 2 * 10 * 2
    first = grid.specs()[0]
    assert run_replay(first).pods_arrived > 0


def test_the_benchmark_defaults_to_the_sample_and_says_so() -> None:
    proc = subprocess.run([sys.executable, "benchmarks/bench_replay.py", "--policy", "FGD"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "KUBESCHED_GPU_TRACE"})
    assert proc.returncode == 0, proc.stderr
    assert "the sample in" in proc.stdout and "trace: 121 nodes" in proc.stdout


def test_a_replay_of_the_sample_runs_in_the_timeline_mode_too() -> None:
    with chdir(ROOT):
        result = run_replay(ReplaySpec("examples/alibaba-gpu-v2023/openb_node_list_gpu_node.csv",
                                       "examples/alibaba-gpu-v2023/openb_pod_list_default.csv", "FGD", mode="timeline"))
    assert result.pods_arrived == 800


def test_the_replay_pages_python_block_runs_on_the_sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    [code] = [body for lang, body in BLOCK.findall((ROOT / "docs" / "replay.md").read_text()) if lang == "python"]
    code = code.replace('"examples/alibaba-gpu-v2023/"', repr(str(SAMPLE) + "/"))
    monkeypatch.chdir(tmp_path)  # it writes report.html where it runs
    exec(compile(code, "docs/replay.md", "exec"), {"__name__": "__main__"})
    assert float(capsys.readouterr().out) > 0.9 and (tmp_path / "report.html").is_file()
