"""``Framework.sign_pod``: a pod's OpportunisticBatching signature (upstream's ``frameworkImpl.SignPod``).

The signature is the scheduler name plus every signing plugin's fragments, one per
key. A profile signs only when every PreFilter, Filter, PreScore and Score plugin
signs (``computeBatchablePlugins``): one plugin that does not turns batching off for
the whole profile, since its answers could depend on any pod field.
"""

from __future__ import annotations

from ..objects.pod import PodInfo
from .interfaces import Plugin
from .signing import SCHEDULER_NAME_SIGNER, PodSignature, SignPlugin, SignValue

__all__ = ["SignRuns", "SIGNED_POINTS"]

# The points whose plugins' answers a signature stands for.
SIGNED_POINTS = ("preFilter", "filter", "preScore", "score")


class SignRuns:
    """Mixin of ``Framework``: which plugins sign, and the signature of a pod."""

    signers: list[SignPlugin]
    unsigned_plugins: list[str]

    def _init_signing(self, points: dict[str, list[Plugin]]) -> None:
        signers: dict[str, SignPlugin] = {}
        unsigned: list[str] = []
        for point in SIGNED_POINTS:
            for plugin in points.get(point, ()):
                if plugin.name in signers or plugin.name in unsigned:
                    continue
                if isinstance(plugin, SignPlugin):
                    signers[plugin.name] = plugin
                else:
                    unsigned.append(plugin.name)
        self.unsigned_plugins = unsigned
        self.signers = [] if unsigned else list(signers.values())

    @property
    def signs_pods(self) -> bool:
        """Whether any pod of this profile can have a signature."""
        return not self.unsigned_plugins

    def sign_pod(self, pod: PodInfo) -> PodSignature | None:
        """The pod's signature, or ``None`` when some plugin refuses (or fails) to sign it
        or the profile does not sign at all."""
        if self.unsigned_plugins:
            return None
        parts: dict[str, SignValue] = {SCHEDULER_NAME_SIGNER: pod.scheduler_name}
        signers = self.signers
        for i, plugin in enumerate(signers):
            try:
                fragments, status = plugin.sign_pod(pod)
            except Exception:  # a signer's bug costs the pod its batching, not its scheduling
                return None
            if status is not None and not status.is_success():
                if i:  # ask the plugin that refused first next time: in the default profile
                    signers.insert(0, signers.pop(i))  # (system spreading) it refuses every pod
                return None
            for fragment in fragments:
                parts[fragment.key] = fragment.value
        return tuple(sorted(parts.items()))
