"""The Beta-Binomial rank window and the finite-sample coverage bound of RSA-CP.

The window.

If the ``m + 1`` real scores (calibration plus test) and the ``N`` reference scores were all
i.i.d. from one continuous law, then, given that the test score is the ``k``-th smallest of the
``m + 1`` real scores, its quantile ``U`` under that law is ``Beta(k, m + 2 - k)`` and the number
``B`` of reference scores below it is ``Binomial(N, U)``, i.e.

.. math::

    B \\mid k \\sim \\mathrm{BetaBinomial}(N, k, m + 2 - k).

The window ``[b_-(k), b_+(k)]`` holds the ``beta/2`` and ``1 - beta/2`` quantiles of that law: under
a same-law reference the test's reference count falls inside it with probability ``>= 1 - beta``.
The window depends on ``(N, m, beta)`` only, never on the data, so it is cached. The pmf is
built by its ratio recurrence (same values as ``scipy.stats.betabinom.pmf``, which the tests
use as the independent check of the quantiles).

The coverage bound, for every reference pool.

Setting: ``m`` real calibration scores and one test score, exchangeable with a continuous law
(no ties); ``N > m`` reference scores with distinct values, otherwise arbitrary (any law, any
dependence on anything but the real scores). Alignment on.

Derivation.

1. The aligned calibration scores are block means of the sorted pool: ``Z_(j)`` is the mean of
   the reference quantile function over ``((j-1)/m, j/m]``, whatever the real scores are. So
   ``Z``, the pooled statistics ``A``, the rank thresholds ``q(k)`` and the largest included
   aligned score ``z*`` are functions of ``R`` alone.
2. With ``L = #{j : Z_(j) <= z*}``, the threshold on the score scale, ``t = T^{-1}(z*)``,
   satisfies ``S_(L) <= t < S_(L+1)`` (``t = +inf`` when ``L = m + 1``). The test's rank among the
   ``m + 1`` real scores is uniform and independent of ``R``, hence

   ``L(R)/(m + 1) <= P(S_{m+1} <= t | R) <= (L(R) + 1)/(m + 1)``.

3. ``L(R)`` in closed form. Block ``j`` spans the reference points of indices
   ``first_j = floor((j-1)N/m) + 1`` to ``last_j = ceil(jN/m)``; with ``N > m`` it holds at least
   two of them with positive weight, so ``c_j = #{R <= Z_(j)}`` lies in ``[first_j, last_j - 1]``
   and ``Z_(j)`` sits at pooled position ``p_j = j + c_j``. Scanning the rank stretches from the
   top, ``L = max{j : idx(j + 1) >= p_j}`` where
   ``idx(k) = clip(J, k + b_-(k), k + b_+(k))`` and ``J = ceil((1 - alpha)(m + N + 1))``
   (``L = m`` in this formula means the top stretch is included: ``t = +inf``, coverage 1).
   The condition only gets harder as ``c_j`` grows, so the worst reference pool puts every
   ``c_j`` at ``last_j - 1``:

   ``coverage >= L_min/(m + 1)``, ``L_min = max{j : idx(j+1) - j >= ceil(jN/m) - 1}``,

   and the best pool gives ``coverage <= (L_max + 1)/(m + 1)`` with
   ``L_max = max{j : idx(j+1) - j >= floor((j-1)N/m) + 1}``.

The slack ``1 - alpha - L_min/(m+1)`` depends on ``(m, N, alpha, beta)`` only: this is the price
RSA-CP pays, by design, for its narrower intervals. Note that a certificate of the form
``L/(m+1) >= 1 - alpha`` forces ``t >= S_(ceil((1-alpha)(m+1)))``, the split-conformal threshold:
no rule certified for every real-score law can be narrower than split conformal, which is why
``guarantee="marginal"`` is reported against split conformal.

References:
    Bhagwat, Yang, Wang, Jiang, Kong. "Efficient Conformal Prediction in Small-Sample Regimes
    via Random Score Alignment" (RSA-CP), ICML 2026 (coverage analysis; this bound is our own
    derivation for the exact procedure implemented here).
    Bashari, Lotan, Lee, Dobriban, Romano. "Synthetic-Powered Predictive Inference",
    arXiv:2505.13432 (the window construction, Step 1).
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import special

from icml26_shared.checks import check_alpha, check_in_interval, check_positive_int
from icml26_shared.conformal import conformal_rank

__all__ = ["CoverageBounds", "beta_binomial_window", "coverage_bounds"]


@lru_cache(maxsize=256)
def _window_cached(n_ref: int, n_cal: int, window: float) -> tuple[NDArray[np.int64], ...]:
    # log pmf by the ratio recurrence of BetaBinomial(n, a, b):
    #   p(x + 1)/p(x) = (n - x)(x + a) / ((x + 1)(n - x - 1 + b)),  p(0) = B(a, n + b)/B(a, b).
    n = n_ref
    ks = np.arange(1, n_cal + 2, dtype=np.float64)
    x = np.arange(n, dtype=np.float64)[None, :]
    eps = 1e-12
    lo = np.empty(ks.size, dtype=np.int64)
    hi = np.empty(ks.size, dtype=np.int64)
    step = max(1, 2_000_000 // (n + 1))  # bound the memory of the pmf table
    for start in range(0, ks.size, step):
        a = ks[start : start + step, None]
        b = n_cal + 2 - a
        log0 = special.betaln(a, n + b) - special.betaln(a, b)
        steps = np.log((n - x) * (x + a)) - np.log((x + 1) * (n - x - 1 + b))
        logpmf = np.concatenate([log0, log0 + np.cumsum(steps, axis=1)], axis=1)
        cdf = np.cumsum(np.exp(logpmf), axis=1)
        cdf /= cdf[:, -1:]  # remove the rounding drift of the cumulative sum
        lo[start : start + step] = (cdf < window / 2 - eps).sum(axis=1)  # min b: CDF(b) >= q
        hi[start : start + step] = (cdf < 1 - window / 2 - eps).sum(axis=1)
    lo = np.minimum(lo, n_ref).astype(np.int64)
    hi = np.minimum(hi, n_ref).astype(np.int64)
    lo.setflags(write=False)
    hi.setflags(write=False)
    return lo, hi


def beta_binomial_window(
    n_ref: int, n_cal: int, window: float
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Quantiles ``b_-(k), b_+(k)`` of ``BetaBinomial(N, k, m + 2 - k)`` for ``k = 1 .. m + 1``.

    Args:
        n_ref: ``N``, the number of reference scores.
        n_cal: ``m``, the number of real calibration scores.
        window: ``beta``; the lower and upper quantile levels are ``beta/2`` and ``1 - beta/2``.

    Returns:
        Two read-only integer arrays of length ``m + 1`` (entry ``k - 1`` is for rank ``k``),
        with the ``scipy.stats`` ``ppf`` convention (smallest ``b`` with ``CDF(b) >= level``).
    """
    return _window_cached(int(n_ref), int(n_cal), float(window))


class CoverageBounds(NamedTuple):
    """Coverage bounds of RSA-CP valid for every reference pool (see the module docstring).

    Attributes:
        lower: ``L_min/(m + 1)`` (1 when the worst pool still gives an infinite threshold).
        upper: ``(L_max + 1)/(m + 1)`` capped at 1.
        rank_min: ``L_min``.
        rank_max: ``L_max``.
        slack: ``max(0, 1 - alpha - lower)``, the proven shortfall below the nominal level.
    """

    lower: float
    upper: float
    rank_min: int
    rank_max: int
    slack: float


def _certain_rank(idx: np.ndarray, c: np.ndarray, m: int) -> int:
    j = np.arange(1, m + 1)
    ok = idx[1:] >= j + c  # stretch j (rank k = j + 1) has its left end Z_(j) included
    if ok[-1]:
        return m + 1
    hits = np.flatnonzero(ok)
    return int(j[hits[-1]]) if hits.size else 0


def coverage_bounds(
    n_cal: int, n_ref: int, alpha: float = 0.1, window: float = 0.4
) -> CoverageBounds:
    """Worst- and best-case coverage of RSA-CP over all reference pools of size ``N``.

    Args:
        n_cal: ``m``, the number of real calibration scores.
        n_ref: ``N``, the number of reference scores (the bound needs ``N > m``).
        alpha: miscoverage level.
        window: the window level ``beta``.

    Returns:
        :class:`CoverageBounds`: ``lower <= P(covered) <= upper`` for every continuous real-score
        law and every reference pool with distinct values.

    Examples:
        >>> b = coverage_bounds(20, 1000, alpha=0.05, window=0.4)
        >>> round(b.lower, 4), b.rank_min
        (0.9048, 19)
    """
    m = check_positive_int(n_cal, "n_cal")
    n = check_positive_int(n_ref, "n_ref")
    if n <= m:
        raise ValueError(f"n_ref must be > n_cal for the bound, got n_ref={n} and n_cal={m}")
    alpha = check_alpha(alpha)
    window = check_in_interval(window, "window", 0, 1)
    lo, hi = beta_binomial_window(n, m, window)
    J = conformal_rank(m + n, alpha)
    k = np.arange(1, m + 2)
    idx = np.minimum(np.clip(J, k + lo, k + hi), m + n + 1)
    j = np.arange(1, m + 1, dtype=np.int64)
    c_max = -((-j * n) // m) - 1
    c_min = ((j - 1) * n) // m + 1
    r_min = _certain_rank(idx, c_max, m)
    r_max = _certain_rank(idx, c_min, m)
    lower = 1.0 if r_min > m else r_min / (m + 1)
    upper = 1.0 if r_max >= m else (r_max + 1) / (m + 1)
    return CoverageBounds(lower, upper, r_min, r_max, max(0.0, 1 - alpha - lower))
