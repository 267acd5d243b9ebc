"""``HTTPExtender``: upstream's HTTP extender client (``pkg/scheduler/extender.go``) and the
``k8s.io/kube-scheduler/extender/v1`` wire format.

Requests are JSON objects with Go's field names (``ExtenderArgs``: ``Pod``, ``Nodes`` (a
``NodeList``) or ``NodeNames`` when the extender is node-cache capable; ``ExtenderBindingArgs``;
``ExtenderPreemptionArgs``), POSTed to ``urlPrefix/verb``. Responses are decoded as Go's
``encoding/json`` decodes them: field names case-insensitively, unknown fields ignored,
``null`` as the zero value. Any failure (transport, a status other than 200, a body that
is not the expected type, an ``Error`` in the result) raises ``ExtenderError``.
"""

from __future__ import annotations

import importlib
import ssl
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Mapping, Protocol, Sequence

import orjson

from ..framework.extender_config import ExtenderConfig, ExtenderTLSConfig
from ..objects.node import Node
from ..objects.nodeinfo import NodeInfo
from ..objects.pod import PodInfo

if TYPE_CHECKING:  # loaded with the first extender (_httpx): most profiles configure none
    import httpx

__all__ = ["MAX_EXTENDER_PRIORITY", "ExtenderError", "HTTPExtender", "NodeInfoLister", "Victims", "ssl_context"]

MAX_EXTENDER_PRIORITY = 10  # extenderv1.MaxExtenderPriority

FailedNodes = dict[str, str]


class ExtenderError(Exception):
    """An extender call failed; the message is what upstream's error would say."""


@dataclass(slots=True)
class Victims:
    """``extenderv1.Victims``: the pods preemption would evict on a node."""

    pods: list[PodInfo]
    num_pdb_violations: int = 0


class NodeInfoLister(Protocol):
    def get(self, name: str) -> NodeInfo | None: ...


# -- TLS (makeTransport) ----------------------------------------------------------------
def ssl_context(config: ExtenderConfig) -> tuple[ssl.SSLContext | bool, str]:
    """The TLS settings for ``config``: an ``SSLContext`` (or True: the system defaults) and the
    server name to send and verify ('' for the URL's host). HTTPS without a CA skips verification."""
    tls = config.tls_config or ExtenderTLSConfig()
    has_ca = bool(tls.ca_file or tls.ca_data)
    insecure = tls.insecure or (config.enable_https and not has_ca)
    has_cert = bool(tls.cert_file or tls.cert_data or tls.key_file or tls.key_data)
    if insecure and has_ca:
        raise ExtenderError("specifying a root certificates file with the insecure flag is not allowed")
    if not (insecure or has_ca or has_cert or tls.server_name):
        return True, ""
    try:
        if tls.ca_data:  # data wins over the file, as client-go's dataFromSliceOrFile
            ctx = ssl.create_default_context(cadata=tls.ca_data.decode())
        elif tls.ca_file:
            ctx = ssl.create_default_context(cafile=tls.ca_file)
        else:
            ctx = ssl.create_default_context()
        if insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if has_cert:
            _load_client_cert(ctx, tls)
    except (ssl.SSLError, OSError, ValueError) as err:
        raise ExtenderError(f"TLS configuration: {err}") from None
    return ctx, tls.server_name


def _load_client_cert(ctx: ssl.SSLContext, tls: ExtenderTLSConfig) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = tls.cert_file, tls.key_file
        if tls.cert_data:
            cert = str(Path(tmp, "cert.pem"))
            Path(cert).write_bytes(tls.cert_data)
        if tls.key_data:
            key = str(Path(tmp, "key.pem"))
            Path(key).write_bytes(tls.key_data)
        ctx.load_cert_chain(cert, key or None)


# -- decoding as encoding/json does -------------------------------------------------------
def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _object(value: object, go_type: str) -> Mapping[str, object]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ExtenderError(f"json: cannot unmarshal {_kind(value)} into Go value of type {go_type}")
    return value


def _get(obj: Mapping[str, object], key: str) -> object:
    """A field as Go finds it: the exact name, else any case-insensitive match."""
    if key in obj:
        return obj[key]
    folded = key.lower()
    for name, value in obj.items():
        if name.lower() == folded:
            return value
    return None


def _string(value: object, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ExtenderError(f"json: cannot unmarshal {_kind(value)} into Go struct field {where} of type string")
    return value


def _int(value: object, where: str) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool):
        raise ExtenderError(f"json: cannot unmarshal {_kind(value)} into Go struct field {where} of type int64")
    return value


def _list(value: object, where: str) -> list[object] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ExtenderError(f"json: cannot unmarshal {_kind(value)} into Go struct field {where} of type []")
    return value


def _failed(value: object, where: str) -> FailedNodes:
    out: FailedNodes = {}
    for name, message in _object(value, "extenderv1.FailedNodesMap").items():
        out[name] = _string(message, where)
    return out


# -- encoding -----------------------------------------------------------------------------
def pod_json(pod: PodInfo) -> Mapping[str, object]:
    """The pod as the API server has it; a compacted pod (no raw document) as its identity."""
    if pod.raw is not None:
        return pod.raw
    return {"metadata": {"name": pod.name, "namespace": pod.namespace, "uid": pod.uid}}


def node_json(node: Node) -> Mapping[str, object]:
    """The node as the API server has it (snapshots keep it when extenders are configured);
    otherwise its name, uid and labels."""
    if node.raw is not None:
        return node.raw
    return {"metadata": {"name": node.name, "uid": node.uid, "labels": node.labels}}


@cache
def _httpx() -> ModuleType:
    """httpx, imported by name on first use: it costs about 0.15 s of CPU (it loads its
    command-line tool's rich and pygments too), which every ``kubesched run`` and
    ``simulate`` without extenders would pay at start."""
    return importlib.import_module("httpx")


class HTTPExtender:
    """One configured extender; ``name`` is its URL prefix, as upstream's ``Name()``."""

    def __init__(self, config: ExtenderConfig) -> None:
        self.config = config
        verify, self._server_name = ssl_context(config)
        http = _httpx()
        timeout = http.Timeout(config.http_timeout if config.http_timeout > 0 else None)
        self._client: httpx.Client = http.Client(verify=verify, timeout=timeout)
        self._managed = frozenset(r.name for r in config.managed_resources)

    @property
    def name(self) -> str:
        return self.config.url_prefix

    def __repr__(self) -> str:
        return f"HTTPExtender({self.name})"

    def close(self) -> None:
        self._client.close()

    def is_ignorable(self) -> bool:
        return self.config.ignorable

    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    def supports_preemption(self) -> bool:
        return bool(self.config.preempt_verb)

    def is_interested(self, pod: PodInfo) -> bool:
        """Whether a container or init container requests or limits a resource this extender
        manages (always, when it manages none)."""
        if not self._managed:
            return True
        spec = pod.raw.get("spec") if pod.raw is not None else None
        if not isinstance(spec, Mapping):  # no raw document: the requests parsed from it
            return any(name in self._managed for name in pod.requests.requests.scalar)
        for key in ("containers", "initContainers"):
            containers = spec.get(key)
            for container in containers if isinstance(containers, list) else ():
                resources = container.get("resources") if isinstance(container, Mapping) else None
                if not isinstance(resources, Mapping):
                    continue
                for kind in ("requests", "limits"):
                    listed = resources.get(kind)
                    if isinstance(listed, Mapping) and any(name in self._managed for name in listed):
                        return True
        return False

    def _args(self, pod: PodInfo, nodes: Sequence[Node]) -> dict[str, object]:
        """``ExtenderArgs``."""
        if self.config.node_cache_capable:
            return {"Pod": pod_json(pod), "Nodes": None, "NodeNames": [n.name for n in nodes]}
        return {"Pod": pod_json(pod), "Nodes": {"metadata": {}, "items": [node_json(n) for n in nodes]}, "NodeNames": None}

    def filter(self, pod: PodInfo, nodes: Sequence[Node]) -> tuple[list[str], FailedNodes, FailedNodes]:
        """The names of the nodes that pass (a subset of ``nodes``), the failed nodes and the
        failed-and-unresolvable nodes, each with its message."""
        if not self.config.filter_verb:
            return [n.name for n in nodes], {}, {}
        result = _object(self._send(self.config.filter_verb, self._args(pod, nodes)), "v1.ExtenderFilterResult")
        error = _string(_get(result, "Error"), "ExtenderFilterResult.Error")
        if error:
            raise ExtenderError(error)
        sent = {n.name for n in nodes}
        names = _list(_get(result, "NodeNames"), "ExtenderFilterResult.NodeNames")
        kept: list[str] = []
        if self.config.node_cache_capable and names is not None:
            kept = [_string(n, "ExtenderFilterResult.NodeNames") for n in names]
        else:
            node_list = _object(_get(result, "Nodes"), "v1.NodeList")
            for item in _list(_get(node_list, "items"), "NodeList.items") or []:
                meta = _object(_get(_object(item, "v1.Node"), "metadata"), "v1.ObjectMeta")
                kept.append(_string(_get(meta, "name"), "ObjectMeta.name"))
        for name in kept:
            if name not in sent:
                raise ExtenderError(f'extender "{self.name}" claims a filtered node "{name}" which is not found in the input node list')
        failed = _failed(_get(result, "FailedNodes"), "ExtenderFilterResult.FailedNodes")
        unresolvable = _failed(_get(result, "FailedAndUnresolvableNodes"), "ExtenderFilterResult.FailedAndUnresolvableNodes")
        return list(dict.fromkeys(kept)), failed, unresolvable

    def prioritize(self, pod: PodInfo, nodes: Sequence[Node]) -> tuple[list[tuple[str, int]], int]:
        """``HostPriorityList`` as (host, score) pairs, and this extender's weight."""
        if not self.config.prioritize_verb:
            return [(n.name, 0) for n in nodes], 0
        result = _list(self._send(self.config.prioritize_verb, self._args(pod, nodes)), "HostPriorityList") or []
        out: list[tuple[str, int]] = []
        for entry in result:
            item = _object(entry, "v1.HostPriority")
            out.append((_string(_get(item, "Host"), "HostPriority.Host"), _int(_get(item, "Score"), "HostPriority.Score")))
        return out, self.config.weight

    def bind(self, pod: PodInfo, node_name: str) -> None:
        """Delegate the binding: the extender creates it in the API server."""
        if not self.config.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        args = {"PodName": pod.name, "PodNamespace": pod.namespace, "PodUID": pod.uid, "Node": node_name}
        result = _object(self._send(self.config.bind_verb, args), "v1.ExtenderBindingResult")
        error = _string(_get(result, "Error"), "ExtenderBindingResult.Error")
        if error:
            raise ExtenderError(error)

    def process_preemption(self, pod: PodInfo, victims: Mapping[str, Victims],
                           node_infos: NodeInfoLister) -> dict[str, Victims]:
        """``ProcessPreemption``: the candidates (node -> victims) the extender keeps, its victims
        found again among the pods on each node by UID. Sends ``NodeNameToVictims`` (whole pods),
        or ``NodeNameToMetaVictims`` (UIDs) when node-cache capable; the extender always answers
        with ``NodeNameToMetaVictims``. DefaultPreemption asks the extenders that support it to narrow its candidates."""
        if not self.config.preempt_verb:
            raise ExtenderError(f"preempt verb is not defined for extender {self.name} but run into ProcessPreemption")
        args: dict[str, object] = {"Pod": pod_json(pod), "NodeNameToVictims": None, "NodeNameToMetaVictims": None}
        if self.config.node_cache_capable:
            args["NodeNameToMetaVictims"] = {
                node: {"Pods": [{"UID": p.uid} for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in victims.items()
            }
        else:
            args["NodeNameToVictims"] = {
                node: {"Pods": [pod_json(p) for p in v.pods], "NumPDBViolations": v.num_pdb_violations}
                for node, v in victims.items()
            }
        result = _object(self._send(self.config.preempt_verb, args), "v1.ExtenderPreemptionResult")
        meta = _object(_get(result, "NodeNameToMetaVictims"), "map[string]*v1.MetaVictims")
        out: dict[str, Victims] = {}
        for node_name, entry in meta.items():
            info = node_infos.get(node_name)
            if info is None:
                raise ExtenderError(f'nodeinfo not found for node name "{node_name}"')
            fields = _object(entry, "v1.MetaVictims")
            found = Victims([], _int(_get(fields, "NumPDBViolations"), "MetaVictims.NumPDBViolations"))
            for meta_pod in _list(_get(fields, "Pods"), "MetaVictims.Pods") or []:
                uid = _string(_get(_object(meta_pod, "v1.MetaPod"), "UID"), "MetaPod.UID")
                victim = info.pods.get(uid)
                if victim is None:
                    raise ExtenderError(f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on node: "
                                        f"{node_name}, but the pod is not found on that node")
                found.pods.append(victim)
            out[node_name] = found
        return out

    def _send(self, verb: str, args: Mapping[str, object]) -> object:
        """POST ``args`` to ``urlPrefix/verb``; the decoded JSON answer."""
        url = self.config.url_prefix.rstrip("/") + "/" + verb
        extensions = {"sni_hostname": self._server_name} if self._server_name else None
        http = _httpx()
        try:
            response = self._client.post(url, content=orjson.dumps(args), extensions=extensions,
                                         headers={"Content-Type": "application/json"})
        except http.TimeoutException:
            raise ExtenderError(f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)') from None
        except (http.HTTPError, http.InvalidURL) as err:
            raise ExtenderError(f'Post "{url}": {err}') from None
        if response.status_code != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {response.status_code}")
        if not response.content.strip():
            raise ExtenderError("EOF")
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError as err:
            raise ExtenderError(f"decoding the {verb} response of {url}: {err}") from None
