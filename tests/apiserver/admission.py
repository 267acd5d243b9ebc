"""What kube-apiserver does to a pod before storing it, and the binding subresource.

Create: the defaulting and admission a scheduler depends on (schedulerName,
priority from its PriorityClass, the DefaultTolerationSeconds tolerations, the
initial Pending status with its QoS class). Binding: BindingREST's
setPodNodeAndMetadata: only an unassigned, ungated, not-deleting pod can be
bound; the binding's UID/resourceVersion are preconditions on the pod.
"""

from __future__ import annotations

from collections.abc import Mapping

from tests.apiserver import errors
from tests.apiserver.resources import BY_PATH, Resource
from tests.apiserver.storage import JSONDict, Preconditions, Store, meta, now_rfc3339
from tests.apiserver.workload_resources import admit_pod_scheduling_group

PODS = BY_PATH[("", "v1", "pods")]
PRIORITY_CLASSES = BY_PATH[("scheduling.k8s.io", "v1", "priorityclasses")]

_DEFAULT_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
)


def _containers(spec: Mapping[str, object]) -> list[Mapping[str, object]]:
    out: list[Mapping[str, object]] = []
    for field in ("initContainers", "containers"):
        value = spec.get(field)
        if isinstance(value, list):
            out.extend(c for c in value if isinstance(c, Mapping))
    return out


def qos_class(spec: Mapping[str, object]) -> str:
    """Guaranteed, Burstable or BestEffort, as pkg/apis/core/helper/qos computes it (cpu and memory)."""
    requests: dict[str, str] = {}
    limits: dict[str, str] = {}
    guaranteed = True
    for container in _containers(spec):
        resources = container.get("resources")
        res = resources if isinstance(resources, Mapping) else {}
        req = res.get("requests") if isinstance(res.get("requests"), Mapping) else {}
        lim = res.get("limits") if isinstance(res.get("limits"), Mapping) else {}
        assert isinstance(req, Mapping) and isinstance(lim, Mapping)
        for name in ("cpu", "memory"):
            if name in req:
                requests[name] = str(req[name])
            if name in lim:
                limits[name] = str(lim[name])
            else:
                guaranteed = False
            if name in req and name in lim and str(req[name]) != str(lim[name]):
                guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _pull_policy(image: str) -> str:
    """Always for an untagged or ``:latest`` image without a digest, IfNotPresent otherwise."""
    if "@" in image:
        return "IfNotPresent"
    tail = image.rsplit("/", 1)[-1]
    return "Always" if ":" not in tail or tail.endswith(":latest") else "IfNotPresent"


def admit_pod(store: Store, pod: JSONDict, keep_status: bool) -> None:
    """Defaults and admission for a new pod; PriorityClass lookup reads the store."""
    spec = pod.setdefault("spec", {})
    assert isinstance(spec, dict)
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("securityContext", {})
    for container in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        if isinstance(container, dict):  # SetDefaults_Container, as the real server returns them
            container.setdefault("terminationMessagePath", "/dev/termination-log")
            container.setdefault("terminationMessagePolicy", "File")
            container.setdefault("imagePullPolicy", _pull_policy(str(container.get("image") or "")))
    name = spec.get("priorityClassName")
    if name:
        pc = store.get(PRIORITY_CLASSES, str(name))
        if pc is None:
            raise errors.StatusError(403, "Forbidden", f'pods "{meta(pod).get("name", "")}" is forbidden: no '
                                     f"PriorityClass with name {name} was found",
                                     {"name": meta(pod).get("name", ""), "kind": "pods"})
        spec["priority"] = pc.get("value", 0)
        spec.setdefault("preemptionPolicy", pc.get("preemptionPolicy", "PreemptLowerPriority"))
    else:
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = spec.get("tolerations")
    tols = list(tolerations) if isinstance(tolerations, list) else []
    for default in _DEFAULT_TOLERATIONS:
        if not any(isinstance(t, Mapping) and t.get("key") == default["key"] and t.get("effect") in (None, "", "NoExecute")
                   for t in tols):
            tols.append(dict(default))
    spec["tolerations"] = tols
    admit_pod_scheduling_group(store.feature_gates, pod)
    if not keep_status or not isinstance(pod.get("status"), dict):
        pod["status"] = {"phase": "Pending", "qosClass": qos_class(spec)}


def update_condition(status: JSONDict, condition: JSONDict) -> None:
    """podutil.UpdatePodCondition: replace by type, keeping lastTransitionTime when status is unchanged."""
    conditions = status.get("conditions")
    items = list(conditions) if isinstance(conditions, list) else []
    new = {**condition, "lastProbeTime": None, "lastTransitionTime": now_rfc3339()}
    for index, old in enumerate(items):
        if isinstance(old, dict) and old.get("type") == condition["type"]:
            if old.get("status") == condition.get("status"):
                new["lastTransitionTime"] = old.get("lastTransitionTime")
            items[index] = new
            break
    else:
        items.append(new)
    status["conditions"] = items


def bind(store: Store, namespace: str, name: str, binding: Mapping[str, object]) -> None:
    """Create on pods/binding: assign the pod to ``target.name`` or raise upstream's error."""
    md = binding.get("metadata")
    bmeta = md if isinstance(md, Mapping) else {}
    target = binding.get("target")
    tgt = target if isinstance(target, Mapping) else {}
    if bmeta.get("name") not in (None, "", name):
        raise errors.bad_request("name in URL does not match name in Binding object")
    if tgt.get("kind") not in (None, "", "Node"):
        raise errors.invalid("", "Binding", name, [
            ("FieldValueNotSupported", "target.kind", f'Unsupported value: "{tgt.get("kind")}": supported values: "Node", ""')])
    node = str(tgt.get("name") or "")
    if not node:
        raise errors.invalid("", "Binding", name, [("FieldValueRequired", "target.name", "Required value")])
    uid = bmeta.get("uid")
    rv = bmeta.get("resourceVersion")
    pre = Preconditions(str(uid) if uid else None, str(rv) if rv else None)
    annotations = bmeta.get("annotations")
    labels = bmeta.get("labels")

    def assign(pod: JSONDict) -> JSONDict:
        pmeta = meta(pod)
        spec = pod.setdefault("spec", {})
        assert isinstance(spec, dict)
        why = None
        if pmeta.get("deletionTimestamp"):
            why = f"pod {name} is being deleted, cannot be assigned to a host"
        elif spec.get("nodeName"):
            why = f'pod {name} is already assigned to node "{spec["nodeName"]}"'
        elif spec.get("schedulingGates"):
            why = f"pod {name} has non-empty .spec.schedulingGates"
        if why is not None:
            raise errors.conflict(PODS, name, why, qualified="pods/binding")
        spec["nodeName"] = node
        if isinstance(annotations, Mapping) and annotations:
            pmeta["annotations"] = {**(pmeta.get("annotations") or {}), **annotations}  # type: ignore[dict-item]
        if isinstance(labels, Mapping) and labels:
            pmeta["labels"] = {**(pmeta.get("labels") or {}), **labels}  # type: ignore[dict-item]
        status = pod.setdefault("status", {})
        assert isinstance(status, dict)
        status.pop("nominatedNodeName", None)
        update_condition(status, {"type": "PodScheduled", "status": "True"})
        return pod

    store.mutate(PODS, f"{namespace}/{name}", name, assign, pre, strategy=False)


def success_status() -> JSONDict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def is_pod(resource: Resource) -> bool:
    return resource is PODS
