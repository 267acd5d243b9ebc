"""Version, health and discovery documents, enough for a client that asks."""

from __future__ import annotations

from collections.abc import Callable

from tests.apiserver.resources import RESOURCES, Resource

JSONDict = dict[str, object]
Served = Callable[[Resource], bool]


def _everything(resource: Resource) -> bool:
    return True

VERSION: JSONDict = {
    "major": "1",
    "minor": "36",
    "emulationMajor": "1",
    "emulationMinor": "36",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "35",
    "gitVersion": "v1.36.0",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.25.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}

_SUBRESOURCES = {"pods": ("binding", "status"), "nodes": ("status",)}


def _entries(resource: Resource) -> list[JSONDict]:
    verbs = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
    out: list[JSONDict] = [{"name": resource.plural, "singularName": resource.kind.lower(),
                            "namespaced": resource.namespaced, "kind": resource.kind, "verbs": verbs}]
    subs = _SUBRESOURCES.get(resource.plural, ("status",) if resource.has_status else ())
    for sub in subs:
        if sub == "binding":
            out.append({"name": "pods/binding", "singularName": "", "namespaced": True, "kind": "Binding",
                        "verbs": ["create"]})
        else:
            out.append({"name": f"{resource.plural}/status", "singularName": "", "namespaced": resource.namespaced,
                        "kind": resource.kind, "verbs": ["get", "patch", "update"]})
    return out


def resource_list(group: str, version: str, served: Served = _everything) -> JSONDict | None:
    """APIResourceList for one group version (None when not served)."""
    chosen = [r for r in RESOURCES if r.group == group and r.version == version and served(r)]
    if not chosen:
        return None
    gv = f"{group}/{version}" if group else version
    resources: list[JSONDict] = []
    for resource in chosen:
        resources.extend(_entries(resource))
    if not group:
        resources.append({"name": "bindings", "singularName": "binding", "namespaced": True, "kind": "Binding",
                          "verbs": ["create"]})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


def core_versions(address: str) -> JSONDict:
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}]}


def _group(name: str, served: Served) -> JSONDict:
    # Sorted, v1 before v1alpha2: the order of kube-apiserver's version priorities where several are served.
    versions = sorted({r.version for r in RESOURCES if r.group == name and served(r)})
    entries = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": entries, "preferredVersion": entries[0]}


def group(name: str, served: Served = _everything) -> JSONDict | None:
    if not any(r.group == name and served(r) for r in RESOURCES) or not name:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name, served)}


def group_list(served: Served = _everything) -> JSONDict:
    names: list[str] = []
    for resource in RESOURCES:
        if resource.group and resource.group not in names and served(resource):
            names.append(resource.group)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group(n, served) for n in names]}
