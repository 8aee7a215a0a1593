r"""Regression variant: a human interval refined by an AI point prediction and scale.

The human proposes an interval H(x) = [l(x), u(x)]; the AI gives ŷ(x) and a scale σ̂(x) > 0; the
score is s(x, y) = |y − ŷ(x)| / σ̂(x). The collaborative set is

.. math::

    C(x) = \big(H(x) \cap [\hat y - b\hat\sigma, \hat y + b\hat\sigma]\big)
           \;\cup\; \big([\hat y - a\hat\sigma, \hat y + a\hat\sigma] \setminus H(x)\big),

a pruned human interval plus at most one AI piece on each side of H: a union of at most three
intervals. b and a are the same finite-sample order statistics as in classification (true-label
scores split by y ∈ H), so harm P(Y ∉ C | Y ∈ H) ≤ ε and recovery P(Y ∈ C | Y ∉ H) ≥ δ hold
unchanged.

References:
    Noorani, Kiyani, Pappas, Hassani. "Human-AI Collaborative Uncertainty Quantification".
    ICML 2026 (arXiv:2510.23476).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_finite_array, check_same_length

from ._checks import check_level
from ._offline import calibrate_thresholds

__all__ = ["CollaborativeRegressor", "IntervalUnion", "RegressionReport"]


@dataclass(frozen=True)
class IntervalUnion:
    """A batch of unions of at most three closed intervals.

    Attributes:
        pieces: ``(n, 3, 2)`` array of ``[start, end]`` rows sorted left to right, merged where
            they touch, unused slots filled with ``nan``.
    """

    pieces: NDArray[np.float64]

    @property
    def n_pieces(self) -> NDArray[np.int64]:
        """Number of disjoint intervals in each union (0 to 3)."""
        return (~np.isnan(self.pieces[..., 0])).sum(axis=1)

    @property
    def length(self) -> NDArray[np.float64]:
        """Total length of each union (``inf`` when unbounded)."""
        return np.nansum(self.pieces[..., 1] - self.pieces[..., 0], axis=1)

    def contains(self, y: ArrayLike) -> NDArray[np.bool_]:
        """1{y_i ∈ C(x_i)} for a ``(n,)`` array of values (closed ends)."""
        v = np.asarray(y, dtype=np.float64)[:, None]
        lo, hi = self.pieces[..., 0], self.pieces[..., 1]
        with np.errstate(invalid="ignore"):
            return np.any((lo <= v) & (v <= hi), axis=1)


def _interval_pieces(
    center: NDArray[np.float64],
    sigma: NDArray[np.float64],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
    prune: float,
    augment: float,
) -> NDArray[np.float64]:
    n = center.size
    nan = np.full(n, np.nan)
    with np.errstate(invalid="ignore"):
        rb = prune * sigma if prune >= 0 else np.full(n, -np.inf)
        ra = augment * sigma if augment >= 0 else np.full(n, -np.inf)
        # the pruned human piece H ∩ [ŷ − bσ, ŷ + bσ]
        s1, e1 = np.maximum(lower, center - rb), np.minimum(upper, center + rb)
        ok1 = (prune >= 0) & (s1 <= e1)
        # the AI interval minus H: a left and a right piece
        a_lo, a_hi = center - ra, center + ra
        ok_l = (augment >= 0) & (a_lo < lower) & (a_lo <= a_hi)
        s0, e0 = a_lo, np.minimum(a_hi, lower)
        ok_r = (augment >= 0) & (a_hi > upper) & (a_lo <= a_hi)
        s2, e2 = np.maximum(a_lo, upper), a_hi
    pieces = np.stack(
        [
            np.stack([np.where(ok_l, s0, nan), np.where(ok_l, e0, nan)], axis=1),
            np.stack([np.where(ok1, s1, nan), np.where(ok1, e1, nan)], axis=1),
            np.stack([np.where(ok_r, s2, nan), np.where(ok_r, e2, nan)], axis=1),
        ],
        axis=1,
    )
    return _merge_sorted(pieces)


def _merge_sorted(pieces: NDArray[np.float64]) -> NDArray[np.float64]:
    """Merge touching/overlapping intervals of rows already sorted left to right; compact left."""
    out = np.full_like(pieces, np.nan)
    n, slots, _ = pieces.shape
    count = np.zeros(n, dtype=np.int64)
    rows = np.arange(n)
    for j in range(slots):
        start, end = pieces[:, j, 0], pieces[:, j, 1]
        valid = ~np.isnan(start)
        last = np.clip(count - 1, 0, None)
        last_end = out[rows, last, 1]
        merge = valid & (count > 0) & (start <= last_end)
        out[rows[merge], last[merge], 1] = np.maximum(last_end[merge], end[merge])
        new = valid & ~merge
        out[rows[new], count[new], 0] = start[new]
        out[rows[new], count[new], 1] = end[new]
        count = count + new
    return out


@dataclass(frozen=True)
class RegressionReport:
    """Coverage, mean length, harm and recovery of collaborative intervals vs the human's."""

    n: int
    n_in: int
    n_out: int
    coverage: float
    length: float
    harm: float
    recovery: float
    human_coverage: float
    human_length: float
    mean_pieces: float


class CollaborativeRegressor:
    """Collaborative sets for regression: human interval ∩ AI band, plus AI pieces outside it.

    Args:
        epsilon: harm level ε ∈ (0, 1).
        delta: recovery level δ ∈ (0, 1).

    Attributes (after :meth:`conformalize`): prune_threshold_ (b), augment_threshold_ (a), n_in_,
    n_out_.
    """

    def __init__(self, epsilon: float = 0.05, delta: float = 0.7):
        self.epsilon = check_level(epsilon, "epsilon")
        self.delta = check_level(delta, "delta")
        self.prune_threshold_: float | None = None
        self.augment_threshold_: float = math.nan

    @staticmethod
    def _inputs(
        y_pred: ArrayLike, sigma: ArrayLike, human_lower: ArrayLike, human_upper: ArrayLike
    ) -> tuple[NDArray[np.float64], ...]:
        c = check_finite_array(y_pred, "y_pred", ndim=1)
        s = check_finite_array(sigma, "sigma", ndim=1)
        lo = check_finite_array(human_lower, "human_lower", ndim=1)
        hi = check_finite_array(human_upper, "human_upper", ndim=1)
        check_same_length(y_pred=c, sigma=s, human_lower=lo, human_upper=hi)
        if (s <= 0).any():
            raise ValueError(f"sigma must be > 0, got {s.min()} at index {int(np.argmin(s))}")
        if (hi < lo).any():
            i = int(np.argmax(hi < lo))
            raise ValueError(
                f"human_upper must be >= human_lower, got {hi[i]} < {lo[i]} at index {i}"
            )
        return c, s, lo, hi

    def conformalize(
        self,
        y_pred: ArrayLike,
        sigma: ArrayLike,
        human_lower: ArrayLike,
        human_upper: ArrayLike,
        y: ArrayLike,
    ) -> CollaborativeRegressor:
        """Calibrate b and a on held-out data with scores |y − ŷ| / σ̂; returns ``self``."""
        c, s, lo, hi = self._inputs(y_pred, sigma, human_lower, human_upper)
        yy = check_finite_array(y, "y", ndim=1)
        check_same_length(y_pred=c, y=yy)
        th = calibrate_thresholds(
            np.abs(yy - c) / s, (lo <= yy) & (yy <= hi), self.epsilon, self.delta
        )
        self.prune_threshold_, self.augment_threshold_ = th.prune, th.augment
        self.n_in_, self.n_out_ = th.n_in, th.n_out
        return self

    def calibrate(self, *args: Any, **kwargs: Any) -> CollaborativeRegressor:
        """Deprecated (collab-cp 0.1.0's verb): :meth:`conformalize`."""
        warnings.warn(
            "CollaborativeRegressor.calibrate is deprecated and will be removed in collab-cp "
            "0.2: use conformalize",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.conformalize(*args, **kwargs)

    def predict_intervals(self, *args: Any, **kwargs: Any) -> IntervalUnion:
        """Deprecated (collab-cp 0.1.0's name): :meth:`predict_interval`."""
        warnings.warn(
            "CollaborativeRegressor.predict_intervals is deprecated and will be removed in "
            "collab-cp 0.2: use predict_interval",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.predict_interval(*args, **kwargs)

    def predict_interval(
        self, y_pred: ArrayLike, sigma: ArrayLike, human_lower: ArrayLike, human_upper: ArrayLike
    ) -> IntervalUnion:
        """The collaborative sets as an :class:`IntervalUnion` (at most three pieces each)."""
        if self.prune_threshold_ is None:
            raise RuntimeError(
                "CollaborativeRegressor is not conformalized: call conformalize() first"
            )
        c, s, lo, hi = self._inputs(y_pred, sigma, human_lower, human_upper)
        return IntervalUnion(
            _interval_pieces(c, s, lo, hi, self.prune_threshold_, self.augment_threshold_)
        )

    def report(
        self,
        y_pred: ArrayLike,
        sigma: ArrayLike,
        human_lower: ArrayLike,
        human_upper: ArrayLike,
        y: ArrayLike,
    ) -> RegressionReport:
        """Evaluate on labelled data (membership by the defining rule, ends included)."""
        sets = self.predict_interval(y_pred, sigma, human_lower, human_upper)
        c, s, lo, hi = self._inputs(y_pred, sigma, human_lower, human_upper)
        yy = check_finite_array(y, "y", ndim=1)
        check_same_length(y_pred=c, y=yy)
        assert self.prune_threshold_ is not None
        score = np.abs(yy - c) / s
        inside = (lo <= yy) & (yy <= hi)
        covered = np.where(inside, score <= self.prune_threshold_, score <= self.augment_threshold_)
        n_in = int(inside.sum())
        return RegressionReport(
            n=c.size,
            n_in=n_in,
            n_out=c.size - n_in,
            coverage=float(covered.mean()),
            length=float(sets.length.mean()),
            harm=float(np.mean(~covered[inside])) if n_in else math.nan,
            recovery=float(np.mean(covered[~inside])) if n_in < c.size else math.nan,
            human_coverage=float(inside.mean()),
            human_length=float(np.mean(hi - lo)),
            mean_pieces=float(sets.n_pieces.mean()),
        )
