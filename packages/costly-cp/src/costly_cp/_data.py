"""Synthetic streams for timing and testing the stopping rule (generated, never downloaded), and
the real classification sets that ship inside scikit-learn (extra ``data``)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import check_positive_int
from icml26_shared.datasets import load_real_classification

from ._scores import SetSizeCurve

__all__ = ["REAL_SETS", "load_real", "never_stopping_stream", "never_stopping_task"]

#: name -> description of the real sets of :func:`load_real` (all ship inside scikit-learn).
REAL_SETS = {
    "breast_cancer": "Wisconsin diagnostic breast cancer, 569 x 30, 2 classes (UCI, CC BY 4.0)",
    "wine": "UCI wine recognition, 178 x 13, 3 classes (CC BY 4.0)",
    "digits": "UCI optical handwritten digits (8x8), 1,797 x 64, 10 classes (CC BY 4.0)",
}


#: ``load_real(name)``: ``(X, y)`` of one of :data:`REAL_SETS` (icml26-shared's loader).
load_real = load_real_classification


def _van_der_corput(top: int) -> NDArray[np.float64]:
    i = np.arange(1, top + 1)
    scores = np.zeros(top)
    base = 0.5
    while np.any(i):
        scores += base * (i & 1)
        i >>= 1
        base /= 2
    return scores


def never_stopping_stream(top: int) -> tuple[NDArray[np.float64], SetSizeCurve]:
    """A score stream on which the rule keeps buying labels up to ``top`` (for timing decisions).

    Scores are a van der Corput sequence (every prefix is spread almost evenly over (0, 1), so
    the fitted curve is not noisy) and the set-size curve is the convex ``g(q) = 10 q²``; with
    ``N = 10¹⁵`` the estimated best size always lies far ahead.

    >>> scores, curve = never_stopping_stream(4)
    >>> scores.tolist()
    [0.5, 0.25, 0.75, 0.125]
    """
    top = check_positive_int(top, "top")
    grid = (np.arange(2000 * 10) + 0.5) / (2000 * 10)
    curve = SetSizeCurve.from_scores(np.sqrt(grid).reshape(2000, 10))
    return _van_der_corput(top), curve


def never_stopping_task(
    top: int, n_classes: int = 10
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """The same stream as a classification task for :class:`~costly_cp.LabelBudgetCalibrator`.

    Returns ``(scores, labels)``: an ``(top, K)`` per-label score matrix (pass
    ``score_fn=lambda S: S``) whose true-label column 0 holds the van der Corput scores and whose
    other columns hold ``sqrt`` of an even grid, and the labels (all 0).
    """
    top = check_positive_int(top, "top")
    k = check_positive_int(n_classes, "n_classes", minimum=2)
    rest = np.sqrt((np.arange(top * (k - 1)) + 0.5) / (top * (k - 1))).reshape(top, k - 1)
    return np.c_[_van_der_corput(top), rest], np.zeros(top, dtype=np.int64)
