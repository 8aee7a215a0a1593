"""The public API is exactly what the modules export, and every docstring example runs."""

from __future__ import annotations

import doctest
import importlib

import pytest

import perturbedvae
import perturbedvae.baselines
import perturbedvae.data

MODULES = [
    "perturbedvae._perturbedvae",
    "perturbedvae._data",
    "perturbedvae._metrics",
    "perturbedvae._baselines",
    "perturbedvae._reproduce",
]


def test_public_api_exact():
    assert perturbedvae.__all__ == [
        "PerturbedVAE", "Prediction", "Programs", "background_r2", "energy_distance",
        "pearson_delta", "probe_accuracy",
    ]  # fmt: skip
    assert perturbedvae.data.__all__ == [
        "CONTROL", "Screen", "Split", "canonical_condition", "interaction_score", "read_screen",
        "semisynthetic_pbmc", "simulate_screen",
    ]  # fmt: skip
    assert perturbedvae.baselines.__all__ == [
        "Additive", "CPALike", "ControlMean", "NoSeparationVAE", "Ridge",
    ]  # fmt: skip
    for mod in (perturbedvae, perturbedvae.data, perturbedvae.baselines):
        for name in mod.__all__:
            assert hasattr(mod, name)
    assert isinstance(perturbedvae.__version__, str)


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0
