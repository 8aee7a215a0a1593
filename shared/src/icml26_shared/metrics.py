"""Metrics shared by the method packages: vectorised numpy, documented math.

Conformal prediction
    * ``coverage(y, lower, upper)``: mean of 1{lower_i <= y_i <= upper_i}.
    * ``set_coverage(sets, y)``: mean of 1{sets[i, y_i]} for boolean ``(n, K)`` set masks.
    * ``group_coverage(covered, groups)``: coverage within each group (Mondrian view).
    * ``set_size(sets)``: mean |C(x)| over all points, and over non-empty sets only (both are
      reported because empty sets pull the plain mean down, MAPIE/crepes' pitfall).
    * ``interval_width(lower, upper)``: mean of upper - lower (inf if any interval is infinite).
    * ``pinball_loss(y, q, level)``: mean of max(level (y - q), (level - 1)(y - q)).
    * ``rolling_miscoverage`` / ``long_run_miscoverage``: windowed and cumulative error rates.
    * ``mc_standard_error``: sample standard deviation over sqrt(n) (Monte Carlo error).
    * ``binomial_tolerance``: a two-sided binomial bound for a rate estimated from n trials.

Trajectories
    * ``ade`` / ``fde``: average / final displacement error (Euclidean over the last axis).
    * ``min_ade`` / ``min_fde``: the best of K samples, per trajectory, then averaged.

Numerics
    * ``relative_error(a, b) = ||a - b|| / max(||b||, tiny)`` (Frobenius norm).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .checks import check_finite_array, check_in_interval, check_positive_int

__all__ = [
    "SetSize",
    "ade",
    "binomial_tolerance",
    "coverage",
    "fde",
    "group_coverage",
    "interval_width",
    "long_run_miscoverage",
    "mc_standard_error",
    "min_ade",
    "min_fde",
    "pinball_loss",
    "relative_error",
    "rolling_miscoverage",
    "set_coverage",
    "set_size",
]


def coverage(y: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> float:
    """Fraction of ``y`` inside the closed intervals ``[lower, upper]`` (infinite ends allowed)."""
    y_ = check_finite_array(y, "y")
    lo = check_finite_array(lower, "lower", allow_inf=True)
    hi = check_finite_array(upper, "upper", allow_inf=True)
    y_, lo, hi = np.broadcast_arrays(y_, lo, hi)
    return float(np.mean((lo <= y_) & (y_ <= hi)))


def _label_index(y: ArrayLike, n: int, k: int) -> NDArray[np.intp]:
    labels = np.asarray(y)
    if labels.shape != (n,) or labels.dtype.kind not in "iu":
        raise ValueError(
            f"y must be integer labels of shape ({n},), got {labels.dtype} {labels.shape}"
        )
    if labels.min(initial=0) < 0 or labels.max(initial=0) >= k:
        raise ValueError(
            f"y must hold labels in [0, {k - 1}], got range [{labels.min()}, {labels.max()}]"
        )
    return labels.astype(np.intp)


def _as_sets(sets: ArrayLike) -> NDArray[np.bool_]:
    s = np.asarray(sets)
    if s.ndim != 2 or s.dtype != np.bool_:
        raise ValueError(f"sets must be a boolean (n, K) mask, got {s.dtype} with shape {s.shape}")
    return s


def set_coverage(sets: ArrayLike, y: ArrayLike) -> float:
    """Fraction of points whose true label lies in its prediction set (``sets[i, y_i]``)."""
    s = _as_sets(sets)
    labels = _label_index(y, *s.shape)
    return float(np.mean(s[np.arange(s.shape[0]), labels]))


def group_coverage(covered: ArrayLike, groups: ArrayLike) -> dict[Any, float]:
    """Coverage within each group: ``{g: mean(covered[groups == g])}``."""
    c = np.asarray(covered, dtype=bool)
    g = np.asarray(groups)
    if c.shape != g.shape:
        raise ValueError(
            f"covered and groups must have the same shape, got {c.shape} and {g.shape}"
        )
    return {k.item() if hasattr(k, "item") else k: float(c[g == k].mean()) for k in np.unique(g)}


class SetSize(dict):
    """Mean set size reported both ways: ``mean`` (all sets), ``mean_nonempty`` and ``empty_rate``."""

    @property
    def mean(self) -> float:
        return self["mean"]

    @property
    def mean_nonempty(self) -> float:
        return self["mean_nonempty"]

    @property
    def empty_rate(self) -> float:
        return self["empty_rate"]


def set_size(sets: ArrayLike) -> SetSize:
    """Mean |C(x)| with and without empty sets, and the empty-set rate."""
    sizes = _as_sets(sets).sum(axis=1)
    nonempty = sizes[sizes > 0]
    return SetSize(
        mean=float(sizes.mean()),
        mean_nonempty=float(nonempty.mean()) if nonempty.size else float("nan"),
        empty_rate=float(np.mean(sizes == 0)),
    )


def interval_width(lower: ArrayLike, upper: ArrayLike) -> float:
    """Mean width ``upper - lower``; ``inf`` if any interval is unbounded."""
    lo = check_finite_array(lower, "lower", allow_inf=True)
    hi = check_finite_array(upper, "upper", allow_inf=True)
    if (hi < lo).any():
        raise ValueError("upper must be >= lower everywhere")
    return float(np.mean(hi - lo))


def pinball_loss(y: ArrayLike, q: ArrayLike, level: float) -> float:
    r"""Mean pinball (quantile) loss at ``level`` τ: :math:`\rho_\tau(u) = \max(\tau u, (\tau-1)u)`,
    with :math:`u = y - q`; minimised in expectation by the τ-quantile of ``y``."""
    tau = check_in_interval(level, "level")
    u = check_finite_array(y, "y") - check_finite_array(q, "q")
    return float(np.mean(np.maximum(tau * u, (tau - 1) * u)))


def long_run_miscoverage(errors: ArrayLike, axis: int = -1) -> NDArray[np.float64]:
    """Cumulative miss rate ``(1/t) Σ_{s<=t} err_s`` along ``axis`` (online conformal view)."""
    e = np.asarray(errors, dtype=np.float64)
    t = np.arange(1, e.shape[axis] + 1, dtype=np.float64)
    shape = [1] * e.ndim
    shape[axis] = -1
    return np.cumsum(e, axis=axis) / t.reshape(shape)


def rolling_miscoverage(errors: ArrayLike, window: int) -> NDArray[np.float64]:
    """Miss rate over a trailing window along the last axis (shorter at the start)."""
    w = check_positive_int(window, "window")
    e = np.asarray(errors, dtype=np.float64)
    c = np.cumsum(e, axis=-1)
    lagged = np.zeros_like(c)
    lagged[..., w:] = c[..., :-w]
    counts = np.minimum(np.arange(1, e.shape[-1] + 1), w)
    return (c - lagged) / counts


def mc_standard_error(values: ArrayLike, axis: int = 0) -> NDArray[np.float64] | float:
    """Monte Carlo standard error ``std(values, ddof=1) / sqrt(n)`` (0 for a single value)."""
    v = np.asarray(values, dtype=np.float64)
    n = v.shape[axis]
    if n < 2:
        out = np.zeros(np.delete(v.shape, axis)) if v.ndim > 1 else 0.0
        return out
    se = np.std(v, axis=axis, ddof=1) / np.sqrt(n)
    return float(se) if np.ndim(se) == 0 else se


def binomial_tolerance(p: float, n: int, confidence: float = 0.999) -> float:
    """Half-width t such that a rate estimated from ``n`` Bernoulli(p) trials lies in
    ``p ± t`` with probability at least ``confidence`` (exact binomial quantiles).

    Statistical tests use it: assert ``|rate - p| <= binomial_tolerance(p, n)``.
    """
    from scipy import stats  # imported here: `import icml26_shared.metrics` stays light

    check_in_interval(p, "p", 0, 1, closed=(True, True))
    n = check_positive_int(n, "n")
    tail = (1 - check_in_interval(confidence, "confidence")) / 2
    lo = stats.binom.ppf(tail, n, p) / n
    hi = stats.binom.isf(tail, n, p) / n
    return float(max(p - lo, hi - p) + 1.0 / n)


def _displacement(pred: ArrayLike, target: ArrayLike) -> NDArray[np.float64]:
    p = check_finite_array(pred, "pred")
    t = check_finite_array(target, "target")
    try:
        shape = np.broadcast_shapes(p.shape, t.shape)
    except ValueError:
        shape = None
    if shape != p.shape or p.shape[-1] != t.shape[-1]:
        raise ValueError(
            f"pred must have a shape that target {t.shape} broadcasts to, got {p.shape}"
        )
    return np.linalg.norm(p - t, axis=-1)


def ade(pred: ArrayLike, target: ArrayLike) -> float:
    """Average displacement error: mean over frames and nodes of ‖pred − target‖₂.

    Shapes: ``(..., F, N, 3)`` for both (leading axes are averaged too).
    """
    return float(_displacement(pred, target).mean())


def fde(pred: ArrayLike, target: ArrayLike) -> float:
    """Final displacement error: ‖pred − target‖₂ at the last frame, averaged over nodes."""
    return float(_displacement(pred, target)[..., -1, :].mean())


def min_ade(samples: ArrayLike, target: ArrayLike) -> float:
    """minADE@K: samples ``(B, K, F, N, 3)``, target ``(B, F, N, 3)``; best sample per item."""
    d = _displacement(samples, np.asarray(target)[:, None])
    return float(d.mean(axis=(-1, -2)).min(axis=1).mean())


def min_fde(samples: ArrayLike, target: ArrayLike) -> float:
    """minFDE@K with the shapes of :func:`min_ade`."""
    d = _displacement(samples, np.asarray(target)[:, None])
    return float(d[..., -1, :].mean(axis=-1).min(axis=1).mean())


def relative_error(a: ArrayLike, b: ArrayLike) -> float:
    """``‖a − b‖ / max(‖b‖, 1e-300)`` in the Frobenius norm (``b`` is the reference)."""
    a_ = np.asarray(a, dtype=np.float64)
    b_ = np.asarray(b, dtype=np.float64)
    if a_.shape != b_.shape:
        raise ValueError(f"a and b must have the same shape, got {a_.shape} and {b_.shape}")
    return float(np.linalg.norm(a_ - b_) / max(np.linalg.norm(b_), 1e-300))
