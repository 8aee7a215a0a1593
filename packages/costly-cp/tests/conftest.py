"""Shared fixtures: a small synthetic classifier population and a regression stream."""

from __future__ import annotations

import numpy as np
import pytest

from icml26_shared.datasets import dirichlet_classifier


@pytest.fixture(scope="session")
def classifier():
    """20,000 points of a K = 10 Dirichlet classifier: ``(probs, labels)``."""
    d = dirichlet_classifier(20_000, 10, concentration=0.1, ai_noise=0.5, human_noise=None, seed=5)
    return d.probs, d.y


@pytest.fixture(scope="session")
def population():
    """A small :class:`~costly_cp._simulate.Population` (fast to build)."""
    from costly_cp._simulate import dirichlet_population

    return dirichlet_population(
        10, concentration=0.1, ai_noise=0.5, size=40_000, n_unlabeled=3_000, seed=2
    )


@pytest.fixture(scope="session")
def regression():
    """Heteroscedastic regression: inputs ``x``, labels ``y`` and a CQR-style base interval."""
    rng = np.random.default_rng(3)
    x = rng.random(6000)
    sigma = 0.2 + x
    y = np.sin(2 * np.pi * x) + sigma * rng.standard_normal(x.size)

    def predict(inputs):
        mu = np.sin(2 * np.pi * inputs)
        half = 0.9 * (0.2 + inputs)  # too narrow: the threshold has to widen it
        return np.stack([mu - half, mu + half], axis=1)

    return x, y, predict


class CountingOracle:
    """Oracle that counts calls and can fail after a given number of labels."""

    def __init__(self, labels, fail_after=None):
        self.labels = labels
        self.calls = []
        self.fail_after = fail_after

    def __call__(self, i):
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise RuntimeError("annotator went home")
        self.calls.append(int(i))
        return int(self.labels[i])


@pytest.fixture
def counting_oracle():
    return CountingOracle
