"""The protocol every online method follows, and the vectorised driver.

An online conformal method is an :class:`OnlineAlgorithm`, a pair of pure functions in the
optax style:

* ``init(batch_shape) -> state``: a NamedTuple of numpy arrays whose field ``q`` is the threshold
  announced for the first score;
* ``update(state, score) -> (q_next, state)``: reveal the score of every stream (an array of the
  batch shape), return the threshold for the next round and the new state.

The prediction set of round t is :math:`C_t = \\{y : s_t(y) \\le q_t\\}`; a miss is
:math:`s_t > q_t`. A score of ``+inf`` is a legal input and always counts as a miss; NaN is
rejected.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_finite_array

__all__ = ["OnlineAlgorithm", "as_batch_shape", "check_score_step", "check_scores", "run_algorithm"]


class OnlineAlgorithm(NamedTuple):
    """An online conformal method as ``(init, update)`` (optax's ``GradientTransformation``).

    Attributes:
        name: registry name of the method.
        init: ``init(batch_shape=()) -> state``.
        update: ``update(state, score) -> (q_next, state)``.
    """

    name: str
    init: Callable[..., Any]
    update: Callable[[Any, ArrayLike], tuple[NDArray[np.float64], Any]]


def as_batch_shape(shape: Any) -> tuple[int, ...]:
    """Normalise an int or tuple of non-negative ints to a shape tuple."""
    if isinstance(shape, int | np.integer):
        shape = (int(shape),)
    try:
        out = tuple(int(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a tuple of ints, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"shape must have non-negative entries, got {out}")
    return out


def check_score_step(score: ArrayLike, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """Check one round of scores: the batch shape, no NaN (``+-inf`` allowed)."""
    s = score if isinstance(score, np.ndarray) and score.dtype == np.float64 else None
    if s is None:
        try:
            s = np.asarray(score, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"score must be numeric, got {type(score).__name__}") from None
    if s.shape != shape:
        if s.ndim == 0 or s.size == 1:
            s = np.broadcast_to(s.reshape(()), shape)
        else:
            raise ValueError(f"score must have the stream batch shape {shape}, got {s.shape}")
    if np.isnan(s).any():
        idx = tuple(int(i) for i in np.argwhere(np.isnan(s))[0])
        raise ValueError(f"score must not be NaN, got nan at index {idx if idx else 0}")
    return s


def check_scores(scores: ArrayLike, name: str = "scores") -> NDArray[np.float64]:
    """Check a whole stream ``(..., T)``: numeric, non-empty, no NaN (``+-inf`` allowed)."""
    s = check_finite_array(scores, name, allow_inf=True)
    if s.ndim == 0:
        raise ValueError(f"{name} must have a time axis (shape (..., T)), got a scalar")
    return s


def run_algorithm(
    algo: OnlineAlgorithm, scores: ArrayLike, state: Any = None
) -> tuple[NDArray, Any]:
    """Drive ``algo`` over ``scores`` of shape ``(*batch, T)``; time is the last axis.

    Returns:
        ``(thresholds, final_state)`` where ``thresholds[..., t]`` is the threshold announced
        *before* ``scores[..., t]`` was revealed (so ``scores > thresholds`` are the misses).
        The thresholds' batch shape is the state's (it may broadcast hyperparameter arrays
        against the streams, e.g. a grid of learning rates).
    """
    s = check_scores(scores)
    if state is None:
        state = algo.init(s.shape[:-1])
    T = s.shape[-1]
    out = np.empty((*np.shape(state.q), T))
    q = state.q
    for t in range(T):
        out[..., t] = q
        q, state = algo.update(state, s[..., t])
    return out, state
