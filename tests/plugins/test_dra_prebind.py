"""DynamicResources' PreBind in ``simulate``: what it writes, and that each write is read once."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kubesched.framework.features import Features
from kubesched.objects.dra import claim as claim_module, parse_resource_claim
from kubesched.objects.dra.meta import ObjectMeta, parse_meta
from kubesched.objects.pod import parse_pod
from kubesched.plugins.dynamicresources.binding_conditions import pre_bind_wait

from .dra_helpers import API, gpu_class, gpu_slice, node, pod, simulate, stored_claim


def test_a_created_claim_gets_its_name_and_the_sent_document_stays_as_sent():
    sim = simulate(node("n1"))
    sent = {"apiVersion": API, "kind": "ResourceClaim",
            "metadata": {"namespace": "default", "generateName": "p-extended-resources-"},
            "spec": {"devices": {"requests": []}}, "status": {"reservedFor": []}}
    created = sim.cluster.create_resource_claim(sent)
    assert created["metadata"]["name"].startswith("p-extended-resources-") and created["metadata"]["uid"]
    assert "status" not in created
    assert sent["metadata"] == {"namespace": "default", "generateName": "p-extended-resources-"}
    assert "status" in sent
    assert stored_claim(sim, created["metadata"]["name"]) == created


def test_each_claim_write_of_an_extended_resource_pod_is_parsed_once(monkeypatch: pytest.MonkeyPatch):
    parsed: list[str] = []

    def counting(raw: object, namespaced: bool, allow_generate_name: bool = False) -> ObjectMeta:
        meta = parse_meta(raw, namespaced, allow_generate_name)
        parsed.append(meta.name)
        return meta

    monkeypatch.setattr(claim_module, "parse_meta", counting)  # every claim parse reads its metadata
    sim = simulate(node("n1"), gpu_slice("n1", 2), gpu_class("gpu", extended="example.com/gpu"),
                   pod("p", requests={"example.com/gpu": "1"}))
    assert sim.outcomes["default/p"].node == "n1"
    name = str(sim.cluster.extended_claim_statuses["default/p"]["resourceClaimName"])
    assert parsed.count(name) == 2  # the create, then the status write (finalizer, allocation, reservedFor)


class _Client:
    """A cluster client whose drivers report binding conditions; counts the questions it gets."""

    def __init__(self) -> None:
        self.asked = 0

    def binding_conditions_reported(self) -> bool:
        self.asked += 1
        return True

    def wait_while_running(self, seconds: float) -> bool:
        return True

    def observe_binding_conditions(self, profile: str, status: str, seconds: float, waited: list[str],
                                   counted: list[str]) -> None:
        pass


def test_a_pod_without_binding_conditions_does_not_wait_or_ask_the_client():
    client = _Client()
    handle = SimpleNamespace(client=client, event_recorder=None, profile_name="default-scheduler")
    claim = parse_resource_claim({"metadata": {"name": "c", "namespace": "default"},
                                  "spec": {"devices": {"requests": []}}})
    status = pre_bind_wait(handle, None, Features(), [claim], parse_pod(pod("p")), "n1")  # type: ignore[arg-type]
    assert status is None
    assert client.asked == 0
