"""Ingest: loading a cluster dump into the scheduler's cache, from JSON and from YAML.

    python benchmarks/bench_ingest.py [--nodes N] [--pods N] [--format json|yaml|both]
                                      [--profile lean|realistic] [--dir DIR] [--cprofile FILE]

What a live scheduler does at every informer sync, and what ``kubesched simulate`` does
before its first cycle: read the objects, compile them (``parse_node``, ``parse_pod``)
and fill the cache. Each measurement runs in a fresh interpreter and times
``load_snapshot(path)`` plus ``Simulation(...)`` (the cache and queue filled), wall and
CPU, and reports the peak RSS of that process.

Dumps are written once per size and profile into ``--dir`` (default
``/tmp/kubesched-ingest``), as ``kubectl get nodes,pods -A`` writes them: one ``List``,
JSON indented by 2 (kubectl indents by 4; orjson writes 2) and YAML from PyYAML's
emitter in kubectl's block style. ``--profile lean`` pods are about 1.3 KB of JSON each
(the size of the issue's 1,000,000-pod dump), ``realistic`` ones about 5.6 KB (status
conditions, container statuses, probes, projected token volume), see
``realistic_dump.py``. All pods are bound (the informer-sync case).

Targets (issue 11): from JSON at least 30,000 pods/s and 20,000 nodes/s; from YAML at
most 2x the JSON time and 1.5x its peak memory; 100,000 nodes with 1,000,000 pods in
under 60 s with peak RSS under 4 GiB.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import orjson
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import realistic_dump  # noqa: E402

try:
    from yaml import CSafeDumper as _BaseDumper
except ImportError:  # pragma: no cover - libyaml missing
    from yaml import SafeDumper as _BaseDumper  # type: ignore[assignment]


class Dumper(_BaseDumper):
    """PyYAML's emitter, quoting what go-yaml (kubectl) quotes: strings such as ``56e5871485``
    that YAML 1.2 and go-yaml read as floats, which PyYAML's YAML 1.1 rules leave bare."""


Dumper.add_implicit_resolver("tag:yaml.org,2002:float",
                             re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$"),
                             list("-+0123456789."))


def dump_path(directory: Path, nodes: int, pods: int, profile: str, fmt: str) -> Path:
    return directory / f"dump-{profile}-{nodes}n-{pods}p.{fmt}"


def write_dump(path: Path, nodes: int, pods: int, profile: str, fmt: str) -> None:
    """Stream the List out object by object (a million pods never sit in memory at once)."""
    lean = profile == "lean"
    tmp = path.with_suffix(path.suffix + ".part")
    with open(tmp, "wb") as out:
        if fmt == "json":
            out.write(b'{\n  "apiVersion": "v1",\n  "items": [\n')
            for k, obj in enumerate(realistic_dump.objects(nodes, pods, lean)):
                text = orjson.dumps(obj, option=orjson.OPT_INDENT_2)
                out.write((b",\n" if k else b"") + b"    " + text.replace(b"\n", b"\n    "))
            out.write(b'\n  ],\n  "kind": "List",\n  "metadata": {\n    "resourceVersion": ""\n  }\n}\n')
        else:
            out.write(b"apiVersion: v1\nitems:\n")
            for obj in realistic_dump.objects(nodes, pods, lean):
                out.write(yaml.dump([obj], Dumper=Dumper, default_flow_style=False, sort_keys=True,
                                    width=1 << 30).encode())
            out.write(b'kind: List\nmetadata:\n  resourceVersion: ""\n')
    tmp.rename(path)


MEASURE = r"""
import resource, sys, time, json
t0, c0 = time.perf_counter(), time.process_time()
from kubesched.cluster.snapshot import load_snapshot
from kubesched.cluster.simulated import Simulation
from kubesched.framework.config import default_config
from kubesched.plugins.registry import in_tree_registry, UPSTREAM_ONLY
t1, c1 = time.perf_counter(), time.process_time()
profile = sys.argv[2]
if profile:
    import cProfile
    prof = cProfile.Profile(); prof.enable()
snap = load_snapshot(sys.argv[1])
t2, c2 = time.perf_counter(), time.process_time()
registry = in_tree_registry()
sim = Simulation(snap, default_config(registry, UPSTREAM_ONLY), registry, seed=0)
t3, c3 = time.perf_counter(), time.process_time()
if profile:
    prof.disable(); prof.dump_stats(profile)
print(json.dumps({"import": t1 - t0, "read": t2 - t1, "read_cpu": c2 - c1, "cache": t3 - t2, "cache_cpu": c3 - c2,
                  "nodes": len(snap.nodes), "pods": len(snap.bound_pods) + len(snap.pending_pods),
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(path: Path, cprofile: str | None) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", MEASURE, str(path), cprofile or ""], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=115_000)
    parser.add_argument("--format", choices=("json", "yaml", "both"), default="both")
    parser.add_argument("--profile", choices=("lean", "realistic"), default="realistic")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/kubesched-ingest"))
    parser.add_argument("--cprofile", help="write a cProfile of the load to FILE.{json,yaml}")
    parser.add_argument("--no-nodes-only", action="store_true", help="skip the run on the nodes alone")
    args = parser.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    formats = ("json", "yaml") if args.format == "both" else (args.format,)
    results: dict[str, dict[str, float]] = {}
    runs = [(fmt, args.nodes, args.pods) for fmt in formats]
    if args.pods and "json" in formats and not args.no_nodes_only:
        runs.append(("json", args.nodes, 0))  # nodes alone, for nodes/s
    for fmt, nodes, pods in runs:
        path = dump_path(args.dir, nodes, pods, args.profile, fmt)
        if not path.exists():
            started = time.perf_counter()
            write_dump(path, nodes, pods, args.profile, fmt)
            print(f"wrote {path} ({path.stat().st_size / 2**20:,.0f} MiB) in {time.perf_counter() - started:.0f} s")
        r = measure(path, f"{args.cprofile}.{fmt}" if args.cprofile else None)
        total, cpu = r["read"] + r["cache"], r["read_cpu"] + r["cache_cpu"]
        size = path.stat().st_size / 2**20
        if pods:
            results[fmt] = r
            rate = f"{r['pods'] / total:,.0f} pods/s ({r['pods'] / cpu:,.0f} per CPU second), nodes' time included"
        else:
            rate = f"{r['nodes'] / total:,.0f} nodes/s ({r['nodes'] / cpu:,.0f} per CPU second)"
        print(f"{fmt:4}  {args.profile} {r['nodes']:,} nodes + {r['pods']:,} pods, {size:,.0f} MiB: "
              f"{total:.2f} s wall ({cpu:.2f} s CPU; read+compile {r['read']:.2f} s, cache {r['cache']:.2f} s): "
              f"{rate}; peak RSS {r['peak_rss_mib']:,.0f} MiB")
    if len(results) == 2:
        j, y = results["json"], results["yaml"]
        ratio = (y["read"] + y["cache"]) / (j["read"] + j["cache"])
        cpu_ratio = (y["read_cpu"] + y["cache_cpu"]) / (j["read_cpu"] + j["cache_cpu"])
        mem = y["peak_rss_mib"] / j["peak_rss_mib"]
        print(f"YAML/JSON: time {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU (target <= 2), peak RSS {mem:.2f}x (target <= 1.5)")
    print("targets: JSON >= 30,000 pods/s and >= 20,000 nodes/s; 100,000 nodes + 1,000,000 pods < 60 s, peak RSS < 4 GiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
