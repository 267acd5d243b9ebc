"""Write this folder's sample of Alibaba's GPU trace from the full trace.

    python examples/alibaba-gpu-v2023/make_sample.py FULL_TRACE_DIR

FULL_TRACE_DIR holds the CSV files of ``cluster-trace-gpu-v2023/csv/`` from
Alibaba's clusterdata repository (see README.md here for how to fetch them; also read
from ``$KUBESCHED_GPU_TRACE``). The sample is deterministic (fixed seed), so it can be
regenerated and diffed: a tenth of the GPU nodes, and the same 800 pod rows' worth of
each pod list, drawn uniformly and kept in the trace's order.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 2023
NODE_SHARE = 0.1
PODS = 800
FILES = ("openb_node_list_gpu_node.csv", "openb_pod_list_default.csv", "openb_pod_list_gpushare40.csv",
         "openb_pod_list_gpuspec33.csv")


def sample(source: Path, target: Path, count: int | None, share: float, rng: random.Random) -> int:
    header, *rows = source.read_text(encoding="utf-8").splitlines(keepends=True)
    keep = count if count is not None else max(1, round(len(rows) * share))
    chosen = sorted(rng.sample(range(len(rows)), min(keep, len(rows))))
    target.write_text(header + "".join(rows[i] for i in chosen), encoding="utf-8")
    return len(chosen)


def main(argv: list[str]) -> int:
    given = argv[1] if len(argv) > 1 else os.environ.get("KUBESCHED_GPU_TRACE")
    if not given:
        print(__doc__, file=sys.stderr)
        return 2
    full = Path(given)
    missing = [name for name in FILES if not (full / name).is_file()]
    if missing:
        print(f"error: {full}: no {', '.join(missing)}", file=sys.stderr)
        return 2
    for name in FILES:
        rng = random.Random(f"{SEED}-{name}")
        is_nodes = name.startswith("openb_node_list")
        kept = sample(full / name, HERE / name, None if is_nodes else PODS, NODE_SHARE, rng)
        print(f"{name}: {kept} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
