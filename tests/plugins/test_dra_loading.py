"""DynamicResources loads its machinery (``core.py``: the DRA manager, the allocator, CEL) on
first need: a cluster without DRA objects and pods without claims never load it, the first
DRA object or pod with claims does, and the manager then holds what the stores held.

The loading is checked on a fresh interpreter's ``sys.modules`` (other tests load it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kubesched.objects.pod import parse_pod
from kubesched.plugins.dynamicresources import DynamicResources
from kubesched.plugins.dynamicresources.shared_manager import registered_dra_manager

from .dra_helpers import claim, gpu_class, gpu_slice, node, pod, simulate

ROOT = Path(__file__).resolve().parents[2]
CORE = "kubesched.plugins.dynamicresources.core"
# The machinery's heaviest parts: the manager, the structured allocator and NodeResourcesFit's
# DRA scoring (its CEL and the DRA records are also read by simulate's snapshot validation).
MACHINERY = (CORE, "kubesched.plugins.dynamicresources.manager", "kubesched.structured",
             "kubesched.plugins.noderesources.dra_totals")

# Schedules two pods without claims (SCENARIO "plain") or with a DeviceClass in the cluster
# ("class"), then prints whether the machinery was imported and whether the plugin made it.
_PROBE = """
import json, sys
from tests.plugins.dra_helpers import gpu_class, node, pod, simulate
objects = [node("n1"), node("n2"), pod("a"), pod("b", requests={"example.com/gpu": "1"})]
if sys.argv[1] == "class":
    objects.append(gpu_class())
sim = simulate(*objects)
plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
placed = sorted(p.name for p in sim.scheduler.cache.pods() if p.node_name)
print(json.dumps([any(m in sys.modules for m in %r), plugin.loaded is not None, placed]))
""" % (MACHINERY,)


def probe(scenario: str) -> list[object]:
    out = subprocess.run([sys.executable, "-c", _PROBE, scenario], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    found: list[object] = json.loads(out.stdout.splitlines()[-1])
    return found


def test_pods_without_claims_in_a_cluster_without_dra_objects_never_load_the_machinery() -> None:
    assert probe("plain") == [False, False, ["a"]]  # "b" asks for an extended resource no node lists


def test_the_first_dra_object_loads_the_machinery() -> None:
    imported, made, _ = probe("class")
    assert imported and made


def test_the_manager_made_on_first_need_holds_what_the_stores_held() -> None:
    sim = simulate(node("n1"), gpu_slice("n1", 2), gpu_class(), claim("c"))
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    manager = plugin.manager
    assert set(manager.classes) == {"gpu"} and set(manager.slices) == {"n1-gpus"} and set(manager.claims) == {"default/c"}


def test_a_pod_with_claims_loads_the_machinery_which_answers_for_it() -> None:
    sim = simulate(node("n1"))
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    assert plugin.loaded is None
    status = plugin.pre_enqueue(parse_pod(pod("p", claims={"gpu": "c"})))
    assert plugin.loaded is not None
    assert status is not None and status.message == 'could not find ResourceClaim "default/c"'


def test_other_plugins_get_the_manager_of_dynamic_resources() -> None:
    sim = simulate(node("n1"))
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    assert registered_dra_manager(plugin.handle) is plugin.manager


def test_a_plugin_made_over_stores_that_hold_dra_objects_takes_each_object_once() -> None:
    sim = simulate(node("n1"), gpu_slice("n1", 2), gpu_class())
    first = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    second = DynamicResources(first.handle, first.features)  # its stores are full already
    assert second.loaded is not None
    assert second.manager.epoch == 2  # one class and one slice, each taken once
