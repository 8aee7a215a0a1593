"""Shared fixtures for the collab-cp tests (no test module imports another)."""

from __future__ import annotations

import numpy as np
import pytest

from icml26_shared.metrics import binomial_tolerance


@pytest.fixture
def rate_tolerance():
    """Tolerance for a mean over splits of a conditional test rate.

    A split's rate has variance ≈ p(1−p)(1/(n_cal_group + 2) + 1/n_test_group) (calibration
    threshold noise plus test noise); the mean over R splits behaves like a binomial proportion
    with n_eff = R / (1/(n_cal_group + 2) + 1/n_test_group) trials.
    """

    def tol(p: float, n_cal_group: np.ndarray, n_test_group: np.ndarray) -> float:
        per = np.mean(1.0 / (np.asarray(n_cal_group) + 2) + 1.0 / np.asarray(n_test_group))
        n_eff = max(1, int(len(n_cal_group) / per))
        return binomial_tolerance(p, n_eff)

    return tol
