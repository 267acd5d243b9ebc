"""KernelPreference: scores nodes by ``status.nodeInfo.kernelVersion``, which kubesched does
not parse: it reads the whole node document, so its spec declares ``needs_raw=True``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kubesched.framework import CycleState, Handle, PluginSpec, SignFragment, Status
from kubesched.objects import NodeInfo, PodInfo


@dataclass(frozen=True)
class KernelPreferenceArgs:
    prefer: str = "6."


def kernel_of(raw: Mapping[str, object] | None) -> str:
    if raw is None:
        raise LookupError("the node's document was not kept (needs_raw not honoured)")
    status = raw.get("status")
    info = status.get("nodeInfo") if isinstance(status, Mapping) else None
    kernel = info.get("kernelVersion") if isinstance(info, Mapping) else None
    return kernel if isinstance(kernel, str) else ""


class KernelPreference:
    name = "KernelPreference"

    def __init__(self, args: KernelPreferenceArgs) -> None:
        self.prefer = args.prefer

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        return [], None  # its score reads no field of the pod

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        return 100 if kernel_of(node.node.raw).startswith(self.prefer) else 0


def new(args: KernelPreferenceArgs, handle: Handle) -> KernelPreference:
    return KernelPreference(args)


spec = PluginSpec("KernelPreference", new, args_type=KernelPreferenceArgs, needs_raw=True)
