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
table, queueing hints, Permit, placement policies for pod groups (PlacementGenerate,
PlacementScore, ``Handle.pod_group_manager``), the PodGroupPostFilter point that only
DefaultPreemption fills (workload-aware preemption), and packaging.
"""

from .args import ArgsError, decode_args
from .cycle_state import PODS_TO_ACTIVATE, CycleState, PodGroupCycleState, StateData, StateKey
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
    PodGroupStatusWriter,
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
from .placement import (
    MAX_SCORE,
    MIN_SCORE,
    Assignment,
    GeneratePlacementsResult,
    Placement,
    PlacementGeneratePlugin,
    PlacementPluginScores,
    PlacementScore,
    PlacementScoreExtensions,
    PlacementScorePlugin,
    PluginScore,
    PodGroupAssignments,
    ProposedAssignment,
)
from .podgroup_post_filter import DryRunSnapshot, PodGroupPostFilterPlugin, PodGroupSchedulingFunc
from .podgroups import (
    NO_POD_GROUPS,
    PodGroupInfo,
    PodGroupLister,
    PodGroupManager,
    PodGroupState,
    PodGroupStateLister,
    QueuedPodGroupInfo,
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
    "Assignment",
    "BatchFilterPlugin",
    "BatchScorePlugin",
    "BindPlugin",
    "BoolArray",
    "ClusterClient",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CodeArray",
    "CycleState",
    "decode_args",
    "default_normalize_score",
    "DefaultPlugin",
    "DryRunSnapshot",
    "EnqueueExtensions",
    "EventRecorder",
    "EventResource",
    "FilterPlugin",
    "FloatArray",
    "GeneratePlacementsResult",
    "Handle",
    "IntArray",
    "JSONObject",
    "MAX_NODE_SCORE",
    "MAX_SCORE",
    "MIN_NODE_SCORE",
    "MIN_SCORE",
    "NO_POD_GROUPS",
    "NodeTableView",
    "NodeToStatusReader",
    "NodeVerdicts",
    "ObjectHandler",
    "ObjectStore",
    "PermitPlugin",
    "Placement",
    "PlacementGeneratePlugin",
    "PlacementPluginScores",
    "PlacementScore",
    "PlacementScoreExtensions",
    "PlacementScorePlugin",
    "Plugin",
    "PluginFactory",
    "PluginScore",
    "PluginSpec",
    "PodEventHandler",
    "PodGroupAssignments",
    "PodGroupCycleState",
    "PodGroupInfo",
    "PodGroupLister",
    "PodGroupManager",
    "PodGroupPostFilterPlugin",
    "PodGroupSchedulingFunc",
    "PodGroupState",
    "PodGroupStateLister",
    "PodGroupStatusWriter",
    "PodObserver",
    "PODS_TO_ACTIVATE",
    "PodSignature",
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
    "ProposedAssignment",
    "QueuedPodGroupInfo",
    "QueuedPodInfo",
    "QueueingHint",
    "QueueingHintFn",
    "QueueSortKey",
    "QueueSortPlugin",
    "Registry",
    "ReservePlugin",
    "RowArray",
    "ScoreExtensions",
    "ScorePlugin",
    "SignFragment",
    "SignPlugin",
    "SignValue",
    "SKIP",
    "SnapshotView",
    "StateData",
    "StateKey",
    "Status",
    "SUCCESS",
    "WaitingPod",
]
