"""Baselines the collaborative sets are compared with.

* Human alone: the expert's set H(x) as proposed (nothing to fit; see
  :func:`collab_cp.collaborative_metrics` with ``sets = human_mask``).
* AI alone: split conformal prediction on the AI's score, {y : s(x, y) ≤ q} with
  q = S_(⌈(n+1)·level⌉) (:class:`SplitConformalClassifier`); compared at the collaborative set's
  coverage ("matched coverage"), either calibrated at that level or, as the stricter comparison,
  with the threshold that matches the coverage exactly on the evaluation data
  (:func:`coverage_matched_sets`, which favours the baseline: it sees the test labels).
* Harm-controlled restriction (after Straitouri et al. 2024): C = {y ∈ H : s ≤ b} with b
  calibrated for harm ≤ ε, never adding a label (:class:`HarmControlledRestriction`).
* Frozen offline thresholds in the online setting: a calibrated
  :class:`~collab_cp.CollaborativeConformal` applied to a stream without updates.

References:
    Straitouri, Thejaswi, Gomez-Rodriguez. "Controlling Counterfactual Harm in Decision Support
    Systems". NeurIPS 2024.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_in_interval, check_probability_rows
from icml26_shared.conformal import split_quantile

from ._checks import check_level
from ._sets import HumanSets, ScoreLike, as_label_mask, check_labels, conformity_scores

__all__ = ["HarmControlledRestriction", "SplitConformalClassifier", "coverage_matched_sets"]


class SplitConformalClassifier:
    """AI alone: split conformal sets {y : s(x, y) ≤ q}, q = S_(⌈(n+1)·confidence_level⌉).

    Args:
        confidence_level: target coverage 1 − α ∈ (0, 1).
        score: ``"1-prob"``, ``"aps"`` or a callable ``probs -> (n, K)`` scores.
    """

    def __init__(self, confidence_level: float = 0.9, score: ScoreLike = "1-prob"):
        self.confidence_level = check_level(confidence_level, "confidence_level")
        self.score = score
        self.threshold_: float | None = None

    def conformalize(self, probs: ArrayLike, y: ArrayLike) -> SplitConformalClassifier:
        """Set ``threshold_`` from calibration probabilities and labels; returns ``self``."""
        s = conformity_scores(probs, self.score)
        labels = check_labels(y, *s.shape)
        true = s[np.arange(s.shape[0]), labels]
        self.threshold_ = float(split_quantile(true, 1.0 - self.confidence_level))
        return self

    def calibrate(self, *args: Any, **kwargs: Any) -> SplitConformalClassifier:
        """Deprecated (collab-cp 0.1.0's verb): :meth:`conformalize`."""
        warnings.warn(
            "SplitConformalClassifier.calibrate is deprecated and will be removed in collab-cp 0.2: use "
            "conformalize",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.conformalize(*args, **kwargs)

    def predict_set(self, probs: ArrayLike) -> NDArray[np.bool_]:
        """Boolean ``(n, K)`` prediction sets."""
        if self.threshold_ is None:
            raise RuntimeError(
                "SplitConformalClassifier is not conformalized: call conformalize() first"
            )
        return conformity_scores(probs, self.score) <= self.threshold_


class HarmControlledRestriction:
    """Restrict the human's set only: C = {y ∈ H : s ≤ b}, b = S_in,(⌈(n_in+1)(1−ε)⌉).

    Harm P(Y ∉ C | Y ∈ H) ≤ ε as for the collaborative sets, but a label the human missed is never
    recovered (recovery 0): the collaborative method with the augmentation branch switched off.

    Args:
        epsilon: harm level ε ∈ (0, 1).
        score: ``"1-prob"``, ``"aps"`` or a callable ``probs -> (n, K)`` scores.
    """

    def __init__(self, epsilon: float = 0.05, score: ScoreLike = "1-prob"):
        self.epsilon = check_level(epsilon, "epsilon")
        self.score = score
        self.prune_threshold_: float | None = None

    def conformalize(
        self, probs: ArrayLike, human_sets: HumanSets, y: ArrayLike
    ) -> HarmControlledRestriction:
        """Set ``prune_threshold_`` from calibration data; returns ``self``."""
        s = conformity_scores(probs, self.score)
        mask = as_label_mask(human_sets, *s.shape)
        labels = check_labels(y, *s.shape)
        rows = np.arange(s.shape[0])
        inside = mask[rows, labels]
        self.prune_threshold_ = float(split_quantile(s[rows, labels][inside], self.epsilon))
        return self

    def calibrate(self, *args: Any, **kwargs: Any) -> HarmControlledRestriction:
        """Deprecated (collab-cp 0.1.0's verb): :meth:`conformalize`."""
        warnings.warn(
            "HarmControlledRestriction.calibrate is deprecated and will be removed in collab-cp 0.2: use "
            "conformalize",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.conformalize(*args, **kwargs)

    def predict_set(self, probs: ArrayLike, human_sets: HumanSets) -> NDArray[np.bool_]:
        """Boolean ``(n, K)`` sets, always inside the human's sets."""
        if self.prune_threshold_ is None:
            raise RuntimeError(
                "HarmControlledRestriction is not conformalized: call conformalize() first"
            )
        s = conformity_scores(probs, self.score)
        mask = as_label_mask(human_sets, *s.shape)
        return mask & (s <= self.prune_threshold_)


def coverage_matched_sets(
    probs: ArrayLike, y: ArrayLike, coverage: float, score: ScoreLike = "1-prob"
) -> NDArray[np.bool_]:
    """Threshold sets {y : s ≤ t} whose empirical coverage on (probs, y) is the smallest ≥ ``coverage``.

    An evaluation device for "AI alone at matched coverage": t is the ⌈n·coverage⌉-th smallest
    true-label score of the *evaluation* data itself, so the baseline's coverage equals the target
    up to 1/n. It uses the labels it is evaluated on and so favours the baseline.
    """
    p = check_probability_rows(probs, "probs")
    c = check_in_interval(coverage, "coverage", 0, 1, closed=(True, True))
    s = conformity_scores(p, score)
    labels = check_labels(y, *s.shape)
    return s <= matched_threshold(s[np.arange(s.shape[0]), labels], c)


def matched_threshold(true_scores: ArrayLike, coverage: float) -> float:
    """The ``⌈n·coverage⌉``-th smallest of ``n`` true-label scores (``-inf`` for coverage 0).

    The empirical (not conformal: no ``n + 1``) quantile behind every "at matched coverage"
    comparison: ``{s ≤ t}`` covers the smallest fraction ``>= coverage`` of these points. One
    rounding guard, as in :func:`icml26_shared.conformal.conformal_rank`.
    """
    srt = np.sort(np.asarray(true_scores, dtype=np.float64).ravel())
    x = srt.size * float(coverage)
    k = min(max(math.ceil(x - 1e-12 * max(1.0, x)), 0), srt.size)
    return -math.inf if k == 0 else float(srt[k - 1])
