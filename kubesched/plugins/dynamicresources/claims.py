"""Which claims a pod uses, and how claims made for pods are named.

* ``claim_names``: upstream's ``resourceclaim.Name`` for every ``spec.resourceClaims``
  entry: a claim named directly, or the one the resourceclaim controller recorded in
  ``status.resourceClaimStatuses`` for a template (an entry without a claim is skipped;
  an entry not recorded yet is ``ResourceClaim not created yet``).
* ``generate_name``: the controller's ``generateName`` for a template's claim (both
  parts truncated in proportion past 57 characters).
* ``deterministic_name``: what ``simulate`` uses in place of the API server's five random
  characters: the first five hex digits of SHA-1 of ``<namespace>/<generateName>``
  (``#1``, ``#2``, ... appended on a collision), so runs and conformance are reproducible.
"""

from __future__ import annotations

import hashlib
from collections.abc import Container
from dataclasses import dataclass

from ...objects.pod import PodInfo

__all__ = ["ClaimRef", "ClaimNotCreated", "claim_names", "generate_name", "deterministic_name", "MAX_GENERATED_BASE"]

MAX_BASE_LEN = 57  # the controller's limit: a hyphen and five characters still fit in 63
MAX_GENERATED_BASE = 58  # the API server's: 63 minus the random suffix


class ClaimNotCreated(Exception):
    """The pod names a claim that does not exist (yet); ``str`` is upstream's reason."""


@dataclass(slots=True, frozen=True)
class ClaimRef:
    """One of the pod's claims: the ``spec.resourceClaims`` entry and the claim's name;
    ``must_check_owner`` for claims made from a template (the pod must own them)."""

    entry: str
    claim_name: str
    must_check_owner: bool


def claim_names(pod: PodInfo) -> list[ClaimRef]:
    """The pod's claims in ``spec.resourceClaims`` order; raises ``ClaimNotCreated``."""
    out = []
    for entry in pod.resource_claims:
        if entry.resource_claim_name is not None:
            out.append(ClaimRef(entry.name, entry.resource_claim_name, False))
        elif entry.resource_claim_template_name is not None:
            for name, claim_name in pod.resource_claim_statuses:
                if name == entry.name:
                    if claim_name is not None:
                        out.append(ClaimRef(entry.name, claim_name, True))
                    break
            else:
                raise ClaimNotCreated(f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet')
        else:
            raise ClaimNotCreated(f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{entry.name}": '
                                  "none of the supported fields are set")
    return out


def generate_name(pod_name: str, entry_name: str) -> str:
    """The resourceclaim controller's ``generateName`` for the claim of ``entry_name``."""
    base = f"{pod_name}-{entry_name}-"
    if len(base) > MAX_BASE_LEN:
        base = (pod_name[: len(pod_name) * MAX_BASE_LEN // len(base)] + "-"
                + entry_name[: len(entry_name) * MAX_BASE_LEN // len(base)])
    return base


def deterministic_name(namespace: str, generate: str, taken: Container[str]) -> str:
    """A name for ``generateName`` as the API server would give one, reproducibly."""
    base = generate[:MAX_GENERATED_BASE]
    attempt = 0
    while True:
        text = f"{namespace}/{generate}" if attempt == 0 else f"{namespace}/{generate}#{attempt}"
        name = base + hashlib.sha1(text.encode()).hexdigest()[:5]
        if name not in taken:
            return name
        attempt += 1
