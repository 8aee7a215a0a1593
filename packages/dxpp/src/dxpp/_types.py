"""Result records shared by the forward and backward passes, and the one spectral-norm
estimate both use (kept here so that ``_solve`` and ``_backward`` do not import each other)."""

from __future__ import annotations

import functools
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "POWER_ITERATIONS",
    "FloatArray",
    "Gradient",
    "Matrix",
    "MatrixLike",
    "QPGrad",
    "QPSolution",
    "power_start",
    "spectral_norm",
]

#: a float array (float64, or float32 where the input was float32)
FloatArray = NDArray[np.floating[Any]]
#: a dense matrix (anything numpy converts) or a scipy sparse matrix
MatrixLike = ArrayLike | sp.spmatrix | sp.sparray


class Matrix(Protocol):
    """A checked matrix: a float array or a scipy sparse matrix (what the power iteration
    needs of it)."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    def __matmul__(self, other: NDArray[np.float64], /) -> Any: ...


#: a gradient: dense, on a sparse input's pattern, or None for an absent G/A
Gradient = FloatArray | sp.spmatrix | sp.sparray | None

#: backward error of the reduced KKT system below which an unconverged penalty solve is kept;
#: above it (and without convergence) the solve is redone with the weights ×10³, at most twice
RETRY_RESIDUAL = 1e-12

#: Warned when the penalty matrix ``Q + CᵀWC`` needs a ridge to factor: ``Q`` is singular on
#: the directions the active constraints leave free, so the minimiser is not unique there and
#: the gradient along them is the ridge's choice, not a derivative of the problem.
NON_UNIQUE_WARNING = (
    "the penalty matrix Q + CᵀWC is singular: Q is flat on directions the active constraints "
    "leave free, so the QP's minimiser is not unique and its gradient along them is set by a "
    "ridge (it can be huge). Make Q positive definite on those directions, add constraints, "
    'or use mode="exact" (the minimum-norm active-set solve)'
)
POWER_ITERATIONS = 5


class QPSolution(NamedTuple):
    """Primal–dual solution of a QP (leading batch axis when the input had one).

    Attributes:
        x: primal solution ``(n,)``.
        nu: inequality multipliers ``(m,)``, ``ν ≥ 0``.
        mu: equality multipliers ``(p,)``.
        active: boolean mask of the active inequalities ``(m,)``.
        weakly_active: active inequalities with (numerically) zero multiplier ``(m,)``.
        solver: the ``qpsolvers`` backend used.
    """

    x: FloatArray
    nu: FloatArray
    mu: FloatArray
    active: NDArray[np.bool_]
    weakly_active: NDArray[np.bool_]
    solver: str


GradT = TypeVar("GradT")


class QPGrad(NamedTuple, Generic[GradT]):
    """Gradients of a scalar loss w.r.t. ``(Q, q, G, h, A, b)`` (``None`` for absent G/A):
    ``QPGrad[Gradient]`` from the numpy core, ``QPGrad[torch.Tensor | None]`` from
    :func:`dxpp.baselines.torch_kkt_vjp`."""

    Q: GradT
    q: GradT
    G: GradT
    h: GradT
    A: GradT
    b: GradT


@functools.lru_cache(maxsize=16)
def _power_start(n: int) -> NDArray[np.float64]:
    v = np.random.default_rng(0).uniform(0.5, 1.5, size=n)
    v /= np.linalg.norm(v)
    v.setflags(write=False)
    return v


def power_start(n: int) -> NDArray[np.float64]:
    """The fixed start vector of the power iteration (the same in numpy, torch and JAX)."""
    return _power_start(int(n))


def spectral_norm(Q: Matrix, iters: int = POWER_ITERATIONS) -> float:
    """Power-iteration estimate of ‖Q‖₂ for a PSD matrix (dense or sparse), O(iters·nnz)."""
    v = power_start(Q.shape[0])
    lam = 0.0
    for _ in range(iters):
        u = Q @ v
        lam = float(np.linalg.norm(u))
        if lam == 0.0:
            return 0.0
        v = u / lam
    return lam
