"""The replay and sweep reports the browser tests open, made from the trace sample shipped
in ``examples/alibaba-gpu-v2023`` with small settings (two policies, half the cluster's
GPUs arriving), so that each page is written in seconds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "alibaba-gpu-v2023"
NODES = SAMPLE / "openb_node_list_gpu_node.csv"
PODS = SAMPLE / "openb_pod_list_default.csv"
SHARED_PODS = SAMPLE / "openb_pod_list_gpushare40.csv"
POLICIES = ("FGD", "BestFit")
ARRIVAL = 0.5


def image_report(page: Any) -> list[dict[str, float | bool | str]]:
    """Every image of the open page: decoded or not, its natural and shown widths, its alt."""
    result: list[dict[str, float | bool | str]] = page.evaluate(
        """[...document.images].map(img => ({alt: img.alt, complete: img.complete,
            natural: img.naturalWidth, shown: img.getBoundingClientRect().width,
            right: img.getBoundingClientRect().right}))""")
    return result


def overflows_horizontally(page: Any) -> bool:
    """Whether the page is wider than the window (a figure or table pushing past the edge)."""
    return bool(page.evaluate("document.documentElement.scrollWidth > window.innerWidth"))
