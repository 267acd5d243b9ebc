"""The plugin contract as tests a plugin author runs in their own pytest.

::

    from kubesched.testing import assert_plugin_contract, random_clusters
    from my_plugins import spec  # a kubesched.framework.PluginSpec

    CLUSTERS = random_clusters(40, node_labels={"example.com/pool": ["a", "b"]},
                               pod_labels={"example.com/pool": ["a", "b", "c"]})

    def test_contract() -> None:
        report = assert_plugin_contract(spec, args={"key": "value"}, points=["filter"], clusters=CLUSTERS)
        print(report)

The checks, each usable on its own:

* ``assert_declarations``: the plugin's name is its spec's; it implements the points it
  claims; its methods take the framework's arguments; ``events_to_register`` returns
  ``ClusterEventWithHint`` entries whose hints answer a ``QueueingHint``.
* ``assert_forms_agree``: with both forms of Filter, ``filter_nodes`` and ``filter`` give
  equal statuses on every node; with both forms of Score, equal raw scores.
* ``assert_scores_in_range``: scores are within 0..100 after NormalizeScore.
* ``assert_unreserve_idempotent``: Unreserve never fails, called twice or without Reserve.
* ``assert_permit_answers``: Permit answers Success, Wait (with a positive, finite
  timeout) or a rejection with a reason.
* ``assert_pre_filter_extensions_agree``: after ``add_pod`` / ``remove_pod``, Filter says on
  every node what it says after the same change made for real and a fresh PreFilter.
* ``assert_signature_covers_reads``: a plugin with ``sign_pod`` answers alike for two pods
  it signs alike (one field of a pod swapped for another pod's), so OpportunisticBatching
  never reuses a result that does not hold.
* ``assert_placement_contract``: a PlacementGenerate plugin's placements only narrow their
  parent (its own ``NodeInfo`` objects, each once, names unique) and are deterministic; a
  PlacementScore plugin's scores are integers, deterministic and within 0..100 after its
  ``normalize_placement_score``; checked on the clusters' random pod groups
  (``with_pod_groups``).
* ``assert_plugin_contract``: all that apply.

They raise ``ContractError`` (an ``AssertionError``) naming the plugin, pod, node and the
random cluster to rebuild (``random_cluster(seed, index)``), and fail rather than pass
when they compared nothing. Clusters are built with the scheduler's own cache and
handle (``random_clusters``, ``RandomCluster``); see ``docs/plugins.md``.
"""

from .clusters import (
    DEFAULT_NAMESPACES,
    DEFAULT_NODE_LABELS,
    DEFAULT_POD_LABELS,
    EXTENDED_RESOURCE,
    RandomCluster,
    random_cluster,
    random_clusters,
)
from ._support import ContractError, ContractReport
from .contract import assert_plugin_contract
from .declarations import assert_declarations
from .extensions import assert_pre_filter_extensions_agree
from .forms import assert_forms_agree
from .permit import assert_permit_answers
from .placement import assert_placement_contract
from .pod_groups import DEFAULT_TOPOLOGY_KEYS, PodGroupCluster, with_pod_groups
from .scores import assert_scores_in_range
from .signatures import assert_signature_covers_reads
from .unreserve import assert_unreserve_idempotent

__all__ = [
    "DEFAULT_NAMESPACES",
    "DEFAULT_NODE_LABELS",
    "DEFAULT_POD_LABELS",
    "DEFAULT_TOPOLOGY_KEYS",
    "EXTENDED_RESOURCE",
    "ContractError",
    "ContractReport",
    "PodGroupCluster",
    "RandomCluster",
    "assert_declarations",
    "assert_forms_agree",
    "assert_permit_answers",
    "assert_placement_contract",
    "assert_plugin_contract",
    "assert_pre_filter_extensions_agree",
    "assert_scores_in_range",
    "assert_signature_covers_reads",
    "assert_unreserve_idempotent",
    "random_cluster",
    "random_clusters",
    "with_pod_groups",
]
