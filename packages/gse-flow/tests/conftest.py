"""Shared fixtures: tiny windows and models (small enough to compile in seconds)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import gse_flow as g

TINY = dict(
    n_history=3,
    n_future=4,
    node_attr_dim=1,
    irreps_hidden="8x0e+4x1o+2x2e",
    n_layers=2,
    sh_lmax=2,
    cutoff=6.0,
    sigma=0.5,
)


@pytest.fixture(scope="session")
def tiny_windows() -> g.Windows:
    """16 charged N-body windows of 3 + 4 frames, 4 particles."""
    return g.nbody_windows(16, n_history=3, n_future=4, n_particles=4, seed=3)


@pytest.fixture(scope="session")
def tiny_model() -> g.GSEFlow:
    return g.GSEFlow(key=jax.random.PRNGKey(0), **TINY)


@pytest.fixture(scope="session")
def light_model() -> g.GSEFlow:
    """``l <= 1`` variant: compiles about twice as fast, for tests that do not probe ``l = 2``."""
    kw = dict(TINY, irreps_hidden="8x0e+4x1o", sh_lmax=1)
    return g.GSEFlow(key=jax.random.PRNGKey(0), **kw)


@pytest.fixture(scope="session")
def tiny_kwargs() -> dict:
    return dict(TINY)


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(0)
