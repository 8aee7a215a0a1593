"""Shared fixtures of the up-ocp tests (no test module imports another)."""

from __future__ import annotations

import numpy as np
import pytest

from icml26_shared.datasets import score_stream

ALPHA = 0.1


@pytest.fixture
def alpha() -> float:
    return ALPHA


@pytest.fixture
def stationary() -> np.ndarray:
    """(3, 3000) stationary |N(0, 1)| scores."""
    return score_stream("stationary", 3000, n_streams=3, seed=0).scores


@pytest.fixture
def change_point_small() -> np.ndarray:
    """(2, 600) change-point scores, for exactness tests."""
    return score_stream("change_point", 600, n_streams=2, seed=1).scores


@pytest.fixture
def jax_x64():
    """Enable float64 in jax for one test only (no global config change)."""
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        yield jax
