"""DefaultBinder: binds the pod through the cluster's binding call (``pods/binding`` live)."""

from __future__ import annotations

from ..framework import Code, CycleState, Handle, Status
from ..objects.pod import PodInfo

NAME = "DefaultBinder"


class DefaultBinder:
    name = NAME

    def __init__(self, handle: Handle) -> None:
        self.handle = handle

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        client = self.handle.client
        if client is None:
            return Status(Code.ERROR, "no cluster to bind to")
        try:
            client.bind(pod, node_name)
        except Exception as err:  # the API's refusal becomes the binding cycle's error
            return Status.as_error(err)
        return None


def new(args: None, handle: Handle) -> DefaultBinder:
    return DefaultBinder(handle)
