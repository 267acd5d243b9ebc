"""Every in-tree Filter plugin offers the per-node form ``filter(state, pod, node_info)``:
preemption's dry run and nodes with nominated pods filter what-if copies of a node through
it, and the framework's error for a plugin without it ('has no per-node form: preemption
cannot evaluate it') must be unreachable with in-tree plugins, whatever the feature gates."""

from __future__ import annotations

import pytest

from kubesched.framework import BatchFilterPlugin, FilterPlugin
from kubesched.framework.features import DEFAULT_FEATURES, MODELLED_GATES, Features
from kubesched.plugins.registry import in_tree_registry
from kubesched.testing import random_clusters

HANDLE = random_clusters(1, seed=3)[0].handle
GATES = {
    "default gates": DEFAULT_FEATURES,
    "every modelled gate on": Features.from_gates({gate: True for gate in MODELLED_GATES}),
}


def filter_plugins(features: Features) -> list[tuple[str, object]]:
    registry = in_tree_registry(features)
    built = [(name, registry.get(name)) for name in registry.names()]
    plugins = [(name, spec.build(spec.decode(None), HANDLE)) for name, spec in built if spec is not None]
    return [(name, p) for name, p in plugins if isinstance(p, (FilterPlugin, BatchFilterPlugin))]


@pytest.mark.parametrize("gates", GATES, ids=list(GATES))
def test_every_in_tree_filter_plugin_has_the_per_node_form(gates: str) -> None:
    found = filter_plugins(GATES[gates])
    assert len(found) >= 12, [name for name, _ in found]  # the registry was read, not empty
    lacking = sorted(name for name, plugin in found if getattr(plugin, "filter", None) is None)
    assert lacking == []


def test_the_storage_filters_are_among_those_checked() -> None:
    names = {name for name, _ in filter_plugins(DEFAULT_FEATURES)}
    assert {"NodeVolumeLimits", "VolumeBinding", "VolumeRestrictions", "VolumeZone"} <= names
