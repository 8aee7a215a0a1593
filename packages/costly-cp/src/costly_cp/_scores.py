"""Nonconformity scores, split-conformal ranks and the unlabeled set-size curve.

Everything in this module is label-free except :func:`conformal_threshold`, which takes the
calibration scores. The rank, the quantile and the LAC/APS scores are icml26-shared's
(:mod:`icml26_shared.conformal`), re-exported here because they are the inputs a user passes. The set-size curve ``g(q) = E_X |T(X; q)|`` of a threshold ``q`` needs only
unlabeled inputs, which is what lets the stopping rule price a calibration size before buying it.

References:
    Vovk, Gammerman, Shafer (2005), *Algorithmic Learning in a Random World* (split conformal).
    Romano, Sesia, Candès (2020), "Classification with valid and adaptive coverage" (APS).
    Sadinle, Lei, Wasserman (2019), "Least ambiguous set-valued classifiers" (LAC).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from icml26_shared.checks import check_alpha, check_choice, check_finite_array
from icml26_shared.conformal import aps_scores as _shared_aps
from icml26_shared.conformal import conformal_rank as conformal_rank
from icml26_shared.conformal import lac_scores as lac_scores
from icml26_shared.conformal import split_quantile

__all__ = [
    "IntervalScores",
    "SetSizeCurve",
    "aps_scores",
    "conformal_rank",
    "conformal_threshold",
    "lac_scores",
    "pac_rank",
]


def aps_scores(
    probs: ArrayLike,
    y: ArrayLike | None = None,
    randomized: bool = False,
    rng: int | np.random.Generator | None = None,
    **deprecated: Any,
) -> NDArray[np.float64]:
    """Adaptive prediction set (APS) scores: :func:`icml26_shared.conformal.aps_scores`.

    ``seed=`` (costly-cp 0.1.0's name for ``rng``) still works for one release, with a
    ``DeprecationWarning``.
    """
    if deprecated:
        unknown = set(deprecated) - {"seed"}
        if unknown:
            raise TypeError(f"aps_scores got unexpected keyword(s) {sorted(unknown)}")
        warnings.warn(
            "aps_scores(seed=...) is deprecated and will be removed in costly-cp 0.2: pass rng=",
            DeprecationWarning,
            stacklevel=2,
        )
        rng = deprecated["seed"]
    return _shared_aps(probs, y, randomized=randomized, rng=rng)


def pac_rank(
    m: int | NDArray[np.integer], eps: float, delta: float, n_target: int | ArrayLike
) -> Any:
    """Smallest rank ``k`` whose threshold makes at most ``⌊ε·n_target⌋`` of ``n_target`` fresh
    points miss, with probability at least ``1 - δ`` (training- and test-conditional, exact).

    Given the ``k``-th smallest of ``m`` exchangeable calibration scores, ``U = F(q̂)`` is
    ``Beta(k, m + 1 - k)`` and the number of misses among ``n_target`` fresh points is
    ``BetaBinomial(n_target, m + 1 - k, k)``. Returns ``m + 1`` where no ``k <= m`` suffices
    (full sets). Vectorised over ``m`` and ``n_target``.
    """
    eps = check_alpha(eps, "eps")
    delta = check_alpha(delta, "alpha")
    for name, v in (("m", m), ("n_target", n_target)):
        arr = np.asarray(v)
        if arr.dtype.kind not in "iu" or (arr < 0).any():
            raise ValueError(f"{name} must hold non-negative integers, got {v!r}")
    m_arr, n_arr = np.broadcast_arrays(
        np.asarray(m, dtype=np.int64), np.asarray(n_target, dtype=np.int64)
    )
    allowed = np.floor(eps * n_arr)
    lo = np.ones_like(m_arr)
    hi = m_arr + 1  # invariant: rank hi is acceptable (full set), lo - 1 is not tried yet
    ok_hi = hi.copy()
    # Bisection over k: the miss count decreases stochastically in k.
    for _ in range(64):
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) // 2
        a = np.maximum(m_arr + 1 - mid, 1)
        tail = _betabinom_sf(allowed, np.maximum(n_arr, 1), a, np.maximum(mid, 1))
        good = (tail <= delta) & (mid <= m_arr)
        hi = np.where(active & good, mid, hi)
        lo = np.where(active & ~good, mid + 1, lo)
        ok_hi = hi
    out = ok_hi.astype(np.int64)
    return int(out) if out.ndim == 0 else out


def _betabinom_sf(
    x: NDArray[Any], n: NDArray[Any], a: NDArray[Any], b: NDArray[Any]
) -> NDArray[np.float64]:
    """``P(X > x)`` for ``X ~ BetaBinomial(n, a, b)``, summing the pmf by its ratio recursion
    (vectorised; much faster than ``scipy.stats.betabinom.sf`` for many parameters at once)."""
    x, n, a, b = (np.asarray(v, dtype=np.float64) for v in np.broadcast_arrays(x, n, a, b))
    with np.errstate(all="ignore"):
        logp = special.betaln(a, n + b) - special.betaln(a, b)  # log pmf(0)
        cdf = np.exp(logp)
        top = int(np.max(x, initial=0))
        for j in range(top):
            logp = logp + np.log((n - j) * (j + a)) - np.log((j + 1.0) * (n - j - 1.0 + b))
            cdf = cdf + np.where(j + 1 <= x, np.exp(logp), 0.0)
    return np.clip(1.0 - cdf, 0.0, 1.0)


def conformal_threshold(scores: ArrayLike, alpha: float) -> float:
    """Split-CP threshold of 1-D calibration scores: the ``⌈(m + 1)(1 - α)⌉``-th smallest
    (:func:`icml26_shared.conformal.split_quantile`).

    Returns ``+inf`` (the full set) when that rank exceeds ``m`` — never a clipped finite value
    (the small-``m`` pitfall of MAPIE #974/#980). Any ``alpha`` outside (0, 1) raises.

    Args:
        scores: ``(m,)`` calibration scores ``s(X_i, Y_i)``.
        alpha: miscoverage level in (0, 1).

    Returns:
        The threshold ``q̂`` with ``P(s(X, Y) <= q̂) >= 1 - α`` for an exchangeable test point.

    >>> conformal_threshold([0.3, 0.1, 0.2, 0.5, 0.4, 0.9, 0.8, 0.7, 0.6], 0.1)
    0.9
    """
    s = check_finite_array(scores, "scores", ndim=1, allow_empty=True)
    return float(split_quantile(s, alpha))


@dataclass(frozen=True)
class SetSizeCurve:
    """The unlabeled set-size curve ``g(q) = (1/n) Σ_i size(T(x_i; q))`` (a step function).

    Built from unlabeled inputs only. ``size`` is ``|T|`` (number of labels, or interval width),
    or ``1{|T| != 1}`` for PAC labeling (the point needs an expert).

    Attributes:
        kind: ``"count"`` (per-label scores), ``"width"`` (intervals) or ``"not_singleton"``.
        values: sorted per-label scores (``count``), interval half-spreads (``width``) or a
            ``(n, K)`` sorted score matrix (``not_singleton``).
        n: number of unlabeled points.
        full_size: the size of the full set (``K``, ``inf`` for intervals, 1 for PAC).
    """

    kind: str
    values: NDArray[np.float64]
    n: int
    full_size: float
    base_width: float = 0.0

    @classmethod
    def from_scores(cls, scores: ArrayLike, *, size: str = "count") -> SetSizeCurve:
        """Curve of a per-label score matrix ``(n, K)``: ``T(x; q) = {y : s(x, y) <= q}``.

        Args:
            scores: ``(n, K)`` finite scores of unlabeled points.
            size: ``"count"`` for ``E|T|``, ``"not_singleton"`` for ``P(|T| != 1)``.
        """
        check_choice(size, "size", ("count", "not_singleton"))
        S = check_finite_array(scores, "scores", ndim=2)
        n, K = S.shape
        if size == "count":
            return cls("count", np.sort(S.ravel()), n, float(K))
        # |T(x; q)| = 1 exactly when the smallest score <= q < the second smallest.
        two = (
            np.partition(S, 1, axis=1)[:, :2] if K > 1 else np.c_[S[:, :1], np.full((n, 1), np.inf)]
        )
        return cls("not_singleton", np.sort(two, axis=0), n, 1.0)

    @classmethod
    def from_intervals(cls, lower: ArrayLike, upper: ArrayLike) -> SetSizeCurve:
        """Curve of base intervals ``[lo, hi]`` widened by the threshold: width ``max(hi - lo + 2q, 0)``.

        ``lo = hi = μ̂(x)`` gives absolute-residual scores; a quantile regressor's ``(lo, hi)``
        gives CQR scores ``max(lo - y, y - hi)``.
        """
        lo = check_finite_array(lower, "lower", ndim=1)
        hi = check_finite_array(upper, "upper", ndim=1)
        if lo.shape != hi.shape:
            raise ValueError(
                f"lower and upper must have the same shape, got {lo.shape} and {hi.shape}"
            )
        half = np.sort((hi - lo) / 2.0)
        return cls("width", half, lo.size, math.inf)

    def __call__(self, q: ArrayLike) -> NDArray[np.float64]:
        """Evaluate ``g`` at thresholds ``q`` (``+inf`` gives the full-set size)."""
        q_arr = np.asarray(q, dtype=np.float64)
        if self.kind == "count":
            out = np.searchsorted(self.values, q_arr, side="right") / self.n
        elif self.kind == "not_singleton":
            first = np.searchsorted(self.values[:, 0], q_arr, side="right")
            second = np.searchsorted(self.values[:, 1], q_arr, side="right")
            out = 1.0 - (first - second) / self.n
        else:
            # mean of max(2·half + 2q, 0) over points: points with half > -q contribute.
            out = self._mean_width(q_arr)
        out = np.asarray(out, dtype=np.float64)
        out = np.where(np.isposinf(q_arr), self.full_size, out)
        return out

    def _mean_width(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        h = self.values
        csum = np.concatenate([[0.0], np.cumsum(h)])
        q_flat = np.atleast_1d(q).ravel()
        idx = np.searchsorted(h, -q_flat, side="right")  # points with half <= -q are empty
        with np.errstate(invalid="ignore"):
            tot = 2.0 * ((csum[-1] - csum[idx]) + (self.n - idx) * q_flat) / self.n
        tot = np.where(np.isfinite(q_flat), tot, np.inf)
        return tot.reshape(np.shape(q))


@dataclass(frozen=True)
class IntervalScores:
    """Regression task for :class:`~costly_cp.LabelBudgetCalibrator`: base intervals widened by
    the threshold.

    ``predict_fn(inputs)`` returns ``(n,)`` point predictions ``μ̂`` (absolute-residual scores
    ``|y - μ̂(x)|``) or ``(n, 2)`` base intervals ``(lo, hi)`` (CQR scores
    ``max(lo - y, y - hi)``). The prediction set is ``[lo - q, hi + q]``; its size is its width.

    Args:
        predict_fn: maps an array of inputs to predictions as above.
    """

    predict_fn: Callable[[Any], ArrayLike]

    def __post_init__(self) -> None:
        if not callable(self.predict_fn):
            raise TypeError(f"predict_fn must be callable, got {type(self.predict_fn).__name__}")

    def bounds(self, inputs: Any) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Base interval ``(lo, hi)`` of each input."""
        pred = check_finite_array(self.predict_fn(inputs), "predict_fn(inputs)", ndim=(1, 2))
        if pred.ndim == 1:
            return pred, pred
        if pred.shape[1] != 2:
            raise ValueError(f"predict_fn(inputs) must have shape (n,) or (n, 2), got {pred.shape}")
        return pred[:, 0], pred[:, 1]

    def scores(self, inputs: Any, labels: ArrayLike) -> NDArray[np.float64]:
        """Nonconformity scores ``max(lo - y, y - hi)`` of labelled points."""
        lo, hi = self.bounds(inputs)
        y = check_finite_array(labels, "labels", ndim=1)
        return np.maximum(lo - y, y - hi)

    def curve(self, inputs: Any) -> SetSizeCurve:
        """The set-size (width) curve of the unlabeled inputs."""
        lo, hi = self.bounds(inputs)
        return SetSizeCurve.from_intervals(lo, hi)
