"""Acceptance item 6: the log-sMAPE metric."""

from __future__ import annotations

import numpy as np
import pytest

from bittokens import exact_match, log_smape, normalised_accuracy


def test_log_smape_reference_values():
    y = np.array([1.0, -3.5, 1e-12, 7e14])
    assert log_smape(y, y) == 1.0
    assert abs(log_smape(y, y * (1 + 1e-8)) - 0.5534) <= 1e-3
    assert log_smape(y, -y) == 0.0
    assert log_smape(y, np.full(4, np.nan)) == 0.0
    assert log_smape(y, np.full(4, np.inf)) == 0.0
    assert log_smape([0.0], [0.0]) == 1.0


def test_log_smape_counts_digits():
    y = np.full(1, 1.234567)
    scores = [log_smape(y, y * (1 + 10.0**-k)) for k in range(1, 15)]
    assert np.all(np.diff(scores) > 0)
    per = log_smape(np.ones(3), np.array([1.0, np.nan, -1.0]), reduce=False)
    assert per.tolist() == [1.0, 0.0, 0.0]


def test_exact_and_normalised_accuracy():
    assert exact_match([1.0, 2.0], [1.0, 2.5]) == 0.5
    assert exact_match(np.ones((2, 3)), np.array([[1, 1, 1], [1, 0, 1.0]])) == 0.5
    assert normalised_accuracy([0, 1, 2, 3, 4], [0, 1, 2, 3, 4]) == 1.0
    assert normalised_accuracy([0, 1, 2, 3, 4], [1, 2, 3, 4, 0]) == -0.25


def test_shape_mismatch():
    with pytest.raises(ValueError, match="y_hat must have the shape"):
        log_smape([1.0, 2.0], [1.0])
