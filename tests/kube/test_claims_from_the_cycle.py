"""PostFilter's claim writes in run: made from the scheduling cycle (the event loop), waited
for there as upstream's PostFilter waits for its UpdateStatus and deleteClaim, and refusals
raised with the API server's message."""

from __future__ import annotations

import random

import pytest

from kubesched.cluster.kube.claims import ClaimWriteError
from kubesched.cluster.kube.cluster_client import KubeClusterClient
from kubesched.plugins.dynamicresources.post_filter import RandomChoices
from tests.apiserver import APIServer
from tests.kube.test_claims import _allocation, _claim, _consumer, server, with_client  # noqa: F401 (fixture)


def _allocated(server: APIServer) -> dict[str, object]:
    stored = server.create(_claim())
    stored["status"] = {"allocation": _allocation(), "reservedFor": [_consumer()]}
    return server.update(stored)


def test_deallocation_from_the_event_loop_is_stored_when_the_call_returns(server: APIServer) -> None:
    stored = _allocated(server)

    async def deallocate(client: KubeClusterClient) -> dict[str, object] | None:
        client.deallocate_resource_claim(stored)
        return server.get("ResourceClaim", "default", "c")  # before any other loop turn

    claim = with_client(server, deallocate)
    assert claim is not None and claim["status"] == {}


def test_a_deallocation_of_a_claim_changed_meanwhile_raises_the_conflict(server: APIServer) -> None:
    stale = _allocated(server)
    server.update({**stale, "metadata": {**stale["metadata"], "labels": {"changed": "yes"}}})

    async def deallocate(client: KubeClusterClient) -> None:
        client.deallocate_resource_claim(stale)

    with pytest.raises(ClaimWriteError) as failure:
        with_client(server, deallocate)
    assert str(failure.value).startswith('Operation cannot be fulfilled on resourceclaims.resource.k8s.io "c": '
                                         "the object has been modified")


def test_deleting_a_claim_from_the_event_loop_is_done_when_the_call_returns(server: APIServer) -> None:
    stored = server.create(_claim())

    async def delete(client: KubeClusterClient) -> dict[str, object] | None:
        client.delete_resource_claim(stored)
        return server.get("ResourceClaim", "default", "c")

    assert with_client(server, delete) is None


def test_the_kube_cluster_client_makes_upstreams_random_choices_at_random(server: APIServer) -> None:
    async def check(client: KubeClusterClient) -> bool:
        return isinstance(client, RandomChoices) and isinstance(client.random_choices(), random.Random)

    assert with_client(server, check)
