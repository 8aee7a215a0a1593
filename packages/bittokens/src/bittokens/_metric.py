"""Scores used by the BitTokens tasks: log-sMAPE, exact match, normalised accuracy.

.. math::

    \\mathrm{sMAPE}(y, \\hat y) = \\frac{|\\hat y - y|}{|y| + |\\hat y| + \\varepsilon}, \\qquad
    \\text{log-sMAPE} = \\min\\Big(1, \\frac{\\log_{10}(\\mathrm{sMAPE} + \\varepsilon)}{-15}\\Big),
    \\quad \\varepsilon = 10^{-100},

which is roughly the number of correct leading digits divided by 15 (1 = exact, 0 = wrong sign
or NaN/inf prediction).

References:
    Kreitner, Hager et al., "Efficient numeracy in language models through single-token number
    embeddings" (BitTokens), ICML 2026, arXiv:2510.06824.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_finite_array, check_positive_int

from ._codec import encode

__all__ = ["exact_match", "field_accuracy", "log_smape", "normalised_accuracy", "smape"]

#: bit positions (MSB first) of the float64 fields.
FIELDS = {"sign": slice(0, 1), "exponent": slice(1, 12), "mantissa": slice(12, 64)}

_EPS = 1e-100


def _pair(y: ArrayLike, y_hat: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Targets (finite or +-inf, never NaN or text) and predictions (any float, never text)."""
    a = check_finite_array(y, "y", allow_inf=True, allow_empty=True)
    b = _predictions(y_hat)
    if a.shape != b.shape:
        raise ValueError(f"y_hat must have the shape of y {a.shape}, got {b.shape}")
    if a.size == 0:
        raise ValueError(f"y must hold at least one number, got shape {a.shape}")
    return a, b


def _predictions(y_hat: ArrayLike) -> NDArray[np.float64]:
    """``y_hat`` as floats; NaN is allowed (a missing or malformed prediction scores 0)."""
    raw = np.asarray(y_hat)
    if raw.dtype.kind in "USV" or (
        raw.dtype == object and any(isinstance(v, str | bytes) for v in raw.ravel())
    ):
        raise TypeError(f"y_hat must be numeric, got text (dtype {raw.dtype})")
    try:
        return np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"y_hat must be a numeric array, got {type(y_hat).__name__}") from None


def smape(y: ArrayLike, y_hat: ArrayLike) -> NDArray[np.float64]:
    """Element-wise symmetric absolute percentage error in [0, 1] (NaN for NaN/inf input)."""
    a, b = _pair(y, y_hat)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(b - a) / (np.abs(a) + np.abs(b) + _EPS)


def log_smape(
    y: ArrayLike, y_hat: ArrayLike, *, reduce: bool = True
) -> float | NDArray[np.float64]:
    """log-sMAPE score in [0, 1]; non-finite predictions score 0.

    Args:
        y: targets.
        y_hat: predictions, same shape.
        reduce: return the mean (default) instead of per-element scores.

    Examples:
        >>> round(log_smape([2.0], [2.0 * (1 + 1e-8)]), 4)
        0.5534
    """
    a, b = _pair(y, y_hat)
    s = smape(a, b)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.minimum(1.0, np.log10(s + _EPS) / -15.0)
    score = np.where(np.isfinite(b) & np.isfinite(score), score, 0.0)
    return float(score.mean()) if reduce else score


def exact_match(y: ArrayLike, y_hat: ArrayLike) -> float:
    """Fraction of rows whose prediction equals the target exactly (all entries of a row)."""
    a, b = _pair(y, y_hat)
    eq = a == b
    return (
        float(eq.reshape(eq.shape[0], -1).all(axis=1).mean()) if eq.ndim > 1 else float(eq.mean())
    )


def normalised_accuracy(y: ArrayLike, y_hat: ArrayLike, n_classes: int = 5) -> float:
    """Accuracy rescaled so chance is 0 and perfect is 1: ``(acc - 1/K) / (1 - 1/K)``."""
    k = check_positive_int(n_classes, "n_classes", minimum=2)
    labels = check_finite_array(y, "y", allow_empty=True)
    if labels.size and ((labels < 0).any() or (labels >= k).any() or (labels % 1 != 0).any()):
        raise ValueError(
            f"y must hold class labels 0..{k - 1} (n_classes={k}), got values in "
            f"[{labels.min()}, {labels.max()}]"
        )
    acc = exact_match(y, y_hat)
    chance = 1.0 / k
    return (acc - chance) / (1.0 - chance)


def field_accuracy(y: ArrayLike, y_hat: ArrayLike) -> dict[str, float]:
    """Per-field bit accuracy of float64 predictions: the fraction of sign, exponent (11) and
    mantissa (52) bits of ``y_hat`` equal to those of ``y``. A non-finite prediction of a
    finite target (e.g. a missing answer) counts as all bits wrong.

    Examples:
        >>> field_accuracy([1.5, -2.0], [1.5, 2.0])["sign"]
        0.5
    """
    a, b = _pair(y, y_hat)
    a, b = a.reshape(-1), b.reshape(-1)
    if a.size == 0:
        raise ValueError("y must hold at least one number, got 0")
    same = encode(a, reciprocal=False) == encode(b, reciprocal=False)
    same &= ~(np.isfinite(a) & ~np.isfinite(b))[:, None]
    return {k: float(same[:, sl].mean()) for k, sl in FIELDS.items()}
