r"""The estimated cost curve of a calibration size and the plug-in stopping decision.

Cost of calibrating on ``m`` labels and then predicting ``N`` future points:

.. math::

    C(m) = m + N\,\mathbb{E}|T_m(X)|, \qquad
    \mathbb{E}|T_m(X)| = \int_0^1 h(u)\,\mathrm{Beta}(u; k_m, m + 1 - k_m)\,du,

with ``h(u) = g(F^{-1}(u))``: ``g`` the unlabeled set-size curve, ``F`` the law of calibration
scores and ``k_m`` the split-CP rank (the threshold is ``F^{-1}(U_{(k_m)})``). The cost an
infinite calibration set would pay is ``N·h(1 - α)``; the *excess* ``C(m) - N·h(1 - α)`` is the
part a calibration size controls.

Estimator (reconstruction). ``h`` is estimated near ``u0 = 1 - α`` by a weighted local
quadratic fit ``h(u) ≈ a0 + a1 (u - u0) + a2 (u - u0)²`` of the points ``(j / (n + 1),
g(s_(j)))`` with a Gaussian kernel of spread ``√(u0 (1 - u0) / (κ √n))``, i.e. shrinking like
``n^{-1/4}`` (the empirical quantile process is too rough to difference directly: its increments
over the ``n^{-1/2}`` width of the Beta law are ``n^{-3/4}``, larger than the ``c/n`` signal).
Shape constraints ``a1 >= 0`` (a set-size curve is nondecreasing) and ``a2 >= 0`` (a spurious
concave fit would stop the rule at once) only ever ask for more labels. Integrating the quadratic
against the Beta law is exact:

.. math::

    \widehat{\mathbb{E}|T_m|} = a_0 + a_1 d_m + a_2 (v_m + d_m^2), \quad
    d_m = \frac{k_m}{m + 1} - u_0, \quad v_m = \frac{k_m (m + 1 - k_m)}{(m + 1)^2 (m + 2)},

so ``E|T_m| ≈ h(u0) + c/m`` with ``c ≈ a1 (k_m - (m+1)u0) + a2 α(1-α)`` and the optimum is near
``m* = √(N c)``. The decision is exact on the integer grid (the ceiling in ``k_m`` makes the
curve a saw-tooth, and the rule prefers the low teeth).

References:
    Ilyas, Ko, Tang, Wu, Zhang (2026), "Provably Label-Efficient Conformal Prediction", ICML 2026
    (method reconstructed from the abstract; no text or code public).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_alpha, check_finite_array, check_positive, check_positive_int

from ._scores import SetSizeCurve, conformal_rank, pac_rank

__all__ = ["CostModel", "StopDecision", "fit_cost_model", "optimal_size", "should_stop"]

_DENSE_SEARCH = 2_000


@dataclass(frozen=True)
class CostModel:
    """Estimated ``C(m) = sunk + m + N_m · Ê|T_m|`` for candidate calibration sizes ``m``.

    Attributes:
        u0: the limiting quantile level (``1 - α``, or ``1 - ε`` for PAC labeling).
        a0: ``ĥ(u0)``, the estimated infinite-label set size ``E|T_∞|``.
        a1: ``ĥ'(u0)``.
        a2: ``ĥ''(u0) / 2``.
        n_future: ``N``, future predictions (PAC: the pool size).
        full_size: the size of the full set (``K``, ``inf``, or 1 for PAC).
        alpha: miscoverage level of the ranks (``ε`` for PAC).
        pac_delta: PAC failure probability, or ``None`` for the marginal split-CP rank.
        sunk: labels already bought that do not calibrate (the pilot of the valid variant).
        n_fit: labels the model was fitted on.
    """

    u0: float
    a0: float
    a1: float
    a2: float
    n_future: float
    full_size: float
    alpha: float
    pac_delta: float | None = None
    sunk: int = 0
    n_fit: int = 0

    def ranks(self, m: ArrayLike) -> NDArray[np.int64]:
        """Rank ``k_m`` used at calibration size ``m`` (``m + 1`` or more means the full set)."""
        m_arr = np.asarray(m, dtype=np.int64)
        if self.pac_delta is None:
            return np.asarray(conformal_rank(m_arr, self.alpha), dtype=np.int64)
        table = _pac_table(self.alpha, self.pac_delta, int(self.n_future) - self.sunk)
        inside = (m_arr >= 0) & (m_arr < table.size)
        out = table[np.clip(m_arr, 0, table.size - 1)]
        if not np.all(inside):  # beyond the pool: no fresh point left to label
            out = np.where(inside, out, m_arr + 1)
        return out

    def future_count(self, m: ArrayLike) -> NDArray[np.float64]:
        """Points still to be predicted (PAC: the unlabelled rest of the pool)."""
        m_arr = np.asarray(m, dtype=np.float64)
        if self.pac_delta is None:
            return np.full_like(m_arr, self.n_future)
        return np.maximum(self.n_future - self.sunk - m_arr, 0.0)

    def expected_size(self, m: ArrayLike) -> NDArray[np.float64]:
        """``Ê|T_m|``: the quadratic ``ĥ`` integrated against ``Beta(k_m, m + 1 - k_m)``."""
        m_arr = np.asarray(m, dtype=np.float64)
        k = self.ranks(m_arr).astype(np.float64)
        finite = k <= m_arr
        mean = k / (m_arr + 1.0)
        var = k * (m_arr + 1.0 - k) / ((m_arr + 1.0) ** 2 * (m_arr + 2.0))
        d = mean - self.u0
        est = self.a0 + self.a1 * d + self.a2 * (var + d * d)
        upper = self.full_size if math.isfinite(self.full_size) else np.inf
        est = np.clip(est, 0.0, upper)
        return np.where(finite, est, self.full_size)

    def cost(self, m: ArrayLike) -> NDArray[np.float64]:
        """Estimated total cost ``sunk + m + N_m · Ê|T_m|`` (labels + future set size)."""
        m_arr = np.asarray(m, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            return self.sunk + m_arr + self.future_count(m_arr) * self.expected_size(m_arr)

    @property
    def infinite_label_cost(self) -> float:
        """``N · Ê|T_∞|``, the cost no calibration size can remove."""
        return float(self.n_future * self.a0)


@dataclass(frozen=True)
class StopDecision:
    """Output of :func:`should_stop`.

    Attributes:
        stop: whether the current number of labels is the estimated best size.
        target: the estimated cost-minimising calibration size (``>= len(labeled)``).
        model: the fitted :class:`CostModel`.
    """

    stop: bool
    target: int
    model: CostModel


def fit_cost_model(
    sorted_scores: ArrayLike,
    curve: SetSizeCurve,
    *,
    u0: float,
    n_future: float,
    alpha: float,
    pac_delta: float | None = None,
    sunk: int = 0,
    bandwidth: float = 1.5,
) -> CostModel:
    """Fit the local quadratic ``ĥ`` around ``u0`` from sorted calibration scores.

    Args:
        sorted_scores: ``(n,)`` calibration scores in increasing order.
        curve: the unlabeled set-size curve ``g``.
        u0: quantile level the ranks converge to.
        n_future: ``N``.
        alpha: miscoverage (``ε`` for PAC).
        pac_delta: PAC failure probability, or ``None``.
        sunk: labels already spent outside the calibration set.
        bandwidth: ``κ`` in the kernel's effective size ``n_e = κ √n``.

    Returns:
        The fitted :class:`CostModel`.
    """
    s = np.asarray(sorted_scores, dtype=np.float64)
    n = s.size
    if n < 3:
        raise ValueError(f"sorted_scores must hold at least 3 scores to fit a curve, got {n}")
    # Gaussian kernel in u with the spread of U_(k) at an effective size n_e = κ √n: it shrinks
    # like n^{-1/4}, more slowly than the n^{-1/2} spread of the laws being integrated.
    n_e = bandwidth * math.sqrt(n)
    sd = math.sqrt(u0 * (1.0 - u0) / n_e)
    lo = max(0, math.floor((u0 - 4.0 * sd) * (n + 1)) - 1)
    hi = min(n, math.ceil((u0 + 4.0 * sd) * (n + 1)) + 1)
    if hi - lo < 3:
        lo, hi = max(0, min(lo, n - 3)), max(hi, min(n, 3))
    u = np.arange(lo + 1, hi + 1) / (n + 1.0)
    y = curve(s[lo:hi])
    w = np.exp(-0.5 * ((u - u0) / sd) ** 2)
    keep = np.isfinite(y) & (w > 0)
    x, y, w = u[keep] - u0, y[keep], np.sqrt(w[keep])
    if x.size >= 3 and np.ptp(x) > 0:
        design = np.stack([np.ones_like(x), x, x * x], axis=1) * w[:, None]
        coef, *_ = np.linalg.lstsq(design, y * w, rcond=None)
        a0, a1, a2 = (float(c) for c in coef)
    else:  # degenerate window: a flat curve at the nearest value
        a0, a1, a2 = float(y.mean()) if y.size else float(curve(s[-1:])[0]), 0.0, 0.0
    # Shape constraints. A count or width curve g is nondecreasing, so h is: a1 >= 0. The
    # curvature is the noisiest coefficient, and a spurious concave fit (a2 < 0) would make the
    # rule stop at once; a2 is floored at 0, which only ever asks for more labels.
    if getattr(curve, "kind", "count") != "not_singleton":
        a1 = max(a1, 0.0)
    a2 = max(a2, 0.0)
    return CostModel(
        u0=u0,
        a0=a0,
        a1=a1,
        a2=a2,
        n_future=float(n_future),
        full_size=curve.full_size,
        alpha=alpha,
        pac_delta=pac_delta,
        sunk=sunk,
        n_fit=n,
    )


def optimal_size(model: CostModel, m_lo: int, m_hi: int) -> int:
    """Integer ``m ∈ [m_lo, m_hi]`` minimising ``model.cost(m)`` (the smallest on ties).

    Exact on all integers when the range is short; otherwise a geometric grid locates the basin
    and the integers around its minimum are searched exactly.
    """
    if not isinstance(model, CostModel):
        raise TypeError(f"model must be a CostModel, got {type(model).__name__}")
    m_lo = check_positive_int(m_lo, "m_lo", minimum=0)
    m_hi = check_positive_int(m_hi, "m_hi", minimum=0)
    if m_hi < m_lo:
        raise ValueError(f"m_hi must be >= m_lo, got m_hi={m_hi} < m_lo={m_lo}")
    return _optimal_size(model, m_lo, m_hi)


def _optimal_size(model: CostModel, m_lo: int, m_hi: int) -> int:
    """:func:`optimal_size` for internal callers (an empty range means ``m_lo``)."""
    m_lo, m_hi = int(m_lo), int(max(m_hi, m_lo))
    if m_hi - m_lo <= _DENSE_SEARCH:
        ms = np.arange(m_lo, m_hi + 1)
        return int(ms[np.argmin(model.cost(ms))])
    ratio = (m_hi / max(m_lo, 1)) ** (1.0 / 200)
    grid = np.maximum.accumulate(np.round(max(m_lo, 1) * ratio ** np.arange(201)).astype(np.int64))
    grid = np.clip(grid, m_lo, m_hi)
    i = int(np.argmin(model.cost(grid)))
    left = int(grid[max(i - 1, 0)])
    right = int(grid[min(i + 1, grid.size - 1)])
    if right - left > _DENSE_SEARCH:
        ms = np.linspace(left, right, _DENSE_SEARCH).astype(np.int64)
    else:
        ms = np.arange(left, right + 1)
    return int(ms[np.argmin(model.cost(ms))])


@functools.lru_cache(maxsize=64)
def _pac_table(eps: float, delta: float, total: int) -> NDArray[np.int64]:
    """PAC ranks for every calibration size ``m < total`` (fresh points ``total - m``)."""
    ms = np.arange(max(total, 1))
    table = np.asarray(pac_rank(ms, eps, delta, np.maximum(total - ms, 1)), dtype=np.int64)
    table.setflags(write=False)
    return table


def min_finite_size(alpha: float) -> int:
    """Smallest ``m`` with a finite split-CP threshold, ``⌈(1 - α)/α⌉``."""
    m = 1
    while conformal_rank(m, alpha) > m:
        m += 1
    return m


def should_stop(
    labeled_scores: ArrayLike,
    size_curve: SetSizeCurve,
    *,
    alpha: float,
    n_future: float,
    min_labels: int | None = None,
    max_labels: int | None = None,
    bandwidth: float = 1.5,
) -> StopDecision:
    """The plug-in stopping decision after ``n = len(labeled_scores)`` labels (pure function).

    Fits :func:`fit_cost_model` to the labels so far and the unlabeled curve, and stops when
    ``n`` itself minimises the estimated cost over all reachable sizes ``m ∈ [n, max_labels]``,
    i.e. when no further label is expected to repay its unit cost through smaller future sets.
    Before ``min_labels`` (default ``max(⌈4/α⌉, m_finite + 1)``) it
    never stops.

    Args:
        labeled_scores: ``(n,)`` calibration scores bought so far (any order).
        size_curve: unlabeled set-size curve ``g``.
        alpha: miscoverage level in (0, 1).
        n_future: ``N > 0``, the number of future predictions.
        min_labels: smallest size the rule may stop at.
        max_labels: budget cap (default ``100·n + 10⁶``).
        bandwidth: window constant of :func:`fit_cost_model`.

    Returns:
        A :class:`StopDecision`. This call costs ``O(n log n)``; the
        :class:`~costly_cp.LabelBudgetCalibrator` amortises it to ``O(log n)`` per label by
        refitting only when ``n`` has grown by a constant factor.
    """
    alpha = check_alpha(alpha)
    n_future = check_positive(n_future, "n_future")
    s = np.sort(check_finite_array(labeled_scores, "labeled_scores", ndim=1, allow_empty=True))
    n = s.size
    floor = (
        default_min_labels(alpha)
        if min_labels is None
        else check_positive_int(min_labels, "min_labels")
    )
    cap = 100 * n + 10**6 if max_labels is None else check_positive_int(max_labels, "max_labels")
    if n < max(floor, 3):
        model = CostModel(1 - alpha, math.nan, 0.0, 0.0, n_future, size_curve.full_size, alpha)
        return StopDecision(stop=n >= cap, target=max(floor, n), model=model)
    model = fit_cost_model(
        s, size_curve, u0=1 - alpha, n_future=n_future, alpha=alpha, bandwidth=bandwidth
    )
    target = _optimal_size(model, n, max(cap, n))
    return StopDecision(stop=target <= n, target=target, model=model)


def default_min_labels(alpha: float) -> int:
    """Default smallest stopping size ``max(⌈4/α⌉, m_finite + 1)``: about four calibration scores
    above the ``1 - α`` quantile, so the fitted curve sees both of its sides."""
    return max(math.ceil(4.0 / alpha - 1e-9), min_finite_size(alpha) + 1)
