"""RSA-CP at the score level: the threshold, the inclusion rule and the classical baselines.

Inputs: ``m`` real calibration scores ``S``, ``N`` reference scores ``R`` (``N >> m``), a level
``alpha`` and a window level ``beta`` (``window``, default 0.4).

1. Alignment: ``Z = T(S)`` and ``Z_new = T(s_new)`` with ``T`` the 1-D OT map of
   :func:`rsa_cp.ot_alignment` (``T`` = identity when ``align=False``: SPI's fast form).
2. Pooled order statistics ``A = sort(Z ∪ R)``, one-based, ``A[0] = -inf``,
   ``A[m + N + 1] = +inf``; ``J = ceil((1 - alpha)(m + N + 1))``.
3. Rank of the candidate among the real points: ``k = 1 + #{i : Z_i <= Z_new}``.
4. ``b_-(k), b_+(k)``: the ``beta/2`` and ``1 - beta/2`` quantiles of
   ``BetaBinomial(N, k, m + 2 - k)`` (``rsa_cp._bounds.beta_binomial_window``).
5. ``q(k) = max(min(A[k + b_+], A[J]), A[k + b_-]) = A[clip(J, k + b_-, k + b_+)]``; the candidate
   is included iff ``Z_new <= q(k)``.

``q`` is non-decreasing in ``k`` (the Beta-Binomial law is stochastically increasing in ``k``), but
the included set need not be an interval: crossing a calibration point raises ``k`` and so the
threshold. Regression uses the largest included score. It is found exactly (no grid): on each
stretch ``[Z_(j), Z_(j+1))`` the rank is constant, so the largest included aligned score is
``q(k_j)`` for the highest stretch whose left end is included, and it is mapped back with
``T^{-1}``. With alignment on, ``T`` is constant above ``S_(m)``: if ``Z_(m) <= q(m + 1)`` every
large score is included and the threshold is ``+inf`` (never clipped to a finite value).

Finite-sample guarantee (alignment on, continuous real scores, any reference pool). ``Z`` are
block means of the sorted reference pool, so ``Z``, ``A``, ``q`` and the largest included aligned
score ``z*`` depend on ``R`` and ``m`` only, never on the real scores. With
``L = #{i : Z_(i) <= z*}`` the threshold satisfies ``S_(L) <= t < S_(L+1)``, hence, conditionally
on ``R`` and for every law of the real scores,

.. math::

    \\frac{L(R)}{m + 1} \\le P(S_{m+1} \\le t \\mid R) \\le \\frac{L(R) + 1}{m + 1},

(``t = +inf`` gives coverage 1). ``RSAThreshold.coverage_lower`` is ``L/(m+1)``;
:func:`rsa_cp.coverage_bounds` gives the worst case of ``L`` over all reference pools.

References:
    Bhagwat, Yang, Wang, Jiang, Kong. "Efficient Conformal Prediction in Small-Sample Regimes
    via Random Score Alignment" (RSA-CP), ICML 2026.
    Bashari, Lotan, Lee, Dobriban, Romano. "Synthetic-Powered Predictive Inference",
    arXiv:2505.13432 (the fast form used with ``align=False``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import (
    SeedLike,
    check_alpha,
    check_choice,
    check_finite_array,
    check_in_interval,
    rng_from_seed,
)
from icml26_shared.conformal import conformal_rank, split_quantile

from ._bounds import beta_binomial_window
from ._ot import AlignmentMap, ot_alignment

__all__ = [
    "GUARANTEES",
    "RSAThreshold",
    "randomized_split_threshold",
    "reference_threshold",
    "rsa_threshold",
    "spi_threshold",
    "split_threshold",
]

GUARANTEES = ("none", "marginal")


@dataclass(frozen=True)
class RSAThreshold:
    """The calibrated RSA-CP (or SPI) rule.

    Attributes:
        threshold: the largest included score on the original score scale (``+inf``: every
            score is included; ``-inf``: none is).
        aligned_threshold: the same in aligned coordinates, ``z*``.
        alpha: the requested miscoverage level.
        alpha_used: the pooled level actually used, ``1 - J/(m + N + 1)`` (differs from
            ``alpha`` in ``guarantee="marginal"`` mode; ``alpha`` after a split fall-back).
        window: the window level ``beta``.
        align: whether the OT alignment was applied (``False``: SPI's fast form).
        guarantee: ``"none"`` or ``"marginal"``.
        n_cal: ``m``.
        n_ref: ``N``.
        level_index: ``J``.
        certain_rank: ``L = #{i : Z_(i) <= z*}`` (``m + 1`` when the threshold is ``+inf``).
        coverage_lower: ``L/(m+1)``, the coverage guaranteed given the reference pool
            (``nan`` without alignment: no such guarantee holds there).
        coverage_upper: ``(L+1)/(m+1)`` capped at 1 (``nan`` without alignment).
        fell_back_to_split: ``True`` when ``guarantee="marginal"`` could not certify the target
            with a finite RSA threshold (the window is too narrow, or the certified rank jumps
            to ``m + 1``) and split conformal, which is finite and certified, was used instead.
        alignment: the map ``T`` (``None`` without alignment).
        rank_thresholds: ``q(k)`` for ``k = 1 .. m + 1`` in aligned coordinates.
        aligned_cal: sorted aligned calibration scores ``Z_(1..m)``.
    """

    threshold: float
    aligned_threshold: float
    alpha: float
    alpha_used: float
    window: float
    align: bool
    guarantee: str
    n_cal: int
    n_ref: int
    level_index: int
    certain_rank: int
    coverage_lower: float
    coverage_upper: float
    fell_back_to_split: bool
    alignment: AlignmentMap | None
    rank_thresholds: NDArray[np.float64]
    aligned_cal: NDArray[np.float64]

    @property
    def is_infinite(self) -> bool:
        """``True`` when every score is included (infinite interval / full label set)."""
        return bool(np.isposinf(self.threshold))

    def transform(self, scores: ArrayLike) -> NDArray[np.float64]:
        """Aligned coordinates ``T(s)`` of scores (identity without alignment)."""
        s = np.asarray(scores, dtype=np.float64)
        return s.copy() if self.alignment is None else self.alignment(s)

    def includes(self, scores: ArrayLike) -> NDArray[np.bool_]:
        """The exact RSA-CP decision for each candidate score: ``T(s) <= q(k(s))``.

        The included set need not be an interval; the estimators use ``s <= threshold``,
        which contains it and carries the proven bound. After a fall-back to split conformal
        (``guarantee="marginal"``) this is ``s <= t``.
        """
        s = np.asarray(scores, dtype=np.float64)
        if np.isnan(s).any():
            raise ValueError("scores must not contain nan")
        if self.fell_back_to_split:
            return s <= self.threshold
        z = self.transform(s)
        k = 1 + np.searchsorted(self.aligned_cal, z, side="right")
        return z <= self.rank_thresholds[k - 1]


def _check_scores(cal_scores: ArrayLike, ref_scores: ArrayLike) -> tuple[NDArray, NDArray]:
    s = check_finite_array(cal_scores, "cal_scores", ndim=1)
    r = check_finite_array(ref_scores, "ref_scores", ndim=1)
    if r.size < s.size:
        warnings.warn(
            f"ref_scores has {r.size} scores, fewer than the {s.size} calibration scores: "
            "borrowing strength from the reference pool is pointless there",
            UserWarning,
            stacklevel=3,
        )
    return s, r


def _not_text(value: object, name: str) -> None:
    """Refuse a number given as text (``float("0.4")`` would silently parse it)."""
    if isinstance(value, str | bytes | bool | np.bool_):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")


def _warn_tied_infinite(s: NDArray[np.float64], alpha: float) -> None:
    """Warn when tied calibration scores make the threshold ``+inf`` where split conformal is
    finite: the alignment collapses tied scores onto one knot, so every score above the top tie
    is included (the coverage bound assumes continuous scores)."""
    n_distinct = np.unique(s).size
    split = split_quantile(s, alpha)
    if n_distinct < s.size and np.isfinite(split):
        warnings.warn(
            f"cal_scores has only {n_distinct} distinct values among {s.size} (ties): the "
            "alignment maps tied scores to one point and the RSA threshold is +inf (full "
            f"intervals / label sets), while split conformal gives {split:.6g}. RSA-CP's "
            "guarantee assumes continuous scores: break the ties (e.g. a tiny random jitter) "
            "or use guarantee='marginal', which falls back to split conformal here",
            UserWarning,
            stacklevel=3,
        )
        return
    warnings.warn(
        f"the RSA threshold is +inf (full intervals / label sets): {s.size} calibration scores "
        f"are too few at alpha={alpha:g} for the reference scores to pull the rank into the "
        f"sample (split conformal gives {split:.6g}); label more calibration points or raise "
        "alpha",
        UserWarning,
        stacklevel=3,
    )


def _largest_included(
    z_sorted: NDArray[np.float64], q: NDArray[np.float64], aligned: bool
) -> float:
    """``sup`` of the included aligned scores (see the module docstring)."""
    m = z_sorted.size
    v = np.unique(z_sorted)
    k = 1 + np.searchsorted(z_sorted, v, side="right")  # rank on the stretch [v_j, v_{j+1})
    ok = q[k - 1] >= v
    if ok[-1]:  # the top stretch: k = m + 1
        return float("inf") if aligned else float(q[m])
    hits = np.flatnonzero(ok[:-1])
    if hits.size:
        return float(q[k[hits[-1]] - 1])
    return float("-inf") if aligned else float(q[0])


def _rule(
    z_sorted: NDArray[np.float64],
    pooled: NDArray[np.float64],
    lo: NDArray[np.int64],
    hi: NDArray[np.int64],
    J: int,
    aligned: bool,
) -> tuple[NDArray[np.float64], float, int]:
    m = z_sorted.size
    top = pooled.size - 1  # = m + N + 1
    k = np.arange(1, m + 2)
    idx = np.minimum(np.clip(J, k + lo, k + hi), top)
    q = pooled[idx]
    z_star = _largest_included(z_sorted, q, aligned)
    rank = m + 1 if np.isposinf(z_star) else int(np.searchsorted(z_sorted, z_star, side="right"))
    return q, z_star, rank


def rsa_threshold(
    cal_scores: ArrayLike,
    ref_scores: ArrayLike,
    alpha: float = 0.1,
    window: float = 0.4,
    *,
    align: bool = True,
    guarantee: str = "none",
) -> RSAThreshold:
    """Calibrate RSA-CP on real and reference scores.

    Args:
        cal_scores: ``(m,)`` real calibration scores (larger = less conforming).
        ref_scores: ``(N,)`` reference scores (synthetic data, a simulator, a related domain).
        alpha: miscoverage level in (0, 1).
        window: ``beta`` in (0, 1), the Beta-Binomial window level. Small ``beta`` gives a wide
            window (the pooled quantile ``A[J]`` is used more often); ``beta -> 1`` collapses the
            window to the Beta-Binomial median.
        align: apply the OT alignment (RSA-CP). ``False`` gives SPI's fast form on raw scores.
        guarantee: ``"none"`` (the method as published: coverage ``>= L/(m+1)``, see the
            module docstring) or ``"marginal"``: use the smallest pooled level index ``J`` whose
            proven bound ``L(R)/(m+1)`` reaches ``ceil((1 - alpha)(m + 1))/(m + 1) >= 1 - alpha``;
            if no ``J`` does with a finite threshold, fall back to split conformal. The result
            is never narrower than split conformal (see :mod:`rsa_cp._bounds`). Needs ``align``.

    Returns:
        The :class:`RSAThreshold`; ``.threshold`` is the largest included score.

    Examples:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> rule = rsa_threshold(rng.lognormal(size=20), rng.lognormal(size=1000), alpha=0.05)
        >>> bool(np.isfinite(rule.threshold)), round(rule.coverage_lower, 4)
        (True, 0.9048)
    """
    _not_text(alpha, "alpha")
    _not_text(window, "window")
    alpha = check_alpha(alpha)
    window = check_in_interval(window, "window", 0, 1)
    if not isinstance(align, bool | np.bool_):
        raise TypeError(f"align must be True or False, got {align!r}")
    check_choice(guarantee, "guarantee", GUARANTEES)
    if guarantee == "marginal" and not align:
        raise ValueError("guarantee='marginal' needs align=True (the bound is proven for RSA-CP)")
    s, r = _check_scores(cal_scores, ref_scores)
    m, n = s.size, r.size
    r_sorted = np.sort(r)
    if align:
        tmap = ot_alignment(s, r_sorted)
        z_sorted = tmap.aligned
    else:
        tmap = None
        z_sorted = np.sort(s)
    pooled = np.concatenate([[-np.inf], np.sort(np.concatenate([z_sorted, r_sorted])), [np.inf]])
    lo, hi = beta_binomial_window(n, m, window)
    J = conformal_rank(m + n, alpha)
    fell_back = False
    if guarantee == "marginal":
        J, fell_back = _marginal_index(z_sorted, pooled, lo, hi, conformal_rank(m, alpha))
    q, z_star, rank = _rule(z_sorted, pooled, lo, hi, J, align)
    if fell_back:
        target = conformal_rank(m, alpha)
        rank = target
        t = float("inf") if target > m else float(np.sort(s)[target - 1])
        z_star = float("nan")
    elif align:
        assert tmap is not None
        t = tmap.inverse_upper(z_star) if np.isfinite(z_star) else z_star
    else:
        t = z_star
    if np.isposinf(t) and not fell_back:
        _warn_tied_infinite(s, alpha)
    if align:
        lower = min(rank, m + 1) / (m + 1)
        upper = 1.0 if rank >= m else (rank + 1) / (m + 1)
    else:
        lower = upper = float("nan")
    return RSAThreshold(
        threshold=float(t),
        aligned_threshold=float(z_star),
        alpha=alpha,
        alpha_used=alpha if fell_back else 1.0 - J / (m + n + 1),
        window=window,
        align=align,
        guarantee=guarantee,
        n_cal=m,
        n_ref=n,
        level_index=int(J),
        certain_rank=int(rank),
        coverage_lower=float(lower),
        coverage_upper=float(upper),
        fell_back_to_split=fell_back,
        alignment=tmap,
        rank_thresholds=q,
        aligned_cal=z_sorted,
    )


def _marginal_index(
    z_sorted: NDArray[np.float64],
    pooled: NDArray[np.float64],
    lo: NDArray[np.int64],
    hi: NDArray[np.int64],
    target: int,
) -> tuple[int, bool]:
    """Smallest ``J`` with ``L(J) >= target`` (``L`` is non-decreasing in ``J``)."""
    top = pooled.size - 1
    if _rule(z_sorted, pooled, lo, hi, top, True)[2] < target:
        return top, True
    a, b = 1, top  # invariant: L(b) >= target
    while a < b:
        mid = (a + b) // 2
        if _rule(z_sorted, pooled, lo, hi, mid, True)[2] >= target:
            b = mid
        else:
            a = mid + 1
    m = z_sorted.size
    if target <= m and _rule(z_sorted, pooled, lo, hi, b, True)[2] > m:
        # L jumps from below the target straight to m + 1 (an infinite threshold) while split
        # conformal is finite and certified: use split conformal.
        return b, True
    return b, False


def spi_threshold(
    cal_scores: ArrayLike, ref_scores: ArrayLike, alpha: float = 0.1, window: float = 0.4
) -> RSAThreshold:
    """SPI's fast form: :func:`rsa_threshold` with ``align=False`` (``Z = S``).

    Without alignment the coverage depends on how well the reference law matches the real one:
    no reference-free bound holds (``coverage_lower`` is ``nan``).
    """
    return rsa_threshold(cal_scores, ref_scores, alpha, window, align=False)


def split_threshold(cal_scores: ArrayLike, alpha: float = 0.1) -> float:
    """Split conformal: ``S_(ceil((1-alpha)(m+1)))``, or ``+inf`` when that rank exceeds ``m``.

    The level is never clipped to a finite order statistic (MAPIE issues #974/#980): with too
    few calibration points the honest answer is the infinite interval / full set.
    """
    alpha = check_alpha(alpha)
    return split_quantile(check_finite_array(cal_scores, "cal_scores", ndim=1), alpha)


def randomized_split_threshold(
    cal_scores: ArrayLike,
    alpha: float = 0.1,
    seed: SeedLike = None,
) -> float:
    """Randomised split conformal with coverage exactly ``1 - alpha`` (continuous scores).

    With ``(1 - alpha)(m + 1) = j + f`` (``0 <= f < 1``) it returns ``S_(j+1)`` with probability
    ``f`` and ``S_(j)`` otherwise (``S_(0) = -inf``, ``S_(m+1) = +inf``), so the coverage is
    ``((1 - f) j + f (j + 1))/(m + 1) = 1 - alpha``.
    """
    alpha = check_alpha(alpha)
    s = np.sort(check_finite_array(cal_scores, "cal_scores", ndim=1))
    rng = rng_from_seed(seed)
    x = (1 - alpha) * (s.size + 1)
    j = int(np.floor(x + 1e-12))
    f = max(0.0, x - j)
    j = j + 1 if rng.random() < f else j
    padded = np.concatenate([[-np.inf], s, [np.inf]])
    return float(padded[j])


def reference_threshold(ref_scores: ArrayLike, alpha: float = 0.1) -> float:
    """Reference-only ("synthetic-only") calibration: split conformal on the reference pool."""
    return split_threshold(check_finite_array(ref_scores, "ref_scores", ndim=1), alpha)
