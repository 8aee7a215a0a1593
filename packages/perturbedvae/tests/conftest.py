"""Shared fixtures: a small synthetic split and a briefly trained model (one torch thread)."""

from __future__ import annotations

import pytest
import torch

from perturbedvae import PerturbedVAE
from perturbedvae.data import simulate_screen


@pytest.fixture(autouse=True)
def torch_threads():
    """Run every test with one torch thread, restoring the previous count."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="session")
def split():
    return simulate_screen(n_cells=40, n_controls=200, n_doubles=5, n_mc=2000, seed=0)


@pytest.fixture(scope="session")
def model(split):
    torch.set_num_threads(1)
    return PerturbedVAE(100, 12, hidden=32).fit(split.train, epochs=3, lr=1e-3, seed=0)
