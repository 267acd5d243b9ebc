"""The pod specs ``capacity`` makes replicas of: a Pod, or a workload's pod template.

A workload's replicas are made as its controller makes them: the template's labels
(StatefulSet and Job pods get the labels their controllers add), the workload's
namespace, and an owner reference to the controller that owns them (a Deployment's
pods belong to a ReplicaSet with the Deployment's selector), so that spreading and
(anti-)affinity count the new replicas and the workload's existing pods as siblings.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..cluster.yaml_documents import YAMLError
from ..objects.errors import ObjectError
from ..objects.pod import PodInfo, parse_pod
from .inputs import PlanningError, parse_documents

__all__ = ["PodTemplate", "read_templates", "read_objects", "template_of", "TEMPLATE_KINDS"]

JSONObject = dict[str, Any]

# kind -> where its pod template is
TEMPLATE_KINDS: dict[str, tuple[str, ...]] = {
    "Deployment": ("spec", "template"),
    "ReplicaSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"),
    "ReplicationController": ("spec", "template"),
    "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}
# Controllers whose selectors default spreading reads: the object is added to the simulation.
_SPREADING_CONTROLLERS = {"ReplicaSet": "apps/v1", "StatefulSet": "apps/v1", "ReplicationController": "v1"}
# Pod fields a copy of an existing pod must not keep: it is a new, pending pod.
_POD_META_DROPPED = ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                     "deletionGracePeriodSeconds", "generateName", "managedFields", "selfLink")
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"
JOB_NAME_LABELS = ("batch.kubernetes.io/job-name", "job-name")


@dataclass(frozen=True, slots=True)
class PodTemplate:
    """One spec to count replicas of."""

    name: str  # replicas are named <name>-<n>
    kind: str  # Pod, Deployment, ...
    namespace: str
    source: str  # the file it came from
    pod: JSONObject  # the Pod document every replica copies
    parsed: PodInfo  # ``pod`` compiled once; replicas are copies with their own name, uid and labels
    controller: JSONObject | None  # an object default spreading reads, to add to the simulation

    @property
    def title(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    def labels_for(self, replica_name: str, index: int) -> dict[str, str]:
        """The labels of replica ``index``: the template's, plus those its controller adds per pod."""
        if self.kind != "StatefulSet":
            return self.parsed.labels
        return {**self.parsed.labels, STATEFULSET_POD_NAME: replica_name, POD_INDEX: str(index)}


def read_templates(paths: list[str] | tuple[str, ...]) -> list[PodTemplate]:
    """Every Pod or workload in ``paths`` (YAML or JSON, one or many documents, Lists too), in order."""
    templates: list[PodTemplate] = []
    problems: list[str] = []
    for path in paths:
        found, before = 0, len(problems)
        for obj in _objects(path, problems):
            found += 1
            try:
                templates.append(_template(obj, path))
            except PlanningError as err:
                problems.extend(err.lines)
        if not found and len(problems) == before:
            problems.append(f"{path}: holds no Pod or workload")
    if problems:
        raise PlanningError(problems)
    return templates


def read_objects(path: str, problems: list[str]) -> list[Mapping[str, Any]]:
    """Every object in ``path`` (Lists unpacked); what cannot be read is added to ``problems``."""
    return list(_objects(path, problems))


def template_of(obj: Mapping[str, Any], path: str) -> PodTemplate:
    """The spec of a Pod or a workload's pod template; ``PlanningError`` when it has none."""
    return _template(obj, path)


def _objects(path: str, problems: list[str]) -> Iterator[Mapping[str, Any]]:
    try:
        text = Path(path).read_bytes()
    except OSError as err:
        problems.append(f"{path}: {err.strerror or err}")
        return
    try:
        docs = parse_documents(text)
    except YAMLError as err:
        problems.append(f"{path}: {err}")
        return
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, Mapping):
            problems.append(f"{path}: a document must be a Kubernetes object")
            continue
        if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
            for item in doc["items"]:
                if isinstance(item, Mapping):
                    yield item
                else:
                    problems.append(f"{path}: {doc.get('kind')} items must be objects")
        else:
            yield doc


def _describe(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    name = meta.get("name", "<unnamed>") if isinstance(meta, Mapping) else "<unnamed>"
    return f"{obj.get('kind', 'object')} {name}"


def _template(obj: Mapping[str, Any], path: str) -> PodTemplate:
    kind = obj.get("kind")
    where = f"{path}: {_describe(obj)}"
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str) or not meta["name"]:
        raise PlanningError([f"{where}: metadata.name is required"])
    name = str(meta["name"])
    namespace = str(meta.get("namespace") or "default")
    if kind == "Pod":
        pod = _pod_copy(obj)
        controller = None
        prefix = ""
    elif isinstance(kind, str) and kind in TEMPLATE_KINDS:
        pod, controller = _workload_pod(obj, kind, name, namespace, where)
        prefix = ".".join(TEMPLATE_KINDS[kind]) + "."
    elif kind == "DaemonSet":
        raise PlanningError([f"{where}: a DaemonSet runs one pod per node; give its pod template as a Pod to count how many fit"])
    else:
        kinds = ", ".join(("Pod", *TEMPLATE_KINDS))
        raise PlanningError([f"{where}: kind {kind!r} has no pod template (want one of {kinds})"])
    try:
        parsed = parse_pod(pod)
    except ObjectError as err:  # named as the user wrote it: spec.template.spec.containers[0]...
        raise PlanningError([f"{where}: {prefix}{err.field}: {err.message}"]) from None
    return PodTemplate(name, str(kind), namespace, path, pod, parsed, controller)


def _pod_copy(obj: Mapping[str, Any]) -> JSONObject:
    """A Pod as a new, pending copy: no node, no status, no identity of its own."""
    meta = {k: v for k, v in dict(obj.get("metadata") or {}).items() if k not in _POD_META_DROPPED}
    spec = {k: v for k, v in dict(obj.get("spec") or {}).items() if k != "nodeName"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _at(obj: Mapping[str, Any], path: tuple[str, ...]) -> object:
    value: object = obj
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _workload_pod(obj: Mapping[str, Any], kind: str, name: str, namespace: str,
                  where: str) -> tuple[JSONObject, JSONObject | None]:
    """The pod a workload's controller would create, and the controller object default spreading reads."""
    location = TEMPLATE_KINDS[kind]
    template = _at(obj, location)
    if not isinstance(template, Mapping) or not isinstance(template.get("spec"), Mapping):
        raise PlanningError([f"{where}: {'.'.join(location)}.spec is required"])
    raw_meta = template.get("metadata")
    template_meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    labels = template_meta.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise PlanningError([f"{where}: {'.'.join(location)}.metadata.labels must be a map of strings"])
    labels = dict(labels)
    if kind == "Job":
        for key in JOB_NAME_LABELS:
            labels.setdefault(key, name)
    meta: JSONObject = {"name": name, "namespace": namespace, "labels": labels}
    if isinstance(template_meta.get("annotations"), Mapping):
        meta["annotations"] = dict(template_meta["annotations"])
    controller: JSONObject | None = None
    owner_kind, owner_version, owner_name = kind, "apps/v1", name
    if kind in _SPREADING_CONTROLLERS:
        owner_version = _SPREADING_CONTROLLERS[kind]
        controller = {**obj, "metadata": {**dict(obj.get("metadata") or {}), "namespace": namespace}}
    elif kind == "Deployment":
        owner_kind, owner_name = "ReplicaSet", name
        controller = {
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": owner_name, "namespace": namespace, "labels": labels},
            "spec": {"selector": _at(obj, ("spec", "selector")), "template": dict(template)},
        }
    else:  # Job, CronJob: their controllers are not read by default spreading
        owner_kind, owner_version = "Job", "batch/v1"
    meta["ownerReferences"] = [{"apiVersion": owner_version, "kind": owner_kind, "name": owner_name,
                                "uid": f"capacity-{owner_kind}-{namespace}-{owner_name}", "controller": True}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(template["spec"])}, controller
