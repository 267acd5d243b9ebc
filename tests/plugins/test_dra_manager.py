"""The DRA manager's bookkeeping outside scheduling cycles."""

from __future__ import annotations

from kubesched.plugins.dynamicresources.shared_manager import registered_dra_manager

from .dra_helpers import DRIVER, claim, gpu_class, gpu_slice, node, request, simulate


def test_a_device_class_selectors_are_compiled_when_the_class_arrives():
    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class("gpu"))  # no pod: no cycle, no allocation
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    assert f'device.driver == "{DRIVER}"' in plugin.cel_cache._entries


def test_claims_with_equal_specs_share_one_parsed_spec():
    two = request(count=2)
    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class("gpu"), claim("a"), claim("b"), claim("c", two))
    manager = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"].manager
    a, b, c = (manager.get_claim("default", n) for n in "abc")
    assert a.spec is b.spec
    assert c.spec is not a.spec and c.spec.requests[0].exactly.count == 2


def test_other_plugins_find_the_manager_dynamic_resources_made():
    sim = simulate(node("n1"), gpu_slice("n1", 1), gpu_class("gpu"))
    plugin = sim.scheduler.profiles["default-scheduler"].instances["DynamicResources"]
    assert registered_dra_manager(plugin.handle) is plugin.manager
