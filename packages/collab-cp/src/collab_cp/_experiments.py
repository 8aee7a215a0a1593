"""Repeated random calibration/test splits: the collaborative sets and every baseline at once.

Used by ``reproduce`` and by the statistical tests. Scores are computed once; each split sorts
the calibration scores of its two groups and evaluates the test points with array operations, so
thousands of splits take seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import SeedLike, int_from_seed, rng_from_seed
from icml26_shared.conformal import split_quantile

from ._baselines import matched_threshold
from ._offline import calibrate_thresholds

__all__ = ["SplitResults", "frontier", "split_evaluation"]


@dataclass(frozen=True)
class SplitResults:
    """Per-split figures (arrays of length ``n_splits``).

    ``harm`` / ``recovery`` / ``coverage`` / ``size``: the collaborative sets on the test part;
    ``n_in`` / ``n_out``: calibration group sizes; ``ai_size``, ``ai_coverage``: AI alone at the
    collaborative test coverage, threshold matched on the test labels (favours the baseline);
    ``ai_cal_size`` / ``ai_cal_coverage``: AI alone split CP calibrated at that coverage level;
    ``human_cp_size``: split CP on the human's own probabilities, matched like ``ai_size``;
    ``restrict_*``: harm-controlled restriction (no augmentation); ``human_*``: human alone.
    """

    harm: NDArray[np.float64]
    recovery: NDArray[np.float64]
    coverage: NDArray[np.float64]
    size: NDArray[np.float64]
    n_in: NDArray[np.float64]
    n_out: NDArray[np.float64]
    n_test_in: NDArray[np.float64]
    n_test_out: NDArray[np.float64]
    ai_size: NDArray[np.float64]
    ai_coverage: NDArray[np.float64]
    ai_cal_size: NDArray[np.float64]
    ai_cal_coverage: NDArray[np.float64]
    human_cp_size: NDArray[np.float64]
    restrict_coverage: NDArray[np.float64]
    restrict_size: NDArray[np.float64]
    restrict_harm: NDArray[np.float64]
    human_coverage: NDArray[np.float64]
    human_size: NDArray[np.float64]


def _matched(
    true_scores: NDArray[np.float64], scores: NDArray[np.float64], cov: float
) -> tuple[float, float]:
    """Size and coverage of {s ≤ t}, t the ⌈n·cov⌉-th smallest true score of these points."""
    t = matched_threshold(true_scores, cov)
    return float((scores <= t).sum(axis=1).mean()), float(np.mean(true_scores <= t))


def split_evaluation(
    scores: NDArray[np.float64],
    human: NDArray[np.bool_],
    y: NDArray[np.int64],
    *,
    n_cal: int,
    n_splits: int,
    epsilon: float,
    delta: float,
    seed: SeedLike = 0,
    human_scores: NDArray[np.float64] | None = None,
    baselines: bool = True,
) -> SplitResults:
    """Calibrate on ``n_cal`` random points and evaluate on the rest, ``n_splits`` times.

    Args:
        scores: ``(N, K)`` AI conformity scores. human: ``(N, K)`` human sets. y: ``(N,)`` labels.
        n_cal, n_splits, epsilon, delta, seed: the protocol.
        human_scores: ``(N, K)`` scores from the human's probabilities, for the human split-CP
            baseline (skipped when ``None``).
        baselines: also compute the baselines (slower).
    """
    N, _ = scores.shape
    rows = np.arange(N)
    true = scores[rows, y]
    inside = human[rows, y]
    h_true = None if human_scores is None else human_scores[rows, y]
    rng = rng_from_seed(seed)
    out: dict[str, list[float]] = {f: [] for f in SplitResults.__dataclass_fields__}
    nan = math.nan
    for _ in range(n_splits):
        perm = rng.permutation(N)
        cal, test = perm[:n_cal], perm[n_cal:]
        th = calibrate_thresholds(true[cal], inside[cal], epsilon, delta)
        s_t, h_t, in_t, tr_t = scores[test], human[test], inside[test], true[test]
        sets = np.where(h_t, s_t <= th.prune, s_t <= th.augment)
        cov_pts = np.where(in_t, tr_t <= th.prune, tr_t <= th.augment)
        cov = float(cov_pts.mean())
        out["harm"].append(float(np.mean(~cov_pts[in_t])) if in_t.any() else nan)
        out["recovery"].append(float(np.mean(cov_pts[~in_t])) if (~in_t).any() else nan)
        out["coverage"].append(cov)
        out["size"].append(float(sets.sum(axis=1).mean()))
        out["n_in"].append(th.n_in)
        out["n_out"].append(th.n_out)
        out["n_test_in"].append(float(in_t.sum()))
        out["n_test_out"].append(float((~in_t).sum()))
        if not baselines:
            continue
        size, c = _matched(tr_t, s_t, cov)
        out["ai_size"].append(size)
        out["ai_coverage"].append(c)
        q = float(split_quantile(true[cal], 1.0 - min(max(cov, 1e-9), 1 - 1e-9)))
        out["ai_cal_size"].append(float((s_t <= q).sum(axis=1).mean()))
        out["ai_cal_coverage"].append(float(np.mean(tr_t <= q)))
        if human_scores is not None and h_true is not None:
            out["human_cp_size"].append(_matched(h_true[test], human_scores[test], cov)[0])
        else:
            out["human_cp_size"].append(nan)
        r_keep = in_t & (tr_t <= th.prune)
        out["restrict_coverage"].append(float(r_keep.mean()))
        out["restrict_size"].append(float((h_t & (s_t <= th.prune)).sum(axis=1).mean()))
        out["restrict_harm"].append(float(np.mean(~r_keep[in_t])) if in_t.any() else nan)
        out["human_coverage"].append(float(in_t.mean()))
        out["human_size"].append(float(h_t.sum(axis=1).mean()))
    arrays = {k: np.asarray(v if v else [nan] * n_splits, dtype=np.float64) for k, v in out.items()}
    return SplitResults(**arrays)


def frontier(
    scores: NDArray[np.float64],
    human: NDArray[np.bool_],
    y: NDArray[np.int64],
    epsilons: NDArray[np.float64],
    deltas: NDArray[np.float64],
    *,
    n_cal: int,
    n_splits: int,
    seed: SeedLike = 0,
) -> NDArray[np.float64]:
    """Mean (coverage, size) over splits for each (ε, δ): array ``(len(eps), len(deltas), 2)``."""
    seed = int_from_seed(seed, bits=63)  # every cell on the same splits (a Generator: one draw)
    res = np.empty((len(epsilons), len(deltas), 2))
    for i, e in enumerate(epsilons):
        for j, d in enumerate(deltas):
            r = split_evaluation(
                scores,
                human,
                y,
                n_cal=n_cal,
                n_splits=n_splits,
                epsilon=float(e),
                delta=float(d),
                seed=seed,
                baselines=False,
            )
            res[i, j] = r.coverage.mean(), r.size.mean()
    return res
