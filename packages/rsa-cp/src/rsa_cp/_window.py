"""The Beta-Binomial rank window and the pooled level index.

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

References:
    Bashari, Lotan, Lee, Dobriban, Romano. "Synthetic-Powered Predictive Inference",
    arXiv:2505.13432 (the window construction, Step 1).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray
from scipy import special

__all__ = ["beta_binomial_window", "level_index"]


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


def level_index(alpha: float, n: int) -> int:
    """``ceil((1 - alpha)(n + 1))`` computed robustly (``n`` points, one-based order statistic).

    A relative tolerance of ``1e-10`` keeps exact products such as ``0.95 * 20`` from rounding up.
    """
    x = (1.0 - alpha) * (n + 1)
    return math.ceil(x - 1e-10 * max(1.0, x))
