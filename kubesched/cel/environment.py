"""A CEL environment's own declarations, beside the libraries every Kubernetes environment shares
(``declarations``): the variables an expression may name, the fields of the object types they
have, their declared maximum sizes (what cel-go's cost estimator assumes of them), and the
kinds of result an expression may have. The checker (``checker.check``) and the cost
estimator (``cost.estimate_cost``) read only these; ``dra_device`` declares the DRA device
environment."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .celtypes import CelType
from .estimates import DeclSize

__all__ = ["Environment"]


@dataclass(slots=True, frozen=True, eq=False)
class Environment:
    """One declaration set (compared by identity)."""

    # Variable name -> its type.
    variables: Mapping[str, CelType]
    # Object (struct) type -> its fields' types; a struct type not here has no fields.
    fields: Mapping[CelType, Mapping[str, CelType]]
    # Variable name -> the declared maximum sizes of what it holds.
    sizes: Mapping[str, DeclSize]
    # The kinds of type an expression's result may have (``CelType.kind``).
    result_kinds: frozenset[str]
