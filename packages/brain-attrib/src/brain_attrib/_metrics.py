"""Metrics comparing two word-attribution vectors (indexed by position, 0 = most recent word).

importance ``p_i = |a_i| / Σ|a|``; ``S_t`` = the smallest set of words whose cumulative importance
is ≥ t; IoU(S_t^BA, S_t^NWP); centre of mass ``CoM = Σ p_i pos_i / L``; Benjamini–Hochberg.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from icml26_shared.checks import check_finite_array


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


def recovery(scores: np.ndarray, planted: set[int], within: np.ndarray | None = None) -> float:
    """IoU of the top-|P| words by ``|score|`` with the planted set ``P`` (positions).

    ``within`` (a boolean mask over positions, e.g. the nouns) restricts the ranking to those
    positions: the within-category recovery, which asks only *which* word of the category
    matters. ``P`` must then lie inside ``within``.

    >>> s = np.array([5.0, 0.1, 3.0, 0.2])
    >>> recovery(s, {1, 3}), recovery(s, {1, 3}, within=np.array([False, True, False, True]))
    (0.0, 1.0)
    """
    a = check_finite_array(scores, "scores", ndim=1)
    planted = {int(p) for p in planted}
    if any(not 0 <= p < len(a) for p in planted):
        raise ValueError(f"planted must hold positions in [0, {len(a)}), got {sorted(planted)}")
    if within is not None:
        within = np.asarray(within, dtype=bool)
        if within.shape != a.shape:
            raise ValueError(f"within must be a mask of {len(a)} positions, got {within.shape}")
        if not all(within[p] for p in planted):
            raise ValueError("within must contain every planted position")
        a = np.where(within, np.abs(a), -1.0)  # outside the mask: ranked last
        order = np.argsort(-a, kind="stable")[: len(planted)]
        return iou({int(i) for i in order}, planted)
    return iou(top_k(a, len(planted)), planted)


def recovery_chance(n: int, m: int) -> float:
    """Expected IoU of a uniformly random m-subset of n items with a fixed m-subset (the chance
    level of :func:`recovery` with m planted words among n candidates).

    >>> round(recovery_chance(4, 2), 6), recovery_chance(5, 5)
    (0.388889, 1.0)
    """
    from scipy.special import comb

    n, m = int(n), int(m)
    if not 0 <= m <= n or n < 1:
        raise ValueError(f"need 0 <= m <= n and n >= 1, got n={n}, m={m}")
    if m == 0:
        return 1.0
    xs = np.arange(max(0, 2 * m - n), m + 1)
    p = comb(m, xs) * comb(n - m, m - xs) / comb(n, m)
    return float(np.sum(p * xs / (2 * m - xs)))


def top_k_share(scores: np.ndarray, mask: np.ndarray, k: int) -> float:
    """Share of the top-``k`` words by ``|score|`` that lie in ``mask`` (e.g. the nouns)."""
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != np.shape(scores):
        raise ValueError(f"mask must have one entry per score, got {mask.shape}")
    if int(k) < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    top = top_k(scores, k)
    return sum(bool(mask[i]) for i in top) / len(top)


def recency_mass(scores: np.ndarray, n: int = 5) -> float:
    """Importance mass of the ``n`` most recent words (positions 0 … n−1).

    >>> recency_mass(np.array([1.0, -1.0, 0.0, 2.0]), n=2)
    0.5
    """
    if not 1 <= int(n):
        raise ValueError(f"n must be a positive integer, got {n!r}")
    return float(importance(scores)[: int(n)].sum())


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
