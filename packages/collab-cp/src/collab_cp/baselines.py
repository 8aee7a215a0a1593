"""What the collaborative sets are compared with: AI alone (split conformal), the
harm-controlled restriction of the human's sets, and AI alone at exactly matched coverage."""

from ._baselines import HarmControlledRestriction as HarmControlledRestriction
from ._baselines import SplitConformalClassifier as SplitConformalClassifier
from ._baselines import coverage_matched_sets as coverage_matched_sets
from ._baselines import matched_threshold as matched_threshold

__all__ = [
    "HarmControlledRestriction",
    "SplitConformalClassifier",
    "coverage_matched_sets",
    "matched_threshold",
]
