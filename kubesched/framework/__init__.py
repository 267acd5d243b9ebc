"""The public plugin contract of kubesched (upstream's ``pkg/scheduler/framework``).

Everything a plugin needs is importable from here; pod and node records come from
``kubesched.objects``. A minimal Score plugin::

    from kubesched.framework import CycleState, Handle, PluginSpec
    from kubesched.objects import NodeInfo, PodInfo

    class FewestPods:
        name = "FewestPods"

        def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
            return max(0, 100 - len(node.pods))

    plugin = PluginSpec("FewestPods", lambda args, handle: FewestPods())

See ``docs/plugins.md`` for the extension points, the batch form over the node
table, queueing hints, Permit, and packaging.
"""

from .args import ArgsError, decode_args
from .cycle_state import PODS_TO_ACTIVATE, CycleState, StateData, StateKey
from .events import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    QueueingHint,
    QueueingHintFn,
)
from .handle import (
    ClusterClient,
    EventRecorder,
    Handle,
    JSONObject,
    ObjectHandler,
    ObjectStore,
    PodEventHandler,
    WaitingPod,
)
from .interfaces import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    BatchFilterPlugin,
    BatchScorePlugin,
    BindPlugin,
    EnqueueExtensions,
    FilterPlugin,
    NodeToStatusReader,
    NodeVerdicts,
    PermitPlugin,
    Plugin,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreBindPreFlight,
    PreEnqueuePlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortKey,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScorePlugin,
)
from .queued_pod import QueuedPodInfo
from .registry import AnyPluginSpec, DefaultPlugin, PluginFactory, PluginSpec, Registry
from .scoring import default_normalize_score
from .signing import PodSignature, SignFragment, SignPlugin, SignValue
from .status import SKIP, SUCCESS, Code, Status
from .views import BoolArray, CodeArray, FloatArray, IntArray, NodeTableView, PodObserver, RowArray, SnapshotView

__all__ = [
    "ActionType",
    "AnyPluginSpec",
    "ArgsError",
    "BatchFilterPlugin",
    "BatchScorePlugin",
    "BindPlugin",
    "BoolArray",
    "ClusterClient",
    "CodeArray",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "DefaultPlugin",
    "EnqueueExtensions",
    "EventRecorder",
    "EventResource",
    "FilterPlugin",
    "FloatArray",
    "Handle",
    "IntArray",
    "JSONObject",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "NodeTableView",
    "NodeToStatusReader",
    "NodeVerdicts",
    "ObjectHandler",
    "ObjectStore",
    "PODS_TO_ACTIVATE",
    "PermitPlugin",
    "Plugin",
    "PluginFactory",
    "PluginSpec",
    "PodEventHandler",
    "PodObserver",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreBindPreFlight",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortKey",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "QueueingHintFn",
    "Registry",
    "ReservePlugin",
    "RowArray",
    "SKIP",
    "SUCCESS",
    "ScoreExtensions",
    "ScorePlugin",
    "SignFragment",
    "SignPlugin",
    "SignValue",
    "PodSignature",
    "SnapshotView",
    "StateData",
    "StateKey",
    "Status",
    "WaitingPod",
    "decode_args",
    "default_normalize_score",
]
