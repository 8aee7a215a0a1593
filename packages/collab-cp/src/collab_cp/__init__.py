"""Human–AI collaborative conformal prediction sets (Noorani, Kiyani, Pappas, Hassani, ICML 2026).

Given an expert's proposed set H(x) and an AI's scores, :class:`CollaborativeConformal` returns
C(x) = {y ∈ H : s ≤ b} ∪ {y ∉ H : s ≤ a}, which drops a correct human label with probability at
most ε (counterfactual harm) and recovers a correct label the human missed with probability at
least δ (complementarity). :class:`OnlineCollaborative` tracks both rates on arbitrary streams;
:class:`CollaborativeRegressor` is the interval version.
"""

from ._baselines import HarmControlledRestriction as HarmControlledRestriction
from ._baselines import SplitConformalClassifier as SplitConformalClassifier
from ._baselines import coverage_matched_sets as coverage_matched_sets
from ._offline import CollaborativeConformal as CollaborativeConformal
from ._offline import CollabReport as CollabReport
from ._offline import Thresholds as Thresholds
from ._offline import calibrate_thresholds as calibrate_thresholds
from ._offline import collaborative_metrics as collaborative_metrics
from ._offline import collaborative_sets as collaborative_sets
from ._offline import conformal_quantile as conformal_quantile
from ._offline import optimal_collaborative_sets as optimal_collaborative_sets
from ._online import OnlineCollaborative as OnlineCollaborative
from ._online import OnlineState as OnlineState
from ._online import OnlineTrace as OnlineTrace
from ._regression import CollaborativeRegressor as CollaborativeRegressor
from ._regression import IntervalUnion as IntervalUnion
from ._regression import RegressionReport as RegressionReport
from ._sets import HUMAN_POLICIES as HUMAN_POLICIES
from ._sets import SCORES as SCORES
from ._sets import as_label_mask as as_label_mask
from ._sets import conformity_scores as conformity_scores
from ._sets import human_sets as human_sets

__all__ = [
    "HUMAN_POLICIES",
    "SCORES",
    "CollabReport",
    "CollaborativeConformal",
    "CollaborativeRegressor",
    "HarmControlledRestriction",
    "IntervalUnion",
    "OnlineCollaborative",
    "OnlineState",
    "OnlineTrace",
    "RegressionReport",
    "SplitConformalClassifier",
    "Thresholds",
    "as_label_mask",
    "calibrate_thresholds",
    "collaborative_metrics",
    "collaborative_sets",
    "conformal_quantile",
    "coverage_matched_sets",
    "human_sets",
    "optimal_collaborative_sets",
]
__version__ = "0.1.0"
