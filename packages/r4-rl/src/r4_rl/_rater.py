"""A simulated rater: noisy returns binned into ordinal ratings, flips, unused classes, pairs.

``rating = bin(G*(τ) + σ · sd(G*) · ξ)``, ``ξ ~ N(0, 1)``, with bin edges the quantiles of a
reference return pool (balanced classes) or given by the user. With probability ``flip_prob``
a rating moves to an adjacent bin (inwards at the ends). ``unused_bins = u`` mimics a rater who
uses only ``n − u`` classes: ratings are computed with ``n − u`` quantile bins and spread over
``{0, …, n−1}`` (the lowest and highest label always used). Preferences for Bradley–Terry come
from the same noisy returns: ``τ₁ ≻ τ₂`` iff its noisy return is larger.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26_shared.checks import (
    SeedLike,
    check_finite_array,
    check_in_interval,
    check_positive,
    rng_from_seed,
)

__all__ = ["Rater"]


class Rater:
    """Simulated ordinal rater.

    Args:
        n_bins: number of rating classes ``n ≥ 2``.
        noise: ``σ ≥ 0``, noise in units of the reference returns' standard deviation.
        flip_prob: probability in [0, 1] of moving a rating to an adjacent bin.
        unused_bins: classes the rater never uses, ``0 ≤ u ≤ n − 2``.
        edges: ``n − 1`` increasing inner bin edges (skips the quantile fit).
        seed: seed of the rater's noise.

    Example:
        >>> import numpy as np
        >>> rater = Rater(n_bins=3, noise=0.0).fit(np.arange(9.0))
        >>> rater.rate(np.array([0.0, 4.0, 8.0])).tolist()
        [0, 1, 2]
    """

    def __init__(
        self,
        n_bins: int = 5,
        noise: float = 0.1,
        flip_prob: float = 0.0,
        *,
        unused_bins: int = 0,
        edges: Any | None = None,
        seed: SeedLike = 0,
    ) -> None:
        if isinstance(n_bins, bool) or not isinstance(n_bins, int | np.integer) or n_bins < 2:
            raise ValueError(f"n_bins must be an integer >= 2, got {n_bins!r}")
        self.n_bins = int(n_bins)
        self.noise = check_positive(noise, "noise", strict=False)
        self.flip_prob = check_in_interval(flip_prob, "flip_prob", 0, 1, closed=(True, True))
        if (
            isinstance(unused_bins, bool)
            or not isinstance(unused_bins, int | np.integer)
            or not 0 <= unused_bins <= self.n_bins - 2
        ):
            raise ValueError(
                f"unused_bins must be an integer in [0, {self.n_bins - 2}], got {unused_bins!r}"
            )
        self.unused_bins = int(unused_bins)
        self.rng = rng_from_seed(seed)
        self.scale: float | None = None
        self.edges: np.ndarray | None = None
        if edges is not None:
            e = check_finite_array(edges, "edges", ndim=1)
            if e.size != self.n_bins - 1 - self.unused_bins or np.any(np.diff(e) <= 0):
                raise ValueError(
                    f"edges must be {self.n_bins - 1 - self.unused_bins} increasing numbers, got {e.tolist()}"
                )
            self.edges = e

    def fit(self, reference_returns: Any) -> Rater:
        """Set the noise scale ``sd(G*)`` and (unless given) quantile edges from a pool."""
        ref = check_finite_array(reference_returns, "reference_returns", ndim=1)
        if ref.size < 2:
            raise ValueError(f"reference_returns must hold >= 2 returns, got {ref.size}")
        self.scale = float(np.std(ref))
        if self.edges is None:
            k = self.n_bins - self.unused_bins
            edges = np.quantile(ref, np.arange(1, k) / k)
            if np.any(np.diff(edges) <= 0) or (self.noise > 0 and self.scale == 0):
                raise ValueError(
                    f"reference_returns must give {k - 1} increasing quantile edges for {k} "
                    f"rating classes, got {edges.tolist()} from {np.unique(ref).size} distinct "
                    "returns; pass a more varied pool, fewer n_bins, or edges="
                )
            self.edges = edges
        return self

    def _require_fit(self) -> tuple[float, np.ndarray]:
        if self.edges is None or (self.noise > 0 and self.scale is None):
            raise ValueError("the rater must be fitted first: call fit(reference_returns)")
        return (self.scale or 0.0), self.edges

    def noisy_returns(self, returns: Any) -> np.ndarray:
        """``G* + σ · sd(G*) · ξ`` (draws from the rater's generator)."""
        g = check_finite_array(returns, "returns", ndim=1)
        scale, _ = self._require_fit()
        return g + self.noise * scale * self.rng.standard_normal(g.shape)

    def rate(self, returns: Any) -> np.ndarray:
        """Ordinal ratings ``(N,)`` in ``[0, n_bins)`` of true returns ``(N,)``."""
        _, edges = self._require_fit()
        noisy = self.noisy_returns(returns)
        coarse = np.searchsorted(edges, noisy, side="right")
        k = self.n_bins - self.unused_bins
        labels = np.round(np.arange(k) * (self.n_bins - 1) / max(k - 1, 1)).astype(np.int64)
        out = labels[coarse]
        if self.flip_prob > 0:
            flip = self.rng.random(out.shape) < self.flip_prob
            step = np.where(self.rng.random(out.shape) < 0.5, -1, 1)
            step = np.where(out == 0, 1, np.where(out == self.n_bins - 1, -1, step))
            out = np.where(flip, out + step, out)
        return out.astype(np.int64)

    def query(self, returns: Any, budget: int) -> tuple[np.ndarray, np.ndarray]:
        """Rate ``budget`` distinct trajectories drawn from a pool: ``(indices, ratings)``."""
        g = check_finite_array(returns, "returns", ndim=1)
        if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 1:
            raise ValueError(f"budget must be an integer >= 1, got {budget!r}")
        if budget > g.size:
            raise ValueError(f"budget must be at most the pool size {g.size}, got {budget}")
        idx = np.sort(self.rng.choice(g.size, size=int(budget), replace=False))
        return idx, self.rate(g[idx])

    def compare(self, returns: Any, budget: int) -> tuple[np.ndarray, np.ndarray]:
        """``budget`` random pairs of distinct trajectories and their preferences (1: first).

        Each query draws fresh rater noise for both returns.
        """
        g = check_finite_array(returns, "returns", ndim=1)
        if isinstance(budget, bool) or not isinstance(budget, int | np.integer) or budget < 1:
            raise ValueError(f"budget must be an integer >= 1, got {budget!r}")
        if g.size < 2:
            raise ValueError(f"returns must hold >= 2 trajectories, got {g.size}")
        first = self.rng.integers(g.size, size=int(budget))
        second = (first + self.rng.integers(1, g.size, size=int(budget))) % g.size
        pairs = np.stack([first, second], axis=1)
        a = self.noisy_returns(g[first])
        b = self.noisy_returns(g[second])
        return pairs, (a > b).astype(np.float64)
