"""Evaluation: displacement errors of K samples, calibration, and a public equivariance check.

* :func:`evaluate`: ADE/FDE of the sample mean over K, mean-over-K ADE/FDE, minADE@K and
  minFDE@K (all from :mod:`icml26_shared.metrics`).
* :func:`energy_score`: ``ES = E‖X − y‖ − ½ E‖X − X'‖`` per window (proper scoring rule for
  the K-sample law; Gneiting & Raftery 2007), averaged.
* :func:`spread_skill`: ratio of the ensemble spread to the RMSE of the ensemble mean (≈ 1 for
  a calibrated ensemble, < 1 overconfident).
* :func:`bond_length_w1`: the Wasserstein-1 distance between the bond-length distribution of
  the sampled futures and that of the true futures, per bond (a physical score: noise added
  atom by atom stretches bonds that a model of the dynamics keeps near their lengths).
* :func:`check_equivariance`: ``max ‖f(g·x) − g·f(x)‖ / ‖f(x)‖`` over random roto-translations
  (optionally with a reflection), in the spirit of ``e3nn.utils.assert_equivariant``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import e3nn_jax as e3nn
import jax
import jax.numpy as jnp
import numpy as np

from icml26_shared import metrics
from icml26_shared.checks import check_choice, check_finite_array, check_positive_int

from ._model import check_key

__all__ = [
    "bond_length_w1",
    "check_equivariance",
    "energy_score",
    "evaluate",
    "spread_skill",
    "window_scores",
]


def _samples_target(samples: Any, target: Any) -> tuple[np.ndarray, np.ndarray]:
    s = check_finite_array(samples, "samples", ndim=5)
    t = check_finite_array(target, "target", ndim=4)
    if s.shape[:1] + s.shape[2:] != t.shape:
        raise ValueError(f"samples must have shape (B, K, *{t.shape[1:]}), got {s.shape}")
    return s, t


def evaluate(samples: Any, target: Any) -> dict[str, float]:
    """Errors of ``samples`` ``(B, K, F, N, 3)`` against ``target`` ``(B, F, N, 3)``.

    Returns:
        ``ade``/``fde`` (averaged over the K samples), ``mean_ade``/``mean_fde`` (of the sample
        mean), ``min_ade``/``min_fde`` (best of K per window).
    """
    s, t = _samples_target(samples, target)
    return {
        "ade": metrics.ade(s, t[:, None]),
        "fde": metrics.fde(s, t[:, None]),
        "mean_ade": metrics.ade(s.mean(axis=1), t),
        "mean_fde": metrics.fde(s.mean(axis=1), t),
        "min_ade": metrics.min_ade(s, t),
        "min_fde": metrics.min_fde(s, t),
    }


def window_scores(samples: Any, target: Any) -> dict[str, np.ndarray]:
    """Per-window scores ``(B,)`` of ``samples`` ``(B, K, F, N, 3)`` against ``target``:
    ``min_ade``, ``min_fde`` (best of K), ``ade`` (mean over K) and ``energy``
    (``E‖X − y‖ − ½ E‖X − X'‖``, Frobenius norm over frames and nodes, the unbiased
    ``K(K − 1)`` pair average). Their means are :func:`evaluate`'s and :func:`energy_score`'s;
    per window they give paired differences between methods on the same windows."""
    s, t = _samples_target(samples, target)
    B, K = s.shape[:2]
    d = np.linalg.norm(s - t[:, None], axis=-1)  # (B, K, F, N)
    ade_k = d.mean(axis=(2, 3))
    fde_k = d[:, :, -1].mean(axis=-1)
    flat = s.reshape(B, K, -1).astype(np.float64)
    y = t.reshape(B, 1, -1).astype(np.float64)
    skill = np.linalg.norm(flat - y, axis=-1).mean(axis=1)
    pair = np.linalg.norm(flat[:, :, None] - flat[:, None], axis=-1).sum(axis=(1, 2))
    spread = pair / (K * (K - 1)) if K > 1 else np.zeros(B)
    return {
        "min_ade": ade_k.min(axis=1),
        "min_fde": fde_k.min(axis=1),
        "ade": ade_k.mean(axis=1),
        "energy": skill - 0.5 * spread,
    }


def bond_length_w1(samples: Any, target: Any, bonds: Any) -> np.ndarray:
    """Per-bond Wasserstein-1 distances ``(E,)`` between bond lengths of ``samples``
    ``(B, K, F, N, 3)`` (pooled over windows, samples and frames) and of ``target``
    ``(B, F, N, 3)`` (pooled over windows and frames); ``bonds`` is ``(E, 2)`` atom indices.

    Uses :func:`scipy.stats.wasserstein_distance` (the L1 distance between the empirical CDFs).

    Raises:
        ValueError: mismatched shapes, non-finite coordinates or bond indices out of range.
    """
    from scipy.stats import wasserstein_distance

    s, t = _samples_target(samples, target)
    b = np.asarray(bonds)
    n = t.shape[-2]
    if b.ndim != 2 or b.shape[1] != 2 or b.shape[0] < 1:
        raise ValueError(f"bonds must have shape (E, 2) with E >= 1, got {b.shape}")
    if not np.issubdtype(b.dtype, np.integer) or b.min() < 0 or b.max() >= n:
        raise ValueError(
            f"bonds must be integer atom indices in [0, {n}), got {b.min()}..{b.max()}"
        )

    def lengths(x: np.ndarray) -> np.ndarray:
        d = x[..., b[:, 0], :] - x[..., b[:, 1], :]
        return np.sqrt(np.sum(d.astype(np.float64) ** 2, axis=-1)).reshape(-1, len(b))

    ls, lt = lengths(s), lengths(t)
    return np.array([wasserstein_distance(ls[:, e], lt[:, e]) for e in range(len(b))])


def energy_score(samples: Any, target: Any) -> float:
    """Mean energy score ``E‖X − y‖ − ½ E‖X − X'‖`` (Frobenius norm over frames and nodes;
    Gneiting & Raftery 2007): a proper scoring rule for the K-sample predictive law."""
    return float(np.mean(window_scores(samples, target)["energy"]))


def spread_skill(samples: Any, target: Any) -> float:
    """Spread/skill ratio ``sqrt(mean var_K) / RMSE(sample mean)`` with the K/(K−1) and
    (K+1)/K finite-ensemble corrections (1 for a calibrated ensemble)."""
    s, t = _samples_target(samples, target)
    K = s.shape[1]
    if K < 2:
        raise ValueError(f"samples must hold K >= 2 samples per window, got {K}")
    var = s.var(axis=1, ddof=1).mean()
    mse = np.mean((s.mean(axis=1) - t) ** 2)
    return float(np.sqrt(var) / np.sqrt(mse * K / (K + 1)))


def check_equivariance(
    fn: Callable[..., Any],
    points: Sequence[Any],
    vectors: Sequence[Any] = (),
    *,
    output: str = "vector",
    key: jax.Array,
    n_trials: int = 20,
    reflect: bool = False,
    translate: bool = True,
) -> float:
    """Largest relative equivariance error of ``fn(*points, *vectors)``.

    Each trial draws ``R = e3nn.rand_matrix`` (times ``−I`` when ``reflect``) and a translation
    ``t``; points map to ``x Rᵀ + t``, vectors to ``v Rᵀ``. The output is a ``"vector"``
    (expected ``out Rᵀ``) or a ``"point"`` (expected ``out Rᵀ + t``).

    Returns:
        ``max_trials ‖fn(g·inputs) − g·fn(inputs)‖ / ‖fn(inputs)‖``.
    """
    check_key(key)
    check_choice(output, "output", ("vector", "point"))
    n = check_positive_int(n_trials, "n_trials")
    base = jnp.asarray(fn(*points, *vectors))
    dtype = base.dtype
    worst = 0.0
    for k in jax.random.split(key, n):
        k_r, k_t = jax.random.split(k)
        R = e3nn.rand_matrix(k_r, (), dtype=dtype)
        if reflect:
            R = -R
        t = jax.random.normal(k_t, (3,), dtype) if translate else jnp.zeros(3, dtype)
        moved = [jnp.asarray(p) @ R.T + t for p in points] + [jnp.asarray(v) @ R.T for v in vectors]
        out = jnp.asarray(fn(*moved))
        expect = base @ R.T + (t if output == "point" else 0.0)
        err = float(jnp.linalg.norm(out - expect) / jnp.maximum(jnp.linalg.norm(base), 1e-30))
        worst = max(worst, err)
    return worst
