"""The tutorial's plugins (``examples/tutorial``), importable by module name as ``--plugin``
imports them: the directory goes on ``sys.path`` once."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "examples" / "tutorial"
MODULES = ("fewest_pods", "node_pool", "node_pool_batch", "wait_for_sibling", "prefer_label")

if str(TUTORIAL) not in sys.path:
    sys.path.insert(0, str(TUTORIAL))


def module(name: str) -> ModuleType:
    return importlib.import_module(name)
