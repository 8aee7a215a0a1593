"""Metrics comparing two word-attribution vectors (indexed by position, 0 = most recent word).

importance ``p_i = |a_i| / Σ|a|``; ``S_t`` = the smallest set of words whose cumulative importance
is ≥ t; IoU(S_t^BA, S_t^NWP); centre of mass ``CoM = Σ p_i pos_i / L``; Benjamini–Hochberg.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from icml26_shared.checks import check_finite_array

__all__ = [
    "bh",
    "category_shares",
    "center_of_mass",
    "importance",
    "iou",
    "iou_curve",
    "mass_set",
    "mass_set_auc",
    "top_k",
]


def importance(scores: np.ndarray) -> np.ndarray:
    """``|a| / Σ|a|`` (uniform when all scores are zero).

    >>> importance(np.array([1.0, -3.0])).tolist()
    [0.25, 0.75]
    """
    a = np.abs(check_finite_array(scores, "scores", ndim=1))
    s = a.sum()
    return a / s if s > 0 else np.full(len(a), 1.0 / len(a))


def _check_t(t: float) -> float:
    t = float(t)
    if not 0.0 < t <= 1.0 or not np.isfinite(t):
        raise ValueError(f"t must lie in (0, 1], got {t!r}")
    return t


def mass_set(scores: np.ndarray, t: float) -> set[int]:
    """Smallest set of positions with cumulative importance ≥ t (ties broken by position).

    >>> sorted(mass_set(np.array([0.1, 0.6, 0.3]), 0.8))
    [1, 2]
    """
    t = _check_t(t)
    p = importance(scores)
    order = np.argsort(-p, kind="stable")
    c = np.cumsum(p[order])
    n = int(np.searchsorted(c, t - 1e-12, side="left")) + 1
    return {int(i) for i in order[: min(n, len(p))]}


def top_k(scores: np.ndarray, k: int) -> set[int]:
    """Positions of the ``k`` largest ``|a|``."""
    a = check_finite_array(scores, "scores", ndim=1)
    if not 0 <= int(k) <= len(a):
        raise ValueError(f"k must be in [0, {len(a)}], got {k!r}")
    return {int(i) for i in np.argsort(-np.abs(a), kind="stable")[: int(k)]}


def iou(a: set[int], b: set[int]) -> float:
    """Intersection over union of two sets (1 when both are empty)."""
    u = len(a | b)
    return len(a & b) / u if u else 1.0


def iou_curve(s1: np.ndarray, s2: np.ndarray, ts: Sequence[float] | None = None) -> np.ndarray:
    """IoU(S_t(s1), S_t(s2)) for each t (default t = 1%, …, 98%)."""
    ts = np.arange(1, 99) / 100 if ts is None else np.asarray(ts, dtype=float)
    if len(s1) != len(s2):
        raise ValueError(f"s1 and s2 must have the same length, got {len(s1)} and {len(s2)}")
    return np.array([iou(mass_set(s1, t), mass_set(s2, t)) for t in ts])


def mass_set_auc(scores: np.ndarray, ts: Sequence[float] | None = None) -> float:
    """Area under |S_t|/L vs t (trapezoid over t = 1…98%)."""
    ts = np.arange(1, 99) / 100 if ts is None else np.asarray(ts, dtype=float)
    sizes = np.array([len(mass_set(scores, t)) for t in ts]) / len(scores)
    return float(np.sum((sizes[1:] + sizes[:-1]) / 2 * np.diff(ts)))


def center_of_mass(scores: np.ndarray, length: int | None = None) -> float:
    """``Σ p_i pos_i / L`` with ``p`` the importance, pos 0 = most recent, L = ``length``.

    >>> center_of_mass(np.array([0.0, 0.0, 0.0, 2.0]))
    0.75
    """
    p = importance(scores)
    n = len(p) if length is None else int(length)
    return float(np.sum(p * np.arange(len(p))) / n)


def category_shares(scores: np.ndarray, categories: Sequence[str], t: float) -> dict[str, float]:
    """Share of each coarse category (the tag before ``_``) among the words of S_t."""
    if len(categories) != len(scores):
        raise ValueError("categories must have one entry per score")
    s = mass_set(scores, t)
    out: dict[str, float] = {}
    for i in s:
        c = categories[i].split("_")[0]
        out[c] = out.get(c, 0.0) + 1.0 / len(s)
    return out


def bh(pvalues: np.ndarray, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Benjamini–Hochberg: (rejected mask, adjusted p-values) at FDR ``alpha``.

    >>> rej, adj = bh(np.array([0.01, 0.04, 0.03, 0.2]), 0.05)
    >>> rej.tolist(), np.round(adj, 3).tolist()
    ([True, False, False, False], [0.04, 0.053, 0.053, 0.2])
    """
    p = check_finite_array(pvalues, "pvalues", ndim=1)
    if np.any((p < 0) | (p > 1)):
        raise ValueError("pvalues must lie in [0, 1]")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    m = len(p)
    order = np.argsort(p)
    adj_sorted = np.minimum.accumulate((p[order] * m / np.arange(1, m + 1))[::-1])[::-1]
    adj = np.empty(m)
    adj[order] = np.minimum(adj_sorted, 1.0)
    return adj <= alpha, adj
