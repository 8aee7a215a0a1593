"""Shared helpers: binomial tolerance bounds and a cheap fitted model (tests cannot import
each other under --import-mode=importlib)."""

from __future__ import annotations

import warnings

import pytest
from scipy import stats

from dlpt import DLPT
from dlpt.data import simulate_rct


def binomial_lower(p: float, n: int, level: float = 0.999) -> float:
    """Lower `level` quantile of Binomial(n, p) / n: an observed rate below it is evidence
    (at 1 − level) that the true rate is below p."""
    return float(stats.binom.ppf(1 - level, n, p)) / n


@pytest.fixture
def lower_bound():
    return binomial_lower


@pytest.fixture(scope="session")
def small_fit():
    """A 2-fold, small-network fit on n = 5,000 (shared across tests; read-only)."""
    data = simulate_rct(5000, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = DLPT(degree=2, hidden=(32, 32), folds=2, seed=0).fit(
            data.X, data.t, data.y, data.arms, data.probs
        )
    return data, model
