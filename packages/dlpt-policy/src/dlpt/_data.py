"""The RCT simulator of the DLPT benchmark, with Monte Carlo true policy values.

x ~ N(0, I_d); z = x₁ + ½x₂x₄; personal optimum t*(x) = 1 + ¼ tanh(2z); curvature
c(x) = 3(1 + ½ tanh x₃); baseline a(x) = 1 + x₅ + ½ sin x₆;

    μ(x, t) = a(x) + c(x)(2 t*(x) t − t²)          ("quadratic": concave in t, maximised at t*)
    μ(x, t) += 2 c(x)(t − 1)³                     ("cubic": outside the span of degree-2 φ)

Y = μ(X, T) + N(0, noise²), T drawn among the arms with known probabilities (uniform by
default, or depending on x₁ for ``probs="covariate"``). The true value of a policy is
V(π) = E_x μ(x, π(x)), computed on 10⁶ fixed draws of x (the same draws for every policy, so
differences between policies carry no Monte Carlo noise of their own beyond the shared draws).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_positive,
    check_positive_int,
    int_from_seed,
    rng_from_seed,
)

from ._basis import check_arms, resolve_probs

Array = NDArray[np.float64]
Policy = Callable[[Array], ArrayLike] | float
TRUTHS = ("quadratic", "cubic")


def t_star(X: Array) -> Array:
    """Personal optimum t*(x) = 1 + ¼ tanh(2(x₁ + ½x₂x₄)) of the quadratic truth."""
    z = X[:, 0] + 0.5 * X[:, 1] * X[:, 3]
    return 1.0 + 0.25 * np.tanh(2.0 * z)


def response(X: Array, t: ArrayLike, truth: str = "quadratic") -> Array:
    """μ(x_i, t_i) (``t`` of shape (n,) or scalar) or μ(x_i, t_g) (``t`` of shape (n, G))."""
    t = np.asarray(t, dtype=np.float64)
    ts = t_star(X)
    c = 3.0 * (1.0 + 0.5 * np.tanh(X[:, 2]))
    a = 1.0 + X[:, 4] + 0.5 * np.sin(X[:, 5])
    if t.ndim == 2:
        ts, c, a = ts[:, None], c[:, None], a[:, None]
    mu = a + c * (2.0 * ts * t - t**2)
    if truth == "cubic":
        mu = mu + 2.0 * c * (t - 1.0) ** 3
    return mu


def covariate_probs(X: Array, K: int) -> Array:
    """x-dependent design: arm k's weight tilts with x₁ (mixed with uniform, p_k ≥ 0.1/K·…)."""
    s = np.tanh(X[:, 0])[:, None] * np.linspace(-1.0, 1.0, K)[None, :]
    w = np.exp(s)
    p = w / w.sum(axis=1, keepdims=True)
    return 0.7 * p + 0.3 / K


@lru_cache(maxsize=4)
def _mc_draws(d: int, n_mc: int, seed: int) -> Array:
    return np.random.default_rng(seed).standard_normal((n_mc, d))


def evaluate_policy(policy: Policy, X: Array) -> Array:
    """π(X) as a float array of shape (n,) (a constant policy is broadcast)."""
    if callable(policy):
        out = np.asarray(policy(X), dtype=np.float64)
    else:
        try:
            out = np.full(X.shape[0], float(policy))
        except (TypeError, ValueError):
            raise ValueError(
                "policy must be a callable X -> doses (n,) or a constant dose, got "
                f"{type(policy).__name__} of shape {np.shape(policy)}"
            ) from None
    if out.shape != (X.shape[0],):
        raise ValueError(f"policy must return doses of shape ({X.shape[0]},), got {out.shape}")
    if not np.isfinite(out).all():
        raise ValueError("policy must return finite doses, got nan or inf")
    return out


@dataclass(frozen=True)
class RCTData:
    """A simulated randomised trial with its generating truth.

    Attributes:
        X (n, d), t (n,), y (n,): the trial.
        arms (K,): tested dose levels; probs: (K,) or (n, K) known assignment probabilities.
        truth, noise: the generator's settings.
    """

    X: Array
    t: Array
    y: Array
    arms: Array
    probs: Array
    truth: str
    noise: float
    probs_kind: str = "uniform"

    def mu(self, X: Array, t: ArrayLike) -> Array:
        """The true response μ(x, t)."""
        return response(np.asarray(X, dtype=np.float64), t, self.truth)

    def t_star(self, X: Array) -> Array:
        """argmax over t ∈ [t_min, t_max] of the true μ(x, ·) (closed form or grid)."""
        X = np.asarray(X, dtype=np.float64)
        if self.truth == "quadratic":
            return np.clip(t_star(X), self.arms.min(), self.arms.max())
        grid = np.linspace(self.arms.min(), self.arms.max(), 801)
        return grid[np.argmax(self.mu(X, np.broadcast_to(grid, (X.shape[0], grid.size))), 1)]

    def best_arm(self, X: Array) -> Array:
        """Oracle best tested arm per user, argmax_k μ(x, t_k)."""
        X = np.asarray(X, dtype=np.float64)
        vals = self.mu(X, np.broadcast_to(self.arms, (X.shape[0], self.arms.size)))
        return self.arms[np.argmax(vals, axis=1)]

    def true_value(self, policy: Policy, n_mc: int = 1_000_000, seed: SeedLike = 20260205) -> float:
        """V(π) = E_x μ(x, π(x)) on ``n_mc`` fixed draws of x (chunked)."""
        n_mc = check_positive_int(n_mc, "n_mc")
        Xmc = _mc_draws(self.X.shape[1], n_mc, int_from_seed(seed, bits=63))
        total = 0.0
        for start in range(0, Xmc.shape[0], 1 << 17):
            Xc = Xmc[start : start + (1 << 17)]
            total += float(self.mu(Xc, evaluate_policy(policy, Xc)).sum())
        return total / Xmc.shape[0]

    def gap(self, n_mc: int = 1_000_000) -> dict[str, float]:
        """V(t*), max_k V(t_k), the gap between them and the oracle best-arm share of it."""
        v_star = self.true_value(self.t_star, n_mc)
        v_arms = [self.true_value(float(a), n_mc) for a in self.arms]
        v_best_arm = self.true_value(self.best_arm, n_mc)
        gap = v_star - max(v_arms)
        return {
            "v_star": v_star,
            "best_single_arm": max(v_arms),
            "gap": gap,
            "oracle_best_arm_share": (v_best_arm - max(v_arms)) / gap,
        }


def simulate_rct(
    n: int,
    d: int = 10,
    arms: ArrayLike = (0.6, 1.0, 1.4),
    noise: float = 1.0,
    truth: str = "quadratic",
    probs: Any = None,
    seed: SeedLike = 0,
) -> RCTData:
    """Draw a K-arm randomised trial from the DLPT benchmark generator (see module docstring).

    Args:
        n: units.
        d: covariate dimension (≥ 6: x₁…x₆ enter μ).
        arms: tested dose levels.
        noise: outcome noise standard deviation.
        truth: ``"quadratic"`` or ``"cubic"``.
        probs: ``None`` (uniform), a (K,) vector, or ``"covariate"`` (p depends on x₁).
        seed: random seed.

    Examples:
        >>> data = simulate_rct(1000, seed=0)
        >>> data.X.shape, sorted(set(data.t.tolist()))
        ((1000, 10), [0.6, 1.0, 1.4])
        >>> round(data.true_value(1.0, n_mc=100_000), 2)
        4.0
    """
    n = check_positive_int(n, "n", minimum=2)
    d = check_positive_int(d, "d", minimum=6)
    a = check_arms(arms)
    noise = check_positive(noise, "noise", strict=False)
    check_choice(truth, "truth", TRUTHS)
    rng = rng_from_seed(seed)
    X = rng.standard_normal((n, d))
    kind = "uniform"
    if probs is None:
        p: Array = np.full(a.size, 1.0 / a.size)
    elif isinstance(probs, str):
        check_choice(probs, "probs", ["covariate"])
        p, kind = covariate_probs(X, a.size), "covariate"
    else:
        p, kind = resolve_probs(probs, X, a.size), "given"
    pr = np.broadcast_to(p, (n, a.size))
    u = rng.random(n)
    k = np.minimum((u[:, None] > np.cumsum(pr, axis=1)).sum(axis=1), a.size - 1)
    t = a[k]
    y = response(X, t, truth) + noise * rng.standard_normal(n)
    return RCTData(X, t, y, a, p, truth, noise, kind)
