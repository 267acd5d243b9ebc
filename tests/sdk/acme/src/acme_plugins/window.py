"""MaintenanceWindow: nodes and pods say, through annotations, when a pod may run and bind.

* Filter: a node annotated ``acme.io/window: closed`` takes only pods annotated
  ``acme.io/maintenance: tolerate`` (UnschedulableAndUnresolvable: evicting pods would
  not open the window). A node without the annotation is open.
* Queueing hint: a pod it rejected is retried when a node's annotations change (or a
  node joins) and that node is open now.
* Permit: a pod annotated ``acme.io/approval: pending`` waits for a change approval
  (``approvalTimeoutSeconds``, 2 minutes by default), then is rejected.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    Handle,
    PluginSpec,
    QueueingHint,
    SignFragment,
    Status,
)
from kubesched.objects import Node, NodeInfo, PodInfo

WINDOW = "acme.io/window"
TOLERATE = "acme.io/maintenance"
APPROVAL = "acme.io/approval"
CLOSED = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) were in a closed maintenance window")
AWAITING_APPROVAL = "waiting for change approval"


@dataclass(frozen=True)
class MaintenanceWindowArgs:
    approval_timeout_seconds: int = 120

    def validate(self) -> list[tuple[str, str]]:
        if self.approval_timeout_seconds <= 0:
            return [("approvalTimeoutSeconds", f"must be positive, got {self.approval_timeout_seconds}")]
        return []


def is_open(node: Node) -> bool:
    return node.annotations.get(WINDOW, "open") == "open"


def window_opened(pod: PodInfo, old: object | None, new: object | None) -> QueueingHint:
    if isinstance(new, Node) and is_open(new) and not (isinstance(old, Node) and is_open(old)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


class MaintenanceWindow:
    name = "MaintenanceWindow"

    def __init__(self, args: MaintenanceWindowArgs) -> None:
        self.timeout = float(args.approval_timeout_seconds)

    def sign_pod(self, pod: PodInfo) -> tuple[list[SignFragment], Status | None]:
        """Filter reads one annotation of the pod: pods alike in it may be batched."""
        return [SignFragment(TOLERATE, pod.annotations.get(TOLERATE))], None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if pod.annotations.get(TOLERATE) == "tolerate" or is_open(node.node):
            return None
        return CLOSED

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status | None, float]:
        if pod.annotations.get(APPROVAL) == "pending":
            return Status(Code.WAIT, AWAITING_APPROVAL), self.timeout
        return None, 0.0

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(
            ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ANNOTATION), window_opened)]


def new(args: MaintenanceWindowArgs, handle: Handle) -> MaintenanceWindow:
    return MaintenanceWindow(args)


spec = PluginSpec("MaintenanceWindow", new, args_type=MaintenanceWindowArgs)
