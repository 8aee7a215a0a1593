"""Shared fixtures: small QPs, a central finite-difference VJP and a relative-error helper."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import dxpp


def _rel(a: Any, b: Any) -> float:
    a = np.asarray(a.toarray() if hasattr(a, "toarray") else a, dtype=np.float64)
    b = np.asarray(b.toarray() if hasattr(b, "toarray") else b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))


@pytest.fixture
def rel() -> Callable[[Any, Any], float]:
    """``‖a − b‖ / ‖b‖`` (Frobenius), densifying sparse matrices."""
    return _rel


@pytest.fixture
def small_qp() -> Callable[[int, int], dxpp.QP]:
    """dQP's random dense QP of size ``n`` with seed ``seed``."""
    return lambda n, seed=0: dxpp.random_dense_qp(n, seed)


@pytest.fixture
def fd_directional() -> Callable[..., float]:
    """Central finite difference of ``L(θ) = gᵀx*(θ)`` along a direction of one argument.

    Uses quadprog (a dual active-set method, exact to round-off) so that a step of 1e-6
    gives ~1e-9 accurate differences.
    """

    def fd(
        qp: dxpp.QP, g: np.ndarray, name: str, direction: np.ndarray, step: float = 1e-6
    ) -> float:
        vals = []
        for sgn in (1.0, -1.0):
            args = dict(qp._asdict())
            args[name] = args[name] + sgn * step * direction
            sol = dxpp.solve_qp(**args, solver="quadprog")
            vals.append(float(g @ sol.x))
        return (vals[0] - vals[1]) / (2 * step)

    return fd
