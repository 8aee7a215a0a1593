"""Argument checks with one message style.

Every check raises :class:`ValueError` (or :class:`TypeError` for a wrong kind of object) whose
message names the argument, what was expected and what was received, e.g.::

    alpha must be in (0, 1), got 1.5
    scores must be finite, got nan at index 17
    probs must have shape (n, 10), got (5, 9)

Packages call these at their public boundary so that bad input fails early with a readable
message instead of deep inside numpy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "SeedLike",
    "check_alpha",
    "check_choice",
    "check_finite_array",
    "check_in_interval",
    "check_positive",
    "check_positive_int",
    "check_probability_rows",
    "check_same_length",
    "check_seed",
    "check_shape",
    "int_from_seed",
    "rng_from_seed",
]

#: What every public function of the icml26 packages accepts as ``seed``.
SeedLike = int | np.integer | np.random.Generator | None

_SEED_EXPECTED = "a non-negative integer, a numpy.random.Generator or None"


def _real(value: Any, name: str) -> float:
    """``float(value)`` for a real scalar; complex and non-numeric values raise ``TypeError``
    (``float(np.complex128(0.5 + 1j))`` would silently drop the imaginary part)."""
    if isinstance(value, complex | np.complexfloating) or (
        isinstance(value, np.ndarray) and value.dtype.kind == "c"
    ):
        raise TypeError(f"{name} must be a real number, got complex {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}") from None


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return repr(value)
    return str(value)


def check_in_interval(
    value: Any,
    name: str,
    low: float = 0.0,
    high: float = 1.0,
    *,
    closed: tuple[bool, bool] = (False, False),
) -> float:
    """Return ``float(value)`` if it lies in the interval ``low .. high``.

    ``closed`` says whether each end is included: ``(False, False)`` is the open interval.

    >>> check_in_interval(0.5, "level")
    0.5
    """
    x = _real(value, name)
    lo_ok = x >= low if closed[0] else x > low
    hi_ok = x <= high if closed[1] else x < high
    if not (lo_ok and hi_ok) or np.isnan(x):
        left = "[" if closed[0] else "("
        right = "]" if closed[1] else ")"
        raise ValueError(
            f"{name} must be in {left}{_fmt(low)}, {_fmt(high)}{right}, got {_fmt(value)}"
        )
    return x


def check_alpha(alpha: Any, name: str = "alpha") -> float:
    """Return ``alpha`` as a float if it lies in the open interval (0, 1)."""
    return check_in_interval(alpha, name, 0, 1)


def check_positive(value: Any, name: str, *, strict: bool = True) -> float:
    """Return ``float(value)`` if it is ``> 0`` (``>= 0`` when ``strict=False``) and finite."""
    x = _real(value, name)
    if not np.isfinite(x) or (x <= 0 if strict else x < 0):
        relation = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be finite and {relation}, got {_fmt(value)}")
    return x


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """Return ``int(value)`` if it is an integer ``>= minimum`` (bools are rejected)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return int(value)


def check_choice(value: Any, name: str, choices: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``choices``."""
    options = list(choices)
    if value not in options:
        listed = ", ".join(repr(c) for c in options)
        raise ValueError(f"{name} must be one of {listed}, got {value!r}")
    return value


def check_seed(seed: Any, name: str = "seed") -> int | np.random.Generator | None:
    """The one seed rule of the icml26 packages.

    Accepted: a non-negative ``int`` or numpy integer (returned as a plain ``int``), a
    ``numpy.random.Generator`` (returned as is, so the caller draws from the user's stream) and
    ``None`` (fresh OS entropy). Anything else, bools and strings included, raises naming
    ``name``.

    >>> check_seed(np.int64(3))
    3
    >>> check_seed("3")
    Traceback (most recent call last):
    ...
    TypeError: seed must be a non-negative integer, a numpy.random.Generator or None, got str '3'
    """
    if seed is None or isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool | np.bool_) or not isinstance(seed, int | np.integer):
        raise TypeError(f"{name} must be {_SEED_EXPECTED}, got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise ValueError(f"{name} must be {_SEED_EXPECTED}, got {seed}")
    return int(seed)


def rng_from_seed(seed: Any, name: str = "seed") -> np.random.Generator:
    """``numpy.random.default_rng`` of a seed checked by :func:`check_seed`; a Generator passes
    through unchanged."""
    checked = check_seed(seed, name)
    if isinstance(checked, np.random.Generator):
        return checked
    return np.random.default_rng(checked)


def int_from_seed(seed: Any, name: str = "seed", *, bits: int = 32) -> int:
    """An integer in ``[0, 2**bits)`` for engines seeded by integers (torch, JAX, ``random``).

    An ``int`` must already lie in that range (it is returned unchanged, so ``seed=3`` means
    the same run everywhere); a Generator gives one draw from it (advancing it); ``None`` gives a
    draw from fresh OS entropy.

    >>> int_from_seed(np.uint8(7))
    7
    """
    checked = check_seed(seed, name)
    if checked is None:
        checked = np.random.default_rng()
    if isinstance(checked, np.random.Generator):
        return int(checked.integers(0, 2**bits, dtype=np.uint64))
    if checked >= 2**bits:
        raise ValueError(f"{name} must be an integer in [0, 2**{bits}), got {checked}")
    return checked


def _first_bad_index(mask: NDArray[np.bool_]) -> str:
    idx = np.argwhere(mask)[0]
    return str(int(idx[0])) if idx.size == 1 else str(tuple(int(i) for i in idx))


def check_finite_array(
    x: ArrayLike,
    name: str,
    *,
    ndim: int | Sequence[int] | None = None,
    dtype: Any = np.float64,
    allow_inf: bool = False,
    allow_empty: bool = False,
) -> NDArray[Any]:
    """Convert ``x`` to an array of ``dtype`` and check it is non-empty and finite.

    Args:
        x: array-like input.
        name: the argument's name, used in error messages.
        ndim: the allowed number(s) of dimensions, or ``None`` for any.
        dtype: target dtype (``None`` keeps the input's).
        allow_inf: accept ``+-inf`` (NaN is never accepted).
        allow_empty: accept an array with zero elements.

    Returns:
        The converted array (a copy only when conversion needs one).
    """
    # Complex input is rejected *before* any conversion: ``np.asarray(z, dtype=float)`` would
    # drop the imaginary part with only a ComplexWarning.
    raw = x if isinstance(x, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(x)
        except (TypeError, ValueError):
            raw = None
    if raw is not None and raw.dtype.kind == "c":
        raise TypeError(f"{name} must be real-valued, got dtype {raw.dtype}")
    # Strings are refused, not parsed: ``np.asarray(["1.5"], dtype=float)`` would silently
    # turn text into numbers.
    if (
        dtype is not None
        and np.dtype(dtype).kind in "biuf"
        and raw is not None
        and (
            raw.dtype.kind in "USV"
            or (raw.dtype == object and any(isinstance(v, str | bytes) for v in raw.ravel()))
        )
    ):
        raise TypeError(f"{name} must be numeric, got text (dtype {raw.dtype})")
    if (
        raw is not None
        and raw.dtype == object
        and any(isinstance(v, complex | np.complexfloating) for v in raw.ravel())
    ):
        raise TypeError(f"{name} must be real-valued, got complex entries")
    try:
        arr = np.asarray(x if raw is None else raw, dtype=dtype)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a numeric array, got {type(x).__name__}") from None
    if np.iscomplexobj(arr):
        raise TypeError(f"{name} must be real-valued, got dtype {arr.dtype}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if arr.ndim not in allowed:
            want = " or ".join(str(d) for d in allowed)
            raise ValueError(f"{name} must have {want} dimension(s), got shape {arr.shape}")
    if arr.size == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty, got shape {arr.shape}")
    if arr.dtype.kind in "fc":
        bad = np.isnan(arr) if allow_inf else ~np.isfinite(arr)
        if bad.any():
            first = arr[tuple(np.argwhere(bad)[0])]
            raise ValueError(f"{name} must be finite, got {first} at index {_first_bad_index(bad)}")
    return arr


def check_shape(x: NDArray[Any], shape: Sequence[int | None], name: str) -> NDArray[Any]:
    """Check ``x.shape`` against ``shape``, where ``None`` matches any length."""
    want = tuple(shape)
    ok = x.ndim == len(want) and all(w is None or w == s for w, s in zip(want, x.shape))
    if not ok:
        shown = "(" + ", ".join("n" if w is None else str(w) for w in want)
        shown += ",)" if len(want) == 1 else ")"
        raise ValueError(f"{name} must have shape {shown}, got {tuple(x.shape)}")
    return x


def check_same_length(**arrays: Any) -> int:
    """Check that all keyword arrays have the same first dimension; return it."""
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        shown = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"arguments must have the same length, got {shown}")
    return next(iter(lengths.values())) if lengths else 0


def check_probability_rows(probs: ArrayLike, name: str = "probs", *, atol: float = 1e-6) -> NDArray:
    """Check a ``(n, K)`` matrix of probabilities: entries in [0, 1], rows summing to 1."""
    p = check_finite_array(probs, name, ndim=2)
    if (p < -atol).any() or (p > 1 + atol).any():
        raise ValueError(f"{name} must have entries in [0, 1], got min {p.min()} and max {p.max()}")
    sums = p.sum(axis=1)
    bad = np.abs(sums - 1) > atol * max(1, p.shape[1])
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"{name} rows must sum to 1, got {sums[i]} at row {i}")
    return p
