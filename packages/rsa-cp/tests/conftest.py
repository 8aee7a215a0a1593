"""Shared fixtures: an independent, deliberately naive SPI fast-form implementation and
coverage helpers (test modules cannot import each other under --import-mode=importlib)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from scipy import stats


def _naive_spi_decision(
    cal: np.ndarray, ref: np.ndarray, alpha: float, beta: float, s_new: float
) -> bool:
    """Loop-based fast form on raw scores, window from scipy.stats.betabinom.ppf."""
    m, n = len(cal), len(ref)
    pooled = sorted([float(x) for x in cal] + [float(x) for x in ref])
    a = [-math.inf, *pooled] + [math.inf] * (m + 2)  # one-based, +inf beyond m + N
    j_level = math.ceil((1 - alpha) * (m + n + 1))
    k = 1 + sum(1 for x in cal if x <= s_new)
    b_lo = int(stats.betabinom.ppf(beta / 2, n, k, m + 2 - k))
    b_hi = int(stats.betabinom.ppf(1 - beta / 2, n, k, m + 2 - k))
    q = max(min(a[k + b_hi], a[j_level]), a[k + b_lo])
    return s_new <= q


@pytest.fixture
def naive_spi() -> Callable[..., bool]:
    return _naive_spi_decision


LAWS = {
    "lognormal": stats.lognorm(1.0),
    "gamma": stats.gamma(2.0),
    "halfnormal": stats.halfnorm(),
}


@pytest.fixture
def score_law() -> dict[str, stats.rv_continuous]:
    """Frozen scipy laws matching rsa_cp.data.regression_scores (for exact cdfs)."""
    return LAWS
