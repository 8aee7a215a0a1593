"""Peer cross-check: himalaya 0.4.11's voxelwise ``Ridge`` (per-target alpha, SVD solver) at our
per-voxel λ on our blocked folds gives the same held-out r to 1e-4 (spec "Peers")."""

from __future__ import annotations

import numpy as np
import pytest

from brain_attrib._ridge import blocked_folds, fit_ridge, pearson_cols


def _himalaya_r(x: np.ndarray, y: np.ndarray, folds, lams) -> np.ndarray:
    """Held-out r of himalaya ``Ridge(alpha=λ_v per voxel, fit_intercept=True)`` on X
    standardised with each training fold's mean/std (as ``fit_ridge`` does)."""
    from himalaya.ridge import Ridge

    pred = np.zeros_like(y)
    for (tr, te), lam in zip(folds, lams, strict=True):
        mu, sd = x[tr].mean(0), x[tr].std(0)
        sd = np.where(sd > 0, sd, 1.0)
        m = Ridge(alpha=np.asarray(lam, dtype=float), fit_intercept=True).fit(
            (x[tr] - mu) / sd, y[tr]
        )
        pred[te] = np.asarray(m.predict((x[te] - mu) / sd))
    return pearson_cols(pred, y)


def test_ridge_matches_himalaya_synthetic():
    pytest.importorskip("himalaya")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 40)) * rng.uniform(0.5, 3, 40) + 1.0
    y = x @ rng.standard_normal((40, 30)) * 0.2 + rng.standard_normal((400, 30))
    folds = blocked_folds(len(x), 4, gap=5)
    fits = [fit_ridge(x[tr], y[tr]) for tr, _ in folds]  # λ per voxel by our inner CV
    pred = np.zeros_like(y)
    for (_, te), m in zip(folds, fits, strict=True):
        pred[te] = m.predict(x[te])
    ours = pearson_cols(pred, y)
    assert len(np.unique(np.concatenate([m.lam for m in fits]))) > 1  # several λ in play
    np.testing.assert_allclose(_himalaya_r(x, y, folds, [m.lam for m in fits]), ours, atol=1e-4)


def test_encoding_model_r_matches_himalaya(fitted):
    """The fitted encoding model's BA r (LM design, 3 blocked folds, gap 5) vs himalaya at the
    λ our inner CV chose per voxel and fold."""
    pytest.importorskip("himalaya")
    em, rd = fitted
    folds = blocked_folds(len(rd.data), len(em.folds_), gap=5)
    ref = _himalaya_r(em.X_, rd.data, folds, [f.lam for f in em.folds_])
    np.testing.assert_allclose(ref, em.score(), atol=1e-4)
