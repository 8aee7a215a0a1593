"""Voxelwise ridge with a per-voxel λ from inner CV, outer CV on contiguous blocks with gaps.

For standardised X (training-fold mean/std) and centred Y, ``W_v = (XᵀX + λ_v I)⁻¹ XᵀY_v`` via one
SVD ``X = U S Vᵀ``: ``W_v = V diag(s/(s² + λ_v)) Uᵀ Y_v``; intercept ``b = mean(Y)``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from icml26_shared.checks import check_finite_array, check_positive_int

__all__ = ["LAMBDAS", "RidgeFold", "blocked_folds", "fit_ridge", "pearson_cols", "ridge_path"]

LAMBDAS = np.logspace(-2, 6, 17)


def pearson_cols(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson r between matching columns of two (n × v) arrays, or of two vectors (0 where
    either is constant).

    Both must have the same shape (no broadcasting) and be finite.

    >>> pearson_cols(np.array([[1.0, 0.0], [2.0, 1.0], [3.0, 0.0]]),
    ...              np.array([[2.0, 1.0], [4.0, 1.0], [6.0, 1.0]])).tolist()
    [1.0, 0.0]
    """
    a = check_finite_array(a, "a", ndim=(1, 2))
    b = check_finite_array(b, "b", ndim=(1, 2))
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    a = a - a.mean(0)
    b = b - b.mean(0)
    den = np.sqrt((a * a).sum(0) * (b * b).sum(0))
    return np.where(den > 0, (a * b).sum(0) / np.where(den > 0, den, 1.0), 0.0)


def blocked_folds(n: int, k: int, gap: int = 5) -> list[tuple[np.ndarray, np.ndarray]]:
    """K contiguous test blocks (no shuffling); ``gap`` rows at each test-block edge are dropped
    from training."""
    if k < 2 or k > n:
        raise ValueError(f"folds must be an integer in [2, {n}], got {k}")
    edges = np.linspace(0, n, k + 1).astype(int)
    out = []
    for a, b in itertools.pairwise(edges):
        test = np.arange(a, b)
        keep = np.ones(n, bool)
        keep[max(0, a - gap) : min(n, b + gap)] = False
        out.append((np.flatnonzero(keep), test))
    return out


def check_lambdas(lambdas: Any, name: str = "lambdas") -> np.ndarray:
    """Ridge penalties: a non-empty 1-D array of finite values > 0 (a negative penalty makes
    ``s / (s² + λ)`` blow up or flip sign; it is refused, not used)."""
    lam = check_finite_array(lambdas, name, ndim=(0, 1)).reshape(-1)
    if (lam <= 0).any():
        raise ValueError(f"{name} must all be > 0, got {lam[lam <= 0][0]}")
    return lam


def ridge_path(x: np.ndarray, y: np.ndarray, lambdas: np.ndarray) -> np.ndarray:
    """Weights for each λ: array (n_λ, p, v) for centred ``x``, ``y``."""
    lambdas = check_lambdas(lambdas)
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    uty = u.T @ y
    return np.stack([vt.T @ ((s / (s**2 + lam))[:, None] * uty) for lam in lambdas])


@dataclass
class RidgeFold:
    """One fitted fold: standardisation (``mean``, ``std``), weights ``w`` (p × v), intercept
    ``b`` (v), per-voxel ``lam``."""

    mean: np.ndarray
    std: np.ndarray
    w: np.ndarray
    b: np.ndarray
    lam: np.ndarray

    def predict(self, x: np.ndarray) -> np.ndarray:
        """ŷ = b + ((x − mean)/std) W."""
        return self.b + ((x - self.mean) / self.std) @ self.w

    def folded(self) -> tuple[np.ndarray, np.ndarray]:
        """Weights with the standardisation folded in: ŷ = b' + x W'."""
        w = self.w / self.std[:, None]
        return w, self.b - self.mean @ w


def fit_ridge(
    x: np.ndarray,
    y: np.ndarray,
    *,
    lambdas: np.ndarray = LAMBDAS,
    inner: int = 3,
    lam: np.ndarray | None = None,
) -> RidgeFold:
    """Standardise ``x``, choose λ per voxel by ``inner``-fold contiguous CV (unless ``lam`` is
    given), refit on all rows."""
    x = check_finite_array(x, "x", ndim=2)
    y = check_finite_array(y, "y", ndim=2)
    if len(x) != len(y):
        raise ValueError(f"x and y must have the same rows, got {len(x)} and {len(y)}")
    lambdas = check_lambdas(lambdas)
    inner = check_positive_int(inner, "inner", minimum=2)
    if lam is not None:
        lam = check_lambdas(lam, "lam")
        if lam.shape != (y.shape[1],) and lam.size != 1:
            raise ValueError(
                f"lam must hold one penalty per voxel ({y.shape[1]},), got {lam.shape}"
            )
    mean = x.mean(0)
    std = x.std(0)
    std = np.where(std > 0, std, 1.0)
    xs = (x - mean) / std
    ym = y.mean(0)
    if lam is None:
        err = np.zeros((len(lambdas), y.shape[1]))
        for tr, te in blocked_folds(len(x), inner, gap=0):
            mu, sd = xs[tr].mean(0), xs[tr].std(0)
            sd = np.where(sd > 0, sd, 1.0)
            xt = (xs[tr] - mu) / sd
            ws = ridge_path(xt, y[tr] - y[tr].mean(0), lambdas)
            xv = (xs[te] - mu) / sd
            for li in range(len(lambdas)):
                err[li] += ((y[te] - y[tr].mean(0) - xv @ ws[li]) ** 2).sum(0)
        lam = lambdas[np.argmin(err, axis=0)]
    lam = np.asarray(lam, dtype=float)
    u, s, vt = np.linalg.svd(xs, full_matrices=False)
    uty = u.T @ (y - ym)
    w = np.empty((x.shape[1], y.shape[1]))
    for val in np.unique(lam):
        cols = lam == val
        w[:, cols] = vt.T @ ((s / (s**2 + val))[:, None] * uty[:, cols])
    return RidgeFold(mean, std, w, ym, lam)
