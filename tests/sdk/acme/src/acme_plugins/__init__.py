"""ACME's scheduling plugins, registered through one entry point as a list of specs."""

from kubesched.framework import AnyPluginSpec

from . import node_facts, quota, window

specs: list[AnyPluginSpec] = [window.spec, quota.spec, node_facts.spec]
