"""Annotations as plugins read them: a read-only map, compact and shared, without kubectl's
copy of the object."""

from __future__ import annotations

import pytest

from kubesched.objects.annotations import LAST_APPLIED, NO_ANNOTATIONS, parse_annotations
from kubesched.objects.errors import ObjectError
from kubesched.objects.node import parse_node
from kubesched.objects.pod import parse_pod


def test_annotations_read_as_a_mapping():
    found = parse_annotations({"acme.io/window": "open", "team": "a"})
    assert found["acme.io/window"] == "open" and found.get("missing") is None and found.get("missing", "x") == "x"
    assert "team" in found and "nope" not in found
    assert dict(found) == {"acme.io/window": "open", "team": "a"} and len(found) == 2
    assert found == {"team": "a", "acme.io/window": "open"}  # equal to a dict of the same items, in any order
    with pytest.raises(KeyError):
        found["missing"]


def test_equal_annotations_are_one_object_and_none_is_the_shared_empty_map():
    assert parse_annotations({"a": "1", "b": "2"}) is parse_annotations({"a": "1", "b": "2"})
    assert parse_annotations(None) is NO_ANNOTATIONS and parse_annotations({}) is NO_ANNOTATIONS


def test_objects_with_the_same_keys_share_the_keys():
    one, two = parse_annotations({"cni/ip": "10.0.0.1"}), parse_annotations({"cni/ip": "10.0.0.2"})
    assert one._keys is two._keys and one != two


def test_kubectls_last_applied_configuration_is_left_out():
    found = parse_annotations({LAST_APPLIED: '{"kind": "Pod"}', "a": "1"})
    assert dict(found) == {"a": "1"}
    assert parse_annotations({LAST_APPLIED: "{}"}) is NO_ANNOTATIONS


@pytest.mark.parametrize("raw", [["a"], {"a": 1}, "a=1"])
def test_annotations_that_are_not_a_map_of_strings_are_an_error(raw: object):
    with pytest.raises(ObjectError) as err:
        parse_annotations(raw)
    assert err.value.field == "metadata.annotations"


def test_nodes_and_pods_carry_them_bound_or_pending():
    node = parse_node({"metadata": {"name": "n", "annotations": {"acme.io/window": "closed"}}})
    pending = parse_pod({"metadata": {"name": "p", "annotations": {"acme.io/approval": "pending"}}, "spec": {}})
    bound = parse_pod({"metadata": {"name": "b", "annotations": {"acme.io/approval": "pending"}},
                       "spec": {"nodeName": "n"}}, keep_raw=False)
    assert node.annotations["acme.io/window"] == "closed"
    assert pending.annotations is bound.annotations
