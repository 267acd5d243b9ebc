"""What ``kubesched run`` asks of the API server is what the deployed RBAC grants: every
informer it starts may list and watch, and DynamicResources' claim writes (with the
``resourceclaims/binding`` check v1.36 makes on allocation and reservation) are allowed.
A request the roles do not grant is a 403 on a real cluster: an informer that never
syncs (kubesched never becomes ready) or a PreBind that always fails."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest

from kubesched.cluster.kube.client import ApiClient
from kubesched.cluster.kube.cluster_client import KubeClusterClient
from kubesched.cluster.kube.connection import Connection
from kubesched.cluster.kube.driver import LiveScheduler
from kubesched.objects.pod import PodInfo, parse_pod
from kubesched.plugins.registry import in_tree_registry

from .test_manifests import VARIANTS, granted, scheduler_config

_PATH = re.compile(r"^/(?:api|apis/(?P<group>[^/]+))/v[^/]+(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)"
                   r"(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+))?)?$")
_VERBS = {"GET": "get", "PUT": "update", "PATCH": "patch", "POST": "create", "DELETE": "delete"}


def _attributes(method: str, path: str) -> tuple[str, str, str, str | None]:
    """The RBAC request attributes of a REST call: (group, resource[/subresource], verb, name)."""
    found = _PATH.match(path)
    assert found is not None, path
    resource = found["plural"] + (f"/{found['sub']}" if found["sub"] else "")
    return found["group"] or "", resource, _VERBS[method], found["name"]


def _allowed(variant: str, namespace: str, group: str, resource: str, verb: str, name: str | None) -> bool:
    return any(rule.allows(group, resource, verb, name) for rule in granted(variant, namespace))


class NoEvents:
    def pod_event(self, pod: PodInfo, event_type: str, reason: str, action: str, note: str) -> None:
        pass


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_informer_run_starts_may_list_and_watch_its_collection(variant: str) -> None:
    async def informer_paths() -> list[str]:
        api = ApiClient(Connection(server="http://127.0.0.1:9", ssl=None, token=lambda: "", basic_auth=None))
        live = LiveScheduler(scheduler_config(variant), api, NoEvents(), registry=in_tree_registry())
        live.build()
        paths = [informer.resource.path for informer in live.informers]
        await live.close(0.1)
        await api.close()
        return paths

    paths = asyncio.run(informer_paths())
    assert "/api/v1/pods" in paths
    for path in paths:
        group, resource, _, _ = _attributes("GET", path)
        for verb in ("list", "watch"):
            assert _allowed(variant, "", group, resource, verb, None), f"{variant}: {verb} {path}"


class Recorder:
    """Answers every request with the claim it was given (or a bare claim): the calls are what matter."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def request(self, method: str, path: str, *, params: dict[str, str] | None = None,
                      body: object | bytes | None = None, content_type: str = "application/json",
                      timeout: float | None = None) -> dict[str, object]:
        self.calls.append((method, path))
        if isinstance(body, dict) and "metadata" in body and method != "PATCH":
            return dict(body)
        return {"metadata": {"name": "c", "namespace": "default", "uid": "u"}}


def _claim() -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "c", "namespace": "default", "uid": "u"}, "spec": {"devices": {"requests": []}}}


def _dra_calls() -> list[tuple[str, str]]:
    """Every request kind DynamicResources' writes make in ``run``."""
    async def scenario() -> list[tuple[str, str]]:
        api = Recorder()
        client = KubeClusterClient(api, asyncio.get_running_loop(), NoEvents())
        client.start()
        pod = parse_pod({"metadata": {"name": "p", "namespace": "default", "uid": "up"}, "spec": {"containers": []}})
        allocation = {"devices": {"results": []}}
        await client.bind_resource_claim_async(_claim(), allocation, {"resource": "pods", "name": "p", "uid": "up"})
        await client.create_resource_claim_async({**_claim(), "metadata": {"namespace": "default",
                                                                           "generateName": "p-extended-resources-"}})
        await client.patch_pod_extended_resource_claim_status_async(pod, {"resourceClaimName": "c"})
        await client.delete_resource_claim_async(_claim())
        await client.unreserve_resource_claim_async(_claim(), "up")
        await client.deallocate_resource_claim_async(_claim())
        await client.stop()
        return api.calls

    return asyncio.run(scenario())


@pytest.mark.parametrize("variant", VARIANTS)
def test_dynamic_resources_claim_writes_are_granted(variant: str) -> None:
    calls = _dra_calls()
    assert {m for m, _ in calls} == {"PUT", "POST", "PATCH", "DELETE"}
    for method, path in calls:
        group, resource, verb, name = _attributes(method, path)
        assert _allowed(variant, "default", group, resource, verb, name), f"{variant}: {method} {path}"
        if resource == "resourceclaims/status":  # allocation and reservedFor: the binding check too
            assert _allowed(variant, "default", group, "resourceclaims/binding", verb, name), \
                f"{variant}: {verb} resourceclaims/binding"


@pytest.mark.parametrize("variant", VARIANTS)
def test_resource_claim_templates_are_not_granted_so_run_must_not_watch_them(variant: str) -> None:
    """Upstream's scheduler never reads templates (the resourceclaim controller does), and
    system:kube-scheduler grants nothing on them."""
    assert not _allowed(variant, "", "resource.k8s.io", "resourceclaimtemplates", "list", None)
