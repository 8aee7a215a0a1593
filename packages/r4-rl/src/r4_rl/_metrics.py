"""Evaluation metrics: Kendall's τ between predicted and true returns, normalised scores."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from icml26_shared.checks import check_finite_array, check_same_length

__all__ = ["kendall_tau", "normalised_score"]


def kendall_tau(pred: Any, true: Any) -> float:
    """Kendall's τ-b between two return vectors (1: same order, 0: unrelated, −1: reversed;
    0 with a warning when either is constant).

    Example:
        >>> kendall_tau([1.0, 2.0, 3.0], [10.0, 20.0, 30.0])
        1.0
    """
    p = check_finite_array(np.asarray(getattr(pred, "detach", lambda: pred)()), "pred", ndim=1)
    t = check_finite_array(true, "true", ndim=1)
    check_same_length(pred=p, true=t)
    if p.size < 2:
        raise ValueError(f"pred must hold at least 2 returns, got {p.size}")
    from scipy.stats import kendalltau  # imported on first use: scipy.stats takes seconds

    tau = kendalltau(p, t).statistic
    if not np.isfinite(tau):
        which = "pred" if np.ptp(p) == 0 else "true"
        warnings.warn(
            f"kendall_tau is undefined when {which} is constant (all {p.size} values equal): "
            "returning 0.0 (no order)",
            UserWarning,
            stacklevel=2,
        )
        return 0.0
    return round(float(tau), 12)


def normalised_score(j: float, j_rand: float, j_best: float) -> float:
    """``(J − J_rand) / (J_best − J_rand)``: 0 for the random policy, 1 for the reference."""
    if not j_best > j_rand:
        raise ValueError(f"j_best must exceed j_rand, got {j_best} <= {j_rand}")
    return float((j - j_rand) / (j_best - j_rand))
