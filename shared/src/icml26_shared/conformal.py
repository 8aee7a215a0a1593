r"""The split-conformal core every conformal package uses: one rank, one quantile, two scores.

With :math:`n` exchangeable calibration scores and miscoverage :math:`\alpha \in (0, 1)`, split
conformal prediction thresholds a test score at the :math:`k`-th smallest calibration score,

.. math:: k = \lceil (n + 1)(1 - \alpha) \rceil ,

which gives :math:`P(s_{n+1} \le \hat q) \ge 1 - \alpha` (Vovk, Gammerman, Shafer 2005). When
:math:`k > n` no finite threshold keeps the guarantee and the honest answer is :math:`+\infty`
(the full set, the whole line), never a clipped finite order statistic (MAPIE #974/#980).

* :func:`conformal_rank` computes :math:`k` with **one** rounding guard: products such as
  :math:`0.9 \cdot 20` that floating point evaluates to :math:`18.000000000000004` count as 18
  (a relative slack of ``1e-12``, far above the rounding error of one product and far below the
  gap between integers for any realistic :math:`n`).
* :func:`split_quantile` takes scores in any order and returns that order statistic (``+inf``
  when :math:`k > n`), along any axis.
* :func:`lac_scores` and :func:`aps_scores` are the two classification scores the packages
  share: LAC (Sadinle, Lei, Wasserman 2019) :math:`s(x, y) = 1 - \hat p_y(x)` and APS (Romano,
  Sesia, Candès 2020) :math:`s(x, y) = \sum_{y' \prec y} \hat p_{y'}(x) + V \hat p_y(x)`, where
  :math:`y' \prec y` runs over the labels ranked before :math:`y` by decreasing probability (ties
  broken by label index) and :math:`V = 1`, or :math:`V \sim U(0, 1)` when randomised.

Functions take the miscoverage ``alpha`` (MAPIE 1.x's convention for plain functions; estimator
classes take ``confidence_level = 1 - alpha``).

>>> import numpy as np
>>> conformal_rank(19, 0.1)
18
>>> split_quantile(np.arange(19.0)[::-1], 0.1)
17.0
>>> split_quantile(np.arange(5.0), 0.1)   # k = 6 > n = 5: the full set
inf
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .checks import check_finite_array, check_probability_rows, rng_from_seed

__all__ = ["aps_scores", "conformal_rank", "lac_scores", "split_quantile"]

_RANK_SLACK = 1e-12


def _check_alpha_array(alpha: Any, name: str = "alpha") -> NDArray[np.float64]:
    """``alpha`` (scalar or array) as float64, every entry in the open interval (0, 1)."""
    if isinstance(alpha, bool | np.bool_):
        raise TypeError(f"{name} must be a real number, got bool")
    raw = np.asarray(alpha)
    if raw.dtype.kind == "c":
        raise TypeError(f"{name} must be real-valued, got dtype {raw.dtype}")
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real number, got {type(alpha).__name__}")
    a = raw.astype(np.float64)
    bad = ~((a > 0) & (a < 1))  # also catches NaN
    if bad.any():
        first = a[tuple(np.argwhere(bad)[0])] if a.ndim else a
        raise ValueError(f"{name} must be in (0, 1), got {float(first)!r}")
    return a


def _check_n(n: Any) -> NDArray[np.int64]:
    if isinstance(n, bool | np.bool_):
        raise TypeError("n must be a non-negative integer, got bool")
    raw = np.asarray(n)
    if raw.dtype.kind not in "iu":
        raise TypeError(f"n must be a non-negative integer, got {n!r}")
    if (raw < 0).any():
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    return raw.astype(np.int64)


def conformal_rank(n: int | ArrayLike, alpha: float | ArrayLike) -> Any:
    r"""The split-conformal rank :math:`k = \lceil (n + 1)(1 - \alpha) \rceil` (one-based).

    Vectorised over ``n`` and ``alpha`` (broadcast); an ``int`` when both are scalars.

    Args:
        n: number of calibration scores, a non-negative integer (or an integer array).
        alpha: miscoverage, every entry in the open interval (0, 1); anything else raises,
            whatever its type (Python float, numpy scalar, array).

    Returns:
        ``k``; ``k > n`` means no finite threshold keeps the ``1 - alpha`` guarantee.

    >>> conformal_rank(20, 0.05), conformal_rank(9, 0.1), conformal_rank(8, 0.1)
    (20, 9, 9)
    """
    a = _check_alpha_array(alpha)
    m = _check_n(n)
    x = (m + 1) * (1.0 - a)
    k = np.ceil(x - _RANK_SLACK * np.maximum(1.0, x)).astype(np.int64)
    return int(k) if k.ndim == 0 else k


def split_quantile(scores: ArrayLike, alpha: float | ArrayLike, axis: int = -1) -> Any:
    r"""The split-conformal threshold: the :func:`conformal_rank`-th smallest score along ``axis``.

    Args:
        scores: calibration scores in any order; ``+inf`` is allowed, NaN is not. ``n`` is the
            length of ``axis`` (it may be 0: the threshold is then ``+inf``).
        alpha: miscoverage in (0, 1); an array broadcasts against the other axes of ``scores``
            (e.g. one level per stream).
        axis: the axis holding the ``n`` scores.

    Returns:
        A float for 1-D scores and a scalar ``alpha``, otherwise an array of the broadcast batch
        shape; ``+inf`` wherever the rank exceeds ``n``.

    >>> split_quantile([[3.0, 1.0, 2.0], [0.5, 0.2, 0.9]], 0.5)
    array([2. , 0.5])
    """
    s = check_finite_array(scores, "scores", allow_inf=True, allow_empty=True)
    if s.ndim == 0:
        raise ValueError("scores must have at least one dimension, got a scalar")
    s = np.moveaxis(s, axis, -1)
    n = s.shape[-1]
    a = _check_alpha_array(alpha)
    k = np.asarray(conformal_rank(n, a))
    batch = s.shape[:-1]
    shape = np.broadcast_shapes(a.shape, batch)
    if n == 0:
        out = np.full(shape, np.inf)
    elif k.ndim == 0:
        if int(k) > n:
            out = np.full(batch, np.inf)
        else:
            out = np.partition(s, int(k) - 1, axis=-1)[..., int(k) - 1]
        out = np.broadcast_to(out, shape)
    else:
        srt = np.broadcast_to(np.sort(s, axis=-1), (*shape, n))
        idx = np.broadcast_to(np.clip(k, 1, n) - 1, shape)
        out = np.take_along_axis(srt, idx[..., None], axis=-1)[..., 0]
        out = np.where(np.broadcast_to(k, shape) > n, np.inf, out)
    if np.ndim(out) == 0:
        return float(out)
    return np.array(out, dtype=np.float64)


def _labels(y: ArrayLike, n: int, n_classes: int) -> NDArray[np.intp]:
    arr = np.asarray(y)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"y must hold integer labels, got dtype {arr.dtype}")
    if arr.shape != (n,):
        raise ValueError(f"y must have shape ({n},), got {arr.shape}")
    if n and (arr.min() < 0 or arr.max() >= n_classes):
        raise ValueError(
            f"y must hold labels in [0, {n_classes - 1}], got range [{arr.min()}, {arr.max()}]"
        )
    return arr.astype(np.intp)


def lac_scores(probs: ArrayLike, y: ArrayLike | None = None) -> NDArray[np.float64]:
    r"""Least-ambiguous-classifier scores :math:`s(x, y) = 1 - \hat p_y(x)`.

    Args:
        probs: ``(n, K)`` predicted probabilities (rows sum to 1).
        y: optional ``(n,)`` integer labels.

    Returns:
        ``(n, K)`` scores of every label, or the ``(n,)`` scores of ``y`` when given.

    >>> lac_scores([[0.7, 0.2, 0.1]], y=[1])
    array([0.8])
    """
    p = check_probability_rows(probs, "probs")
    s = 1.0 - p
    if y is None:
        return s
    idx = _labels(y, *p.shape)
    return s[np.arange(p.shape[0]), idx]


def aps_scores(
    probs: ArrayLike,
    y: ArrayLike | None = None,
    randomized: bool = False,
    rng: int | np.random.Generator | None = None,
) -> NDArray[np.float64]:
    r"""Adaptive-prediction-set scores :math:`\sum_{y' \prec y} \hat p_{y'} + V \hat p_y`.

    Labels are ranked by decreasing probability (a stable sort: ties by label index);
    :math:`V = 1` gives the deterministic score (the cumulative mass up to and including
    :math:`y`), ``randomized=True`` draws one :math:`V \sim U(0, 1)` per row.

    Args:
        probs: ``(n, K)`` predicted probabilities (rows sum to 1).
        y: optional ``(n,)`` integer labels.
        randomized: draw ``V`` uniformly instead of ``V = 1``.
        rng: a seed or a ``numpy.random.Generator`` for ``V`` (used only when randomised).

    Returns:
        ``(n, K)`` scores of every label, or the ``(n,)`` scores of ``y`` when given.

    >>> aps_scores([[0.2, 0.7, 0.1]])
    array([[0.9, 0.7, 1. ]])
    """
    p = check_probability_rows(probs, "probs")
    order = np.argsort(-p, axis=1, kind="stable")
    sorted_p = np.take_along_axis(p, order, axis=1)
    cum = np.cumsum(sorted_p, axis=1)
    if randomized:
        gen = rng_from_seed(rng, "rng")
        cum = cum - gen.random((p.shape[0], 1)) * sorted_p
    scores = np.empty_like(p)
    np.put_along_axis(scores, order, cum, axis=1)
    if y is None:
        return scores
    idx = _labels(y, *p.shape)
    return scores[np.arange(p.shape[0]), idx]
