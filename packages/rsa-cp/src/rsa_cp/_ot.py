"""One-dimensional optimal-transport alignment of real scores onto a reference pool.

The monotone (north-west-corner) coupling between two empirical laws on the line is the optimal
transport plan for every convex cost, so the alignment map needs no solver: it is read off the
quantile functions.

Let ``S_(1) <= ... <= S_(m)`` be the sorted real calibration scores (mass ``1/m`` each) and
``R_(1) <= ... <= R_(N)`` the sorted reference scores (mass ``1/N`` each). The coupling ``P``
sends the mass of ``S_(i)``, which occupies the quantile interval ``((i-1)/m, i/m]``, to the
reference points whose quantile intervals ``((j-1)/N, j/N]`` overlap it. The barycentric map is

.. math::

    T(S_{(i)}) = \\frac{\\sum_j P_{ij} R_{(j)}}{\\sum_j P_{ij}}
               = m \\int_{(i-1)/m}^{i/m} Q_R(u)\\, du,

the mean of the reference quantile function ``Q_R`` over the block of ``S_(i)``. Block means of a
non-decreasing function are non-decreasing, so ``T`` is monotone; a cumulative maximum removes
floating-point wiggles. ``T`` is extended to new scores by linear interpolation between the
knots ``(S_(i), T(S_(i)))`` and held constant outside ``[S_(1), S_(m)]``. Tied real scores form one
atom, mapped to the mean of their blocks.

References:
    Bhagwat, Yang, Wang, Jiang, Kong. "Efficient Conformal Prediction in Small-Sample Regimes
    via Random Score Alignment" (RSA-CP), ICML 2026, Section 3 (alignment step).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_finite_array, check_positive_int

__all__ = ["AlignmentMap", "ot_alignment", "wasserstein_distance"]


class AlignmentMap(NamedTuple):
    """The monotone OT map ``T`` as knots of a piecewise-linear function.

    Attributes:
        knots_x: the distinct sorted real scores (length ``d <= m``).
        knots_z: ``T`` at those scores (non-decreasing, same length).
        aligned: ``T(S)`` for every sorted real score ``S_(1..m)`` (ties repeated).
    """

    knots_x: NDArray[np.float64]
    knots_z: NDArray[np.float64]
    aligned: NDArray[np.float64]

    def __call__(self, scores: ArrayLike) -> NDArray[np.float64]:
        """Apply ``T``: linear interpolation between knots, constant outside their range."""
        s = np.asarray(scores, dtype=np.float64)
        if self.knots_x.size == 1:
            return np.full_like(s, self.knots_z[0])
        return np.interp(s, self.knots_x, self.knots_z)

    def inverse_upper(self, z: float) -> float:
        """``sup {s : T(s) <= z}``: the largest score whose aligned value is at most ``z``.

        Returns ``+inf`` when ``z >= T(S_(m))`` (``T`` is constant above the largest knot) and
        ``-inf`` when ``z < T(S_(1))``.
        """
        w = self.knots_z
        if z >= w[-1]:
            return float("inf")
        if z < w[0]:
            return float("-inf")
        i = int(np.searchsorted(w, z, side="right")) - 1  # last knot with w_i <= z
        x0, x1, z0, z1 = self.knots_x[i], self.knots_x[i + 1], w[i], w[i + 1]
        return float(x0 + (z - z0) / (z1 - z0) * (x1 - x0))


def _block_means(sorted_ref: NDArray[np.float64], m: int) -> NDArray[np.float64]:
    """Mean of the reference quantile function over the ``m`` blocks ``((i-1)/m, i/m]``."""
    n = sorted_ref.size
    cum = np.concatenate([[0.0], np.cumsum(sorted_ref)])
    # F(p) = sum of the first p reference points (fractional p interpolates linearly):
    pos = np.arange(m + 1, dtype=np.float64) * (n / m)
    lo = np.minimum(np.floor(pos).astype(np.int64), n)
    frac = pos - lo
    nxt = sorted_ref[np.minimum(lo, n - 1)]
    integral = cum[lo] + frac * nxt
    return np.diff(integral) * (m / n)


def ot_alignment(cal_scores: ArrayLike, ref_scores: ArrayLike) -> AlignmentMap:
    """Build the 1-D optimal-transport alignment map from real scores onto reference scores.

    Args:
        cal_scores: ``(m,)`` real calibration scores.
        ref_scores: ``(N,)`` reference scores.

    Returns:
        The :class:`AlignmentMap` ``T`` (call it on new scores).

    Examples:
        >>> import numpy as np
        >>> s = np.array([3.0, 1.0, 2.0])
        >>> t = ot_alignment(s, 2 * s + 1)   # an affine reference gives an affine map
        >>> t(np.array([1.5, 2.5])).round(6).tolist()
        [4.0, 6.0]
    """
    s = np.sort(check_finite_array(cal_scores, "cal_scores", ndim=1))
    r = np.sort(check_finite_array(ref_scores, "ref_scores", ndim=1))
    z = np.maximum.accumulate(_block_means(r, s.size))
    # one atom per distinct real score: ties map to the mean of their blocks.
    knots_x, first, counts = np.unique(s, return_index=True, return_counts=True)
    knots_z = np.add.reduceat(z, first) / counts
    knots_z = np.maximum.accumulate(knots_z)
    aligned = np.repeat(knots_z, counts)
    return AlignmentMap(knots_x=knots_x, knots_z=knots_z, aligned=aligned)


def wasserstein_distance(a: ArrayLike, b: ArrayLike, p: int = 1) -> float:
    """Wasserstein-``p`` distance between two empirical laws on the line.

    Computed exactly from the quantile functions: ``W_p^p = int_0^1 |Q_a(u) - Q_b(u)|^p du``,
    with both step functions evaluated on the union of their breakpoints.
    """
    x = np.sort(check_finite_array(a, "a", ndim=1))
    y = np.sort(check_finite_array(b, "b", ndim=1))
    p = check_positive_int(p, "p")
    grid = np.union1d(np.arange(1, x.size + 1) / x.size, np.arange(1, y.size + 1) / y.size)
    widths = np.diff(np.concatenate([[0.0], grid]))
    mids = grid - widths / 2
    qx = x[np.minimum((mids * x.size).astype(np.int64), x.size - 1)]
    qy = y[np.minimum((mids * y.size).astype(np.int64), y.size - 1)]
    return float(np.sum(widths * np.abs(qx - qy) ** p) ** (1.0 / p))
