"""Metrics of the reproduce tables: Pearson of Δ, energy distance, background R², label probes.

* ``pearson_delta(pred, true, top)``: Pearson correlation of predicted vs true Δ-from-control,
  on all genes or on the ``top`` genes of largest |true Δ|.
* ``energy_distance(X, Y)``: 2 E‖X − Y‖ − E‖X − X′‖ − E‖Y − Y′‖ (within-sample terms as
  U-statistics), on at most ``max_cells`` cells of each.
* ``background_r2(z_hat, z)``: R² = 1 − Σ SSE / Σ SST of a linear map (with intercept) ẑ → z fit by
  least squares on one half of the cells and scored on the other half.
* ``probe_accuracy(features, labels)``: accuracy of a multinomial logistic regression on
  standardised features, fit on a stratified half and scored on the other half, with the
  majority-class rate of that half as chance.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.distance import cdist

from icml26_shared.checks import SeedLike, check_finite_array, check_positive_int, rng_from_seed

__all__ = ["background_r2", "energy_distance", "pearson_delta", "probe_accuracy", "rmse"]


def rmse(pred: ArrayLike, true: ArrayLike) -> float:
    """Root mean squared error over all entries."""
    p = check_finite_array(pred, "pred")
    t = check_finite_array(true, "true")
    if p.shape != t.shape:
        raise ValueError(f"pred and true must have the same shape, got {p.shape} and {t.shape}")
    return float(np.sqrt(np.mean((p - t) ** 2)))


def pearson_delta(pred_delta: ArrayLike, true_delta: ArrayLike, top: int | None = None) -> float:
    """Pearson r of predicted vs true Δ-from-control (on the ``top`` genes by |true Δ| if given).

    >>> round(pearson_delta([1.0, 2.0, 3.0], [2.0, 4.0, 6.5]), 3)
    0.998
    """
    p = check_finite_array(pred_delta, "pred_delta", ndim=1)
    t = check_finite_array(true_delta, "true_delta", ndim=1)
    if p.shape != t.shape:
        raise ValueError(f"pred_delta and true_delta must match, got {p.shape} and {t.shape}")
    if top is not None:
        check_positive_int(top, "top", minimum=2)
        idx = np.argsort(-np.abs(t))[:top]
        p, t = p[idx], t[idx]
    if p.std() == 0 or t.std() == 0:
        return 0.0
    return float(np.corrcoef(p, t)[0, 1])


def energy_distance(
    X: ArrayLike, Y: ArrayLike, *, max_cells: int = 500, seed: SeedLike = 0
) -> float:
    """Energy distance between two samples of points (rows).

    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=(300, 2)), rng.normal(size=(300, 2))
    >>> energy_distance(a, b) < energy_distance(a, b + 2.0)
    True
    """
    x = check_finite_array(X, "X", ndim=2)
    y = check_finite_array(Y, "Y", ndim=2)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"X and Y must have the same columns, got {x.shape[1]} and {y.shape[1]}")
    if len(x) < 2 or len(y) < 2:
        raise ValueError("X and Y need at least 2 rows each")
    rng = rng_from_seed(seed)
    if len(x) > max_cells:
        x = x[rng.choice(len(x), max_cells, replace=False)]
    if len(y) > max_cells:
        y = y[rng.choice(len(y), max_cells, replace=False)]
    dxy = cdist(x, y).mean()
    dxx = cdist(x, x).sum() / (len(x) * (len(x) - 1))
    dyy = cdist(y, y).sum() / (len(y) * (len(y) - 1))
    return float(2 * dxy - dxx - dyy)


def _halves(n: int, seed: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    perm = np.random.default_rng(seed).permutation(n)
    return perm[: n // 2], perm[n // 2 :]


def background_r2(z_hat: ArrayLike, z_true: ArrayLike, *, seed: int = 0) -> float:
    """Held-out R² of the least-squares linear map ẑ → z (fit on half, scored on the other half).

    >>> rng = np.random.default_rng(0)
    >>> z = rng.normal(size=(400, 3))
    >>> round(background_r2(z @ rng.normal(size=(3, 3)), z), 6)
    1.0
    """
    zh = check_finite_array(z_hat, "z_hat", ndim=2)
    zt = check_finite_array(z_true, "z_true", ndim=2)
    if len(zh) != len(zt) or len(zh) < 4:
        raise ValueError(f"z_hat and z_true need the same >= 4 rows, got {len(zh)} and {len(zt)}")
    a, b = _halves(len(zh), seed)
    design = np.column_stack([zh, np.ones(len(zh))])
    coef, *_ = np.linalg.lstsq(design[a], zt[a], rcond=None)
    resid = zt[b] - design[b] @ coef
    sst = ((zt[b] - zt[b].mean(0)) ** 2).sum()
    return float(1 - (resid**2).sum() / sst)


def probe_accuracy(features: ArrayLike, labels: ArrayLike, *, seed: int = 0) -> tuple[float, float]:
    """(accuracy, chance) of a logistic-regression probe, stratified half / half split.

    Classes with a single cell are left out (they cannot be split).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import train_test_split
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    f = check_finite_array(features, "features", ndim=2)
    y = np.asarray(labels)
    if y.shape != (len(f),):
        raise ValueError(f"labels must have shape ({len(f)},), got {y.shape}")
    kinds, counts = np.unique(y, return_counts=True)
    keep = np.isin(y, kinds[counts >= 2])  # classes with one cell cannot be split
    if len(np.unique(y[keep])) < 2:
        raise ValueError("labels must hold at least 2 classes with >= 2 cells each")
    f, y = f[keep], y[keep]
    fa, fb, ya, yb = train_test_split(f, y, test_size=0.5, random_state=seed, stratify=y)
    clf = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    clf.fit(fa, ya)
    _, counts = np.unique(yb, return_counts=True)
    return float(clf.score(fb, yb)), float(counts.max() / counts.sum())
