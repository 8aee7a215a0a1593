"""Argument checks specific to collab-cp (on top of :mod:`icml26_shared.checks`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import check_alpha

__all__ = ["check_level", "check_mask"]


def check_level(value: Any, name: str) -> float:
    """A level in (0, 1): text is refused (``float("0.1")`` would silently parse it)."""
    if isinstance(value, str | bytes | bool | np.bool_):
        raise TypeError(f"{name} must be a real number in (0, 1), got {value!r}")
    return check_alpha(value, name)


def check_mask(value: Any, name: str, shape: tuple[int, ...] | None = None) -> NDArray[np.bool_]:
    """A boolean mask: bools or integers 0/1 (``0.5`` or text would silently become True)."""
    arr = np.asarray(value)
    if arr.dtype != np.bool_:
        if arr.dtype.kind not in "iu" or (arr.size and not np.isin(arr, (0, 1)).all()):
            raise TypeError(
                f"{name} must be a boolean mask (True/False or 0/1), got dtype {arr.dtype}"
            )
        arr = arr.astype(bool)
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    return arr
