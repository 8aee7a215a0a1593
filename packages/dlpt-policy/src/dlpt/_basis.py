"""Dose bases, the known Gram matrix Λ(x) and the design report.

The response model of DLPT (Zhang, Zeng, Zhan, Zhang, "Personalized Policy Learning through
Discrete Experimentation", ICML 2026) is μ(x, t) = θ(x)ᵀφ(t) with φ a polynomial basis of degree
q in the dose t. We use Legendre polynomials on the tested range [t_min, t_max] mapped to [−1, 1]
(the span of (1, t, …, t^q), better conditioned); the monomial basis (1, t, …, t^q) is kept for
tests of basis invariance.

With known assignment probabilities p_k(x) = P(T = t_k | x),

    Λ(x) = Σ_k p_k(x) φ(t_k) φ(t_k)ᵀ,

which is invertible iff at least q + 1 distinct arms have p_k(x) > 0. The variance inflation
v(t) = φ(t)ᵀ Λ⁻¹ φ(t) is the factor by which outcome noise σ² enters the variance of the
orthogonal score for the constant policy π ≡ t: Var(ψ | x) ⊇ σ² v(t) (because E φ(T)φ(T)ᵀ = Λ).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.polynomial import legendre as L
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_choice, check_finite_array, check_positive_int

BASES = ("legendre", "monomial")
ProbsLike = ArrayLike | Callable[[NDArray[np.float64]], ArrayLike]


@dataclass(frozen=True)
class Basis:
    """Polynomial basis φ(t) ∈ R^{q+1} on the tested range [lo, hi].

    Attributes:
        degree: q.
        lo, hi: t_min and t_max of the tested arms (the Legendre map sends them to −1 and 1).
        kind: ``"legendre"`` or ``"monomial"`` (1, t, …, t^q in the raw dose).
    """

    degree: int
    lo: float
    hi: float
    kind: str = "legendre"

    @property
    def dim(self) -> int:
        return self.degree + 1

    def _u(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        return (2.0 * t - self.lo - self.hi) / (self.hi - self.lo)

    def __call__(self, t: ArrayLike) -> NDArray[np.float64]:
        """φ(t) for every dose: shape ``t.shape + (q + 1,)``."""
        t = np.asarray(t, dtype=np.float64)
        if self.kind == "legendre":
            return L.legvander(self._u(t), self.degree)
        return np.polynomial.polynomial.polyvander(t, self.degree)

    def derivative(self, t: ArrayLike) -> NDArray[np.float64]:
        """dφ/dt at every dose: shape ``t.shape + (q + 1,)``."""
        t = np.asarray(t, dtype=np.float64)
        out = np.zeros((*t.shape, self.dim))
        if self.kind == "legendre":
            u = self._u(t)
            for j in range(1, self.dim):
                e = np.zeros(self.dim)
                e[j] = 1.0
                out[..., j] = L.legval(u, L.legder(e)) * 2.0 / (self.hi - self.lo)
        else:
            for j in range(1, self.dim):
                out[..., j] = j * t ** (j - 1)
        return out

    def argmax(self, theta: NDArray[np.float64]) -> NDArray[np.float64]:
        """Plug-in dose argmax_{t ∈ [lo, hi]} θ_iᵀφ(t) for every row of ``theta`` (n, q+1).

        Closed form for q ≤ 2 (vertex of the parabola when concave, else the better end);
        for q ≥ 3 a 401-point grid refined by parabolic interpolation on the best cell.
        """
        theta = np.asarray(theta, dtype=np.float64)
        ends = np.array([self.lo, self.hi])
        if self.degree <= 2:
            cand = [np.full(theta.shape[0], self.lo), np.full(theta.shape[0], self.hi)]
            if self.degree == 2:
                # power coefficients in t of θᵀφ(t): c0 + c1 t + c2 t²
                coef = theta @ self._power_matrix()
                c1, c2 = coef[:, 1], coef[:, 2]
                with np.errstate(divide="ignore", invalid="ignore"):
                    v = np.where(c2 < 0, -c1 / (2 * c2), self.lo)
                cand.append(np.clip(v, *ends))
            c = np.stack(cand, axis=1)
            vals = np.einsum("nk,nck->nc", theta, self(c))
            return c[np.arange(c.shape[0]), np.argmax(vals, axis=1)]
        grid = np.linspace(self.lo, self.hi, 401)
        vals = theta @ self(grid).T
        j = np.clip(np.argmax(vals, axis=1), 1, grid.size - 2)
        rows = np.arange(theta.shape[0])
        f0, f1, f2 = vals[rows, j - 1], vals[rows, j], vals[rows, j + 1]
        denom = f0 - 2 * f1 + f2
        h = grid[1] - grid[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            shift = np.where(denom < 0, 0.5 * (f0 - f2) / denom, 0.0)
        refined = grid[j] + np.clip(shift, -1, 1) * h
        best = np.argmax(vals, axis=1)
        edge = (best == 0) | (best == grid.size - 1)
        return np.where(edge, grid[best], refined)

    def _power_matrix(self) -> NDArray[np.float64]:
        """M with φ(t) = M (1, t, …, t^q): row j holds the power coefficients of φ_j in t."""
        M = np.zeros((self.dim, self.dim))
        for j in range(self.dim):
            if self.kind == "monomial":
                M[j, j] = 1.0
                continue
            poly = L.Legendre.basis(j, domain=[self.lo, self.hi]).convert(
                kind=np.polynomial.Polynomial
            )
            M[j, : poly.coef.size] = poly.coef
        return M


def make_basis(degree: int, arms: NDArray[np.float64], kind: str = "legendre") -> Basis:
    """The basis of degree ``degree`` on the range of ``arms`` (validated)."""
    check_positive_int(degree, "degree")
    check_choice(kind, "basis", BASES)
    return Basis(int(degree), float(np.min(arms)), float(np.max(arms)), kind)


def check_arms(arms: ArrayLike, degree: int | None = None) -> NDArray[np.float64]:
    """Validate tested dose levels: 1-D, finite, distinct, and K ≥ q + 1 when ``degree`` given."""
    a = check_finite_array(arms, "arms", ndim=1)
    if a.size < 2:
        raise ValueError(f"arms must hold at least 2 distinct dose levels, got {a.size}")
    gaps = np.diff(np.sort(a))
    if (gaps <= 1e-9 * max(1.0, float(np.ptp(a)))).any():
        raise ValueError(f"arms must be distinct dose levels, got repeated values in {a.tolist()}")
    if degree is not None and a.size < degree + 1:
        raise ValueError(
            f"degree {degree} needs K >= q + 1 = {degree + 1} distinct arms with p_k > 0, "
            f"got K = {a.size} arms"
        )
    return a


def resolve_probs(probs: Any, X: NDArray[np.float64] | None, K: int) -> NDArray[np.float64]:
    """Assignment probabilities as an (n, K) array, or (K,) when constant; validated.

    ``probs`` is a (K,) vector, an (n, K) array or a callable X → (n, K). Entries must be
    > 0 and rows must sum to 1 (tolerance 1e-8).
    """
    if probs is None:
        raise ValueError(
            "probs is required: dlpt needs known assignment probabilities; "
            "for observational data use econml"
        )
    if callable(probs):
        if X is None:
            raise ValueError("probs is a callable of X, so X must be given")
        p = check_finite_array(probs(X), "probs(X)", ndim=2)
        name = "probs(X)"
    else:
        p = check_finite_array(probs, "probs", ndim=(1, 2))
        name = "probs"
    n = None if X is None else X.shape[0]
    if p.ndim == 1 and p.shape != (K,):
        raise ValueError(f"{name} must have shape ({K},) or (n, {K}), got {p.shape}")
    if p.ndim == 2 and (p.shape[1] != K or (n is not None and p.shape[0] != n)):
        want = f"({'n' if n is None else n}, {K})"
        raise ValueError(f"{name} must have shape ({K},) or {want}, got {p.shape}")
    if (p <= 0).any():
        raise ValueError(f"{name} must be > 0 for every arm (positivity), got min {float(p.min())}")
    sums = p.sum(axis=-1)
    if (np.abs(sums - 1) > 1e-8).any():
        bad = float(np.atleast_1d(sums)[np.argmax(np.abs(np.atleast_1d(sums) - 1))])
        raise ValueError(f"{name} must sum to 1 over arms (tolerance 1e-8), got {bad}")
    return p


def gram(basis: Basis, arms: NDArray[np.float64], probs: NDArray[np.float64]) -> NDArray:
    """Λ = Σ_k p_k φ(t_k)φ(t_k)ᵀ: shape (q+1, q+1) for (K,) probs, (n, q+1, q+1) for (n, K)."""
    Phi = basis(arms)  # (K, q+1)
    if probs.ndim == 1:
        return Phi.T @ (probs[:, None] * Phi)
    return np.einsum("nk,ka,kb->nab", probs, Phi, Phi)


def solve_gram(lam: NDArray[np.float64], rhs: NDArray[np.float64]) -> NDArray[np.float64]:
    """Λ(x_i)⁻¹ rhs_i for each row of ``rhs`` (n, q+1); Λ shared (2-D) or per unit (3-D)."""
    if lam.ndim == 2:
        return np.linalg.solve(lam, rhs.T).T
    return np.linalg.solve(lam, rhs[..., None])[..., 0]


@dataclass(frozen=True)
class DesignReport:
    """Which dose levels a design evaluates precisely.

    Attributes:
        t: dose grid (covering the tested range).
        inflation: v(t) = φ(t)ᵀΛ⁻¹φ(t) (averaged over units when p depends on x); the noise
            variance of V̂(π ≡ t) is ≈ σ² v(t) / n.
        arms, probs: the design.
        degree: q.
        condition_number: cond(Λ) (the mean over units when p depends on x).
    """

    t: NDArray[np.float64]
    inflation: NDArray[np.float64]
    arms: NDArray[np.float64]
    probs: NDArray[np.float64]
    degree: int
    condition_number: float

    def to_text(self, every: int = 10) -> str:
        lines = [
            f"design: arms {np.round(self.arms, 4).tolist()}, degree {self.degree}, "
            f"cond(Λ) {self.condition_number:.3g}",
            "   t       v(t) = φ(t)ᵀΛ⁻¹φ(t)",
        ]
        for t, v in zip(self.t[::every], self.inflation[::every]):
            lines.append(f"  {t:7.4f}  {v:9.3f}")
        return "\n".join(lines)


def design_report(
    arms: ArrayLike,
    probs: ProbsLike,
    degree: int = 2,
    *,
    t_grid: ArrayLike | None = None,
    X: ArrayLike | None = None,
    basis: str = "legendre",
) -> DesignReport:
    """Variance inflation v(t) = φ(t)ᵀΛ⁻¹φ(t) of a K-arm design over a dose grid.

    For the constant policy π ≡ t the orthogonal score's noise term has conditional variance
    σ²(x) v(t), so v tells which untested levels a design can evaluate precisely (at a tested
    arm with q = K − 1, v(t_k) = 1/p_k: the arm's own inverse-propensity weight).

    Args:
        arms: the K tested dose levels.
        probs: (K,) probabilities, (n, K) array or callable X → (n, K) (then ``X`` is needed).
        degree: polynomial degree q (K ≥ q + 1).
        t_grid: doses to report (default: 101 points on [t_min, t_max]).
        X: covariates, when ``probs`` depends on them.
        basis: ``"legendre"`` or ``"monomial"`` (v does not depend on it).

    Examples:
        >>> r = design_report([0.6, 1.0, 1.4], [1 / 3, 1 / 3, 1 / 3], 2, t_grid=[0.6, 1.1])
        >>> [round(float(v), 3) for v in r.inflation]
        [3.0, 2.736]
    """
    degree = check_positive_int(degree, "degree")
    a = check_arms(arms, degree)
    Xa = None if X is None else check_finite_array(X, "X", ndim=2)
    p = resolve_probs(probs, Xa, a.size)
    b = make_basis(degree, a, basis)
    grid = (
        np.linspace(b.lo, b.hi, 101)
        if t_grid is None
        else check_finite_array(t_grid, "t_grid", ndim=1)
    )
    lam = gram(b, a, p)
    F = b(grid)  # (G, q+1)
    if lam.ndim == 2:
        inflation = np.einsum("ga,ga->g", F, np.linalg.solve(lam, F.T).T)
        cond = float(np.linalg.cond(lam))
    else:
        inv = np.linalg.inv(lam)
        inflation = np.einsum("ga,nab,gb->g", F, inv, F) / lam.shape[0]
        cond = float(np.mean(np.linalg.cond(lam)))
    return DesignReport(grid, inflation, a, p, degree, cond)
