"""Shared fixtures for the arm-ebm tests (no test module imports another)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest


@pytest.fixture
def x64():
    """jax with float64 for the duration of one test (restored afterwards)."""
    jax = pytest.importorskip("jax")
    with jax.enable_x64(True):
        yield jax


@pytest.fixture
def enumerate_sequences():
    """Independent enumeration of a space's complete sequences (itertools, no trie)."""

    def run(A: int, T: int, eos: int | None) -> list[tuple[int, ...]]:
        if eos is None:
            return list(itertools.product(range(A), repeat=T))
        letters = [a for a in range(A) if a != eos]
        out = []
        for n in range(T):
            out += [(*p, eos) for p in itertools.product(letters, repeat=n)]
        return out

    return run


@pytest.fixture
def brute_arm():
    """Pure-Python reference: π(a|s) = Σ_{y ⊒ s⊕a} e^{R(y)} / Σ_{y ⊒ s} e^{R(y)} by dicts."""

    def run(seqs: list[tuple[int, ...]], R: np.ndarray):
        mass: dict[tuple[int, ...], float] = {}
        for y, v in zip(seqs, R):
            w = float(np.exp(v))
            for t in range(len(y) + 1):
                mass[y[:t]] = mass.get(y[:t], 0.0) + w
        return mass

    return run
