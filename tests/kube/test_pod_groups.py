"""The PodGroup informer's handlers and the startup check that PodGroups are served at all."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.handlers import PodGroupEvents
from kubesched.cluster.kube.informer import DeletedFinalStateUnknown
from kubesched.cluster.kube.pod_groups import POD_GROUPS, parse_live_pod_group, pod_group_api_problem
from kubesched.objects.podgroup import parse_pod_group
from tests.apiserver import APIServer
from tests.kube.test_handlers import Scheduler

GROUP = parse_pod_group({"metadata": {"name": "train", "namespace": "ml", "uid": "u"},
                         "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}}})


@pytest.mark.parametrize(("change", "label", "call"), [
    (lambda h: h.on_add(GROUP, True), "PodGroupAdd", "on_pod_group_add"),
    (lambda h: h.on_update(GROUP, GROUP), "PodGroupUpdate", "on_pod_group_update"),
    (lambda h: h.on_delete(GROUP), "PodGroupDelete", "on_pod_group_delete"),
    (lambda h: h.on_delete(DeletedFinalStateUnknown("ml/train", GROUP)), "PodGroupDelete", "on_pod_group_delete"),
])
def test_pod_group_changes_reach_the_scheduler_under_upstreams_event_label(change: Any, label: str,
                                                                             call: str) -> None:
    scheduler, woken = Scheduler(), []
    change(PodGroupEvents(scheduler, lambda: woken.append(1), scheduler.metrics))  # type: ignore[arg-type]
    assert [name for name, _ in scheduler.calls] == [call]
    assert all(arg is GROUP for _, args in scheduler.calls for arg in args)  # tombstones unwrapped
    assert scheduler.metrics.labels == [label]
    assert woken == [1]


def test_a_failing_handler_is_logged_with_the_groups_key(caplog: pytest.LogCaptureFixture) -> None:
    scheduler = Scheduler(fail=True)
    PodGroupEvents(scheduler, lambda: None).on_add(GROUP, False)  # type: ignore[arg-type]
    assert "handling add of PodGroup ml/train failed" in caplog.text


def test_the_informer_watches_pod_groups_of_every_namespace_and_drops_their_documents() -> None:
    assert POD_GROUPS.path == "/apis/scheduling.k8s.io/v1alpha2/podgroups"
    group = parse_live_pod_group({"metadata": {"name": "g", "namespace": "ml"},
                                  "spec": {"schedulingPolicy": {"basic": {}}}})
    assert group.key == "ml/g" and group.raw is None and group.min_count is None


def problem(server: APIServer, timeout: float = 5.0) -> str | None:
    async def check() -> str | None:
        async with ApiClient(Connection(server=server.url, ssl=None, token=lambda: "", basic_auth=None)) as api:
            return await pod_group_api_problem(api, server.url, timeout)
    return asyncio.run(check())


def test_a_server_that_serves_pod_groups_passes() -> None:
    with APIServer() as server:
        assert problem(server) is None


def test_a_server_without_the_alpha_api_is_named_in_one_line() -> None:
    with APIServer(feature_gates=frozenset()) as server:
        said = problem(server)
    assert said is not None and "\n" not in said
    assert said.startswith(f"GenericWorkload is on but the API server at {server.url} does not serve "
                           "scheduling.k8s.io/v1alpha2 podgroups (404)")
    assert "--runtime-config=scheduling.k8s.io/v1alpha2=true" in said


def test_a_role_without_pod_groups_is_an_rbac_problem() -> None:
    with APIServer() as server:
        server.faults.add(method="GET", path="/podgroups$", status=403, times=None,
                          message='podgroups.scheduling.k8s.io is forbidden: User "x" cannot list resource')
        said = problem(server)
    assert said is not None and said.startswith("forbidden by the API server's RBAC: podgroups.scheduling.k8s.io")


def test_a_server_still_starting_is_waited_for() -> None:
    with APIServer() as server:
        server.faults.add(method="GET", path="/podgroups$", status=503, times=2)
        assert problem(server) is None
        assert sum(1 for m, p in server.requests if "/podgroups" in p) == 3
