"""Human–AI collaborative conformal prediction sets (Noorani, Kiyani, Pappas, Hassani, ICML 2026).

Given an expert's proposed set H(x) and an AI's scores, :class:`CollaborativeConformal` returns
C(x) = {y ∈ H : s ≤ b} ∪ {y ∉ H : s ≤ a}, which drops a correct human label with probability at
most ε (counterfactual harm) and recovers a correct label the human missed with probability at
least δ (complementarity). :class:`OnlineCollaborative` tracks both rates on arbitrary streams;
:class:`CollaborativeRegressor` is the interval version. Estimators follow MAPIE 1.x's verbs
(``conformalize`` / ``predict_set`` / ``predict_interval``; their levels are the method's ε and δ);
the peers live in :mod:`collab_cp.baselines`, the experiment data in :mod:`collab_cp.data`, the split evaluations in
:mod:`collab_cp.experiments`.

Start with ``CollaborativeConformal(epsilon, delta).conformalize(probs, human_sets, y)`` on
held-out data, then ``predict_set(probs, human_sets)`` for new inputs.
"""

import importlib as _importlib
import warnings as _warnings
from importlib.metadata import version as _version
from typing import Any as _Any

from . import baselines as baselines
from . import data as data
from . import experiments as experiments
from ._offline import CollaborativeConformal as CollaborativeConformal
from ._offline import CollabReport as CollabReport
from ._offline import Thresholds as Thresholds
from ._offline import calibrate_thresholds as calibrate_thresholds
from ._offline import collaborative_metrics as collaborative_metrics
from ._offline import collaborative_sets as collaborative_sets
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
    "IntervalUnion",
    "OnlineCollaborative",
    "OnlineState",
    "OnlineTrace",
    "RegressionReport",
    "Thresholds",
    "as_label_mask",
    "baselines",
    "calibrate_thresholds",
    "collaborative_metrics",
    "collaborative_sets",
    "data",
    "experiments",
    "human_sets",
    "optimal_collaborative_sets",
]
__version__ = _version("collab-cp")

# Names that left the top level in 0.1.x: each still works for one release, with a warning.
_MOVED = {
    "HarmControlledRestriction": "collab_cp.baselines",
    "SplitConformalClassifier": "collab_cp.baselines",
    "coverage_matched_sets": "collab_cp.baselines",
}


def __getattr__(name: str) -> _Any:
    if name in _MOVED:
        _warnings.warn(
            f"collab_cp.{name} is deprecated and will be removed in collab-cp 0.2: use "
            f"{_MOVED[name]}.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(_importlib.import_module(_MOVED[name]), name)
    if name == "conformal_quantile":  # warns when called (it keeps its old coverage meaning)
        return _importlib.import_module("collab_cp._offline").conformal_quantile
    raise AttributeError(f"module 'collab_cp' has no attribute {name!r}")
