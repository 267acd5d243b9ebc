"""The resource table: which (group, version, plural) the server serves and how.

kube-apiserver registers a REST storage per resource; here one generic storage
serves them all, and this table carries the per-resource facts that upstream
keeps in each registry's strategy (namespaced, status subresource, generation,
create-on-update, field labels).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Resource:
    """One served resource type and the strategy facts the handlers need."""

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    has_status: bool = False
    tracks_generation: bool = False
    create_on_update: bool = False
    unconditional_update: bool = True
    extra_fields: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``pods`` or ``leases.coordination.k8s.io``, as upstream's errors name a resource."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def field_labels(self) -> tuple[str, ...]:
        return ("metadata.name", "metadata.namespace", *self.extra_fields)


# Field labels each registry's conversion accepts (pkg/apis/core/v1/conversion.go
# and the strategies' GetAttrs); pods carry the ones a scheduler filters on.
_POD_FIELDS = (
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
)
_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)

RESOURCES: tuple[Resource, ...] = (
    Resource("", "v1", "pods", "Pod", True, True, True, extra_fields=_POD_FIELDS),
    Resource("", "v1", "nodes", "Node", False, True, extra_fields=("spec.unschedulable",)),
    Resource("", "v1", "namespaces", "Namespace", False, True, extra_fields=("status.phase",)),
    Resource("", "v1", "services", "Service", True, True),
    Resource("", "v1", "replicationcontrollers", "ReplicationController", True, True, True,
             extra_fields=("status.replicas",)),
    Resource("", "v1", "persistentvolumes", "PersistentVolume", False, True),
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, True),
    Resource("", "v1", "events", "Event", True, create_on_update=True, extra_fields=_EVENT_FIELDS),
    Resource("", "v1", "configmaps", "ConfigMap", True),
    Resource("apps", "v1", "replicasets", "ReplicaSet", True, True, True, extra_fields=("status.replicas",)),
    Resource("apps", "v1", "statefulsets", "StatefulSet", True, True, True),
    Resource("apps", "v1", "deployments", "Deployment", True, True, True),
    Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False),
    # scheduling.k8s.io/v1alpha2 (GenericWorkload); their strategies' rules are in workload_resources.py.
    Resource("scheduling.k8s.io", "v1alpha2", "podgroups", "PodGroup", True, True),
    Resource("scheduling.k8s.io", "v1alpha2", "workloads", "Workload", True),
    Resource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, True, True),
    Resource("coordination.k8s.io", "v1", "leases", "Lease", True, create_on_update=True,
             unconditional_update=False),
    Resource("events.k8s.io", "v1", "events", "Event", True, create_on_update=True),
    Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False),
    Resource("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    Resource("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    Resource("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True),
    # resource.k8s.io/v1 (DRA); their strategies' rules are in dra_resources.py.
    Resource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False, tracks_generation=True),
    Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, True),
    Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True),
    Resource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False, tracks_generation=True,
             extra_fields=("spec.nodeName", "spec.driver")),
)

BY_PATH: dict[tuple[str, str, str], Resource] = {(r.group, r.version, r.plural): r for r in RESOURCES}
BY_KIND: dict[tuple[str, str], Resource] = {(r.api_version, r.kind): r for r in RESOURCES}
# Python-API lookups by bare kind: core wins for Event (the scheduler's own
# recorder writes events.k8s.io; tests that mean that one pass the apiVersion).
_BARE: dict[str, Resource] = {}
for _r in RESOURCES:
    _BARE.setdefault(_r.kind, _r)


def resource_for(kind: str, api_version: str | None = None) -> Resource:
    """The resource an object's ``kind`` (and optional ``apiVersion``) names."""
    if api_version is not None:
        found = BY_KIND.get((api_version, kind))
        if found is not None:
            return found
    found = _BARE.get(kind)
    if found is None:
        raise KeyError(f"unknown kind {kind!r}")
    return found


def object_key(resource: Resource, namespace: str | None, name: str) -> str:
    """The storage key under the resource's prefix, sorted as etcd sorts keys."""
    return f"{namespace}/{name}" if resource.namespaced else name
