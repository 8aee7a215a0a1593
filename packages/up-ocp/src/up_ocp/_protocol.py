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

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_finite_array
from icml26_shared.experiment import progress as _progress

__all__ = [
    "OnlineAlgorithm",
    "as_batch_shape",
    "check_score_step",
    "check_scores",
    "drive",
    "read_streams",
    "restore_layout",
    "run_algorithm",
]


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
    if isinstance(shape, str | bytes) or not all(
        isinstance(s, int | np.integer) and not isinstance(s, bool) for s in _iter(shape)
    ):
        raise TypeError(f"shape must be an int or a tuple of ints, got {shape!r}")
    out = tuple(int(s) for s in shape)
    if any(s < 0 for s in out):
        raise ValueError(f"shape must have non-negative entries, got {out}")
    return out


def _iter(shape: Any) -> tuple[Any, ...]:
    try:
        return tuple(shape)
    except TypeError:
        return (shape,)


def as_score_array(score: Any, name: str = "score") -> NDArray[np.float64]:
    """``score`` as float64; text, ``None`` and other non-numbers raise ``TypeError`` naming
    ``name`` (``np.asarray("1.5", float)`` would silently parse the text)."""
    if isinstance(score, np.ndarray) and score.dtype == np.float64:
        return score
    raw = np.asarray(score) if not isinstance(score, np.ndarray) else score
    if score is None or raw.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must be numeric (a number or an array of numbers), got "
            f"{type(score).__name__}" + (f" of dtype {raw.dtype}" if raw.dtype.kind != "O" else "")
        )
    return raw.astype(np.float64, copy=False)


def check_score_step(score: ArrayLike, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """Check one round of scores: the batch shape, no NaN (``+-inf`` allowed)."""
    s = as_score_array(score)
    if s.shape != shape:
        if s.ndim == 0 or s.size == 1:
            s = np.broadcast_to(s.reshape(()), shape)
        else:
            raise ValueError(f"score must have the stream batch shape {shape}, got {s.shape}")
    if np.isnan(s).any():
        idx = tuple(int(i) for i in np.argwhere(np.isnan(s))[0])
        raise ValueError(f"score must not be NaN, got nan at index {idx if idx else 0}")
    return s


#: Streams shorter than this, with more streams than rounds, are probably transposed.
_SHORT_STREAM = 30


def _is_frame(x: Any) -> bool:
    return hasattr(x, "columns") and hasattr(x, "index") and hasattr(x, "to_numpy")


def read_streams(scores: Any, name: str = "scores") -> tuple[NDArray[np.float64], bool]:
    """``(streams, from_frame)``: the scores as ``(*batch, T)`` with time on the last axis.

    A pandas ``DataFrame`` is read with its index as time and one stream per column (the
    array is its transpose; ``from_frame`` is True so the caller returns results in the frame's
    layout, see :func:`restore_layout`). An array whose last axis is short (fewer than 30
    rounds) while it holds more streams than rounds warns: time is the last axis, so
    ``(500, 3)`` is read as 500 streams of 3 rounds, which is rarely what was meant.
    """
    from_frame = _is_frame(scores)
    if from_frame:
        scores = np.asarray(scores.to_numpy()).T
    s = check_finite_array(scores, name, allow_inf=True)
    if s.ndim == 0:
        raise ValueError(f"{name} must have a time axis (shape (..., T)), got a scalar")
    n_streams = int(np.prod(s.shape[:-1]))
    if not from_frame and s.ndim >= 2 and s.shape[-1] < _SHORT_STREAM and n_streams > s.shape[-1]:
        warnings.warn(
            f"{name} has shape {s.shape}: time is the last axis, so this is read as "
            f"{n_streams} streams of {s.shape[-1]} rounds each; if time runs along the rows "
            f"(one column per stream, as in a DataFrame's values), pass {name}.T or the "
            "DataFrame itself (its index is read as time)",
            UserWarning,
            stacklevel=3,
        )
    return s, from_frame


def restore_layout(out: NDArray, from_frame: bool) -> NDArray:
    """Results ``(..., streams, T)`` back in a DataFrame's layout ``(..., T, streams)``."""
    return np.swapaxes(out, -1, -2) if from_frame and out.ndim >= 2 else out


def check_scores(scores: ArrayLike, name: str = "scores") -> NDArray[np.float64]:
    """Check a whole stream ``(..., T)``: numeric, non-empty, no NaN (``+-inf`` allowed)."""
    return read_streams(scores, name)[0]


def run_algorithm(
    algo: OnlineAlgorithm, scores: ArrayLike, state: Any = None, *, progress: bool | None = False
) -> tuple[NDArray, Any]:
    """Drive ``algo`` over ``scores`` of shape ``(*batch, T)``; time is the last axis.

    A pandas ``DataFrame`` is read with its index as time (one stream per column) and the
    thresholds come back in its layout ``(T, n_columns)``. ``progress``: a bar over the rounds
    (``None``: a bar on a terminal, a start and an end line on stderr when piped).

    Returns:
        ``(thresholds, final_state)`` where ``thresholds[..., t]`` is the threshold announced
        *before* ``scores[..., t]`` was revealed (so ``scores > thresholds`` are the misses).
        The thresholds' batch shape is the state's (it may broadcast hyperparameter arrays
        against the streams, e.g. a grid of learning rates).
    """
    s, from_frame = read_streams(scores)
    out, state = drive(algo, s, state, progress=progress)
    return restore_layout(out, from_frame), state


def drive(
    algo: OnlineAlgorithm,
    s: NDArray[np.float64],
    state: Any = None,
    *,
    progress: bool | None = False,
    desc: str = "",
) -> tuple[NDArray, Any]:
    """:func:`run_algorithm` on streams already checked by :func:`read_streams`."""
    if state is None:
        state = algo.init(s.shape[:-1])
    T = s.shape[-1]
    out = np.empty((*np.shape(state.q), T))
    q = state.q
    rounds = _progress(range(T), enabled=progress, desc=desc or f"{algo.name}: {T} rounds")
    for t in rounds:
        out[..., t] = q
        q, state = algo.update(state, s[..., t])
    return out, state
