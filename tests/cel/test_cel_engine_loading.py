"""The CEL engine is loaded on the first compile, not with the plugin: DynamicResources is in
the default profile, and the engine's package imports its interactive shell (about 0.25 s).
So is the analysis (parser, type checker, cost estimator, extra libraries)."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import sys
import kubesched.plugins.registry
from kubesched.cel import CelCache
ANALYSIS = "kubesched.cel.analysis"
before = "cel" in sys.modules or ANALYSIS in sys.modules
CelCache().get_or_compile('device.driver == "gpu.example.com"')
print(before, "cel" in sys.modules and ANALYSIS in sys.modules)
"""


def test_the_engine_is_loaded_by_the_first_compile_not_by_the_default_profile() -> None:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]
