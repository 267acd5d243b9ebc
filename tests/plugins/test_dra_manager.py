"""The DRA manager's bookkeeping outside scheduling cycles."""

from __future__ import annotations

from .dra_helpers import DRIVER, gpu_class, gpu_slice, node, simulate


def test_a_device_class_selectors_are_compiled_when_the_class_arrives():
    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class("gpu"))  # no pod: no cycle, no allocation
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    assert f'device.driver == "{DRIVER}"' in plugin.cel_cache._entries
