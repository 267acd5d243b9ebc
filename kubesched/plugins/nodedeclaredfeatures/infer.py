"""What a pod spec needs of its node (``k8s.io/component-helpers/nodedeclaredfeatures``, v1.36).

Upstream's framework keeps a registry of features, sorted by name; each says whether a
pod needs it to be scheduled (``InferForScheduling``). In v1.36 two of the five do:

* ``RestartAllContainersOnContainerExits``: a container or init container with a
  ``restartPolicyRules`` rule whose action is ``RestartAllContainers``;
* ``UserNamespacesHostNetworkSupport``: ``hostNetwork: true`` with ``hostUsers: false``.

The others (``ExtendWebSocketsToKubelet`` and the two in-place resize features) are
inferred only for pod updates, which the scheduler does not ask about.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["FEATURES", "RESTART_ALL_CONTAINERS", "USER_NAMESPACES_HOST_NETWORK", "infer_for_scheduling"]

RESTART_ALL_CONTAINERS = "RestartAllContainersOnContainerExits"
USER_NAMESPACES_HOST_NETWORK = "UserNamespacesHostNetworkSupport"

# The registry's names in its order (sorted), as the feature set's bits are.
FEATURES = (
    "ExtendWebSocketsToKubelet",
    "InPlacePodLevelResourcesVerticalScaling",
    "InPlacePodVerticalScalingInitContainers",
    RESTART_ALL_CONTAINERS,
    USER_NAMESPACES_HOST_NETWORK,
)


def _restarts_all(containers: object) -> bool:
    if type(containers) is not list:  # every scheduling cycle asks: no ABC checks on the way
        return False
    for container in containers:
        rules = container.get("restartPolicyRules") if type(container) is dict else None
        if rules and type(rules) is list and any(type(r) is dict and r.get("action") == "RestartAllContainers"
                                                 for r in rules):
            return True
    return False


def infer_for_scheduling(spec: Mapping[str, object] | None) -> frozenset[str]:
    """The features a pod with this spec needs, by name (empty: none)."""
    if not spec:
        return _NONE
    found = set()
    if _restarts_all(spec.get("containers")) or _restarts_all(spec.get("initContainers")):
        found.add(RESTART_ALL_CONTAINERS)
    if spec.get("hostNetwork") is True and spec.get("hostUsers") is False:
        found.add(USER_NAMESPACES_HOST_NETWORK)
    return frozenset(found) if found else _NONE


_NONE: frozenset[str] = frozenset()
