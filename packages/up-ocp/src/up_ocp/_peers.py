r"""Salesforce ``online-conformal`` (Bhatnagar et al. 2023) driven on a bare score stream.

Their predictors wrap a Merlion forecaster; with ``model=None`` and the forecast fixed at 0 the
"residual" they see is the score itself, so their FACI, SAOCP and SF-OGD run on exactly the
stream our methods get. The first ``n_calibration`` scores are handed to them as calibration
residuals (their protocol); the thresholds returned are for the remaining rounds, each announced
before the score of that round is revealed.

References:
    A. Bhatnagar, H. Wang, C. Xiong, Y. Bai. "Improved online conformal prediction via strongly
    adaptive online learning." ICML 2023 (code: github.com/salesforce/online_conformal).
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_alpha, check_choice, check_finite_array, check_positive_int

__all__ = ["ONLINE_CONFORMAL_METHODS", "online_conformal_thresholds"]

#: Our name -> (module, class) in ``online_conformal``.
ONLINE_CONFORMAL_METHODS: dict[str, tuple[str, str]] = {
    "faci": ("online_conformal.faci", "FACI"),
    "saocp": ("online_conformal.saocp", "SAOCP"),
    "sf_ogd": ("online_conformal.ogd", "ScaleFreeOGD"),
}


def _peer_class(method: str) -> Any:
    module, name = ONLINE_CONFORMAL_METHODS[method]
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise ImportError(
            "online_conformal_thresholds needs Salesforce's `online-conformal` (PyPI 1.0.2), "
            f"which failed to import: {exc}. `pip install online-conformal` pulls Merlion and "
            "Prophet; `pip install --no-deps online-conformal salesforce-merlion dill` is enough "
            "for FACI, SAOCP and SF-OGD."
        ) from exc


def online_conformal_thresholds(
    method: str, scores: ArrayLike, alpha: float = 0.1, n_calibration: int = 50
) -> NDArray[np.float64]:
    """Thresholds of Salesforce ``online-conformal``'s ``method`` on one score stream.

    Args:
        method: ``"faci"``, ``"saocp"`` or ``"sf_ogd"`` (their ``FACI``, ``SAOCP``,
            ``ScaleFreeOGD``).
        scores: 1-D non-negative finite scores, e.g. ``|y - ŷ|``.
        alpha: miscoverage in (0, 1) (their ``coverage = 1 - alpha``).
        n_calibration: leading scores given to them as calibration residuals (≥ 1).

    Returns:
        ``q`` of length ``len(scores) - n_calibration``: ``q[i]`` is announced before
        ``scores[n_calibration + i]`` is revealed (a miss is ``score > q``).
    """
    check_choice(method, "method", ONLINE_CONFORMAL_METHODS)
    a = check_alpha(alpha)
    s = check_finite_array(scores, "scores", ndim=1)
    n = check_positive_int(n_calibration, "n_calibration")
    if (s < 0).any():
        raise ValueError(f"scores must be >= 0, got {s.min()} at index {int(np.argmin(s))}")
    if s.size <= n:
        raise ValueError(f"scores must be longer than n_calibration={n}, got length {s.size}")
    cls = _peer_class(method)
    import pandas as pd
    from online_conformal.utils import Residuals

    calib = Residuals(1)
    calib.extend(1, [float(v) for v in s[:n]])
    peer = cls(None, None, coverage=1.0 - a, calib_residuals=calib)
    zero = pd.Series([0.0])
    out = np.empty(s.size - n)
    for i, v in enumerate(s[n:]):
        out[i] = peer.predict(1)[1]
        peer.update(pd.Series([float(v)]), zero, 1)
    return out
