"""NodeDeclaredFeatures (upstream's ``nodedeclaredfeatures``): pods go only to nodes declaring the features they need."""

from .infer import infer_for_scheduling
from .plugin import ERR_REASON_UNSATISFIED_REQUIREMENTS, NAME, NodeDeclaredFeatures, new

__all__ = ["ERR_REASON_UNSATISFIED_REQUIREMENTS", "NAME", "NodeDeclaredFeatures", "infer_for_scheduling", "new"]
