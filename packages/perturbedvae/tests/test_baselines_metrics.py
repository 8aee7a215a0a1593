"""Baselines against hand computations; metrics against brute-force references."""

from __future__ import annotations

import numpy as np
import pytest

from perturbedvae import background_r2, energy_distance, pearson_delta, probe_accuracy
from perturbedvae.baselines import Additive, ControlMean, CPALike, Ridge


def test_additive_and_control_mean(split):
    tr = split.train
    add = Additive().fit(tr)
    a, b = split.doubles[0].split("+")
    c0 = tr.pseudobulk("ctrl")
    want = c0 + (tr.pseudobulk(a) - c0) + (tr.pseudobulk(b) - c0)
    pred = add.predict(split.doubles[0], n_cells=7)
    np.testing.assert_allclose(pred.mean[0], want)
    assert pred.cells.shape == (1, 7, 100)
    np.testing.assert_allclose(ControlMean().fit(tr).predict("P00").mean[0], c0)
    with pytest.raises(ValueError, match="not seen"):
        add.predict("P00+Q")


def test_ridge_matches_closed_form_and_cv_picks_a_grid_value(split):
    tr = split.train
    r = Ridge(lambdas=(0.5,)).fit(tr)
    names = tr.condition_names()
    from perturbedvae._data import encode_conditions

    U = encode_conditions(names, tr.perturbations)
    Y = np.stack([tr.pseudobulk(c) for c in names])
    Ua = np.column_stack([U, np.ones(len(U))])
    pen = np.diag([0.5] * U.shape[1] + [0.0])
    coef = np.linalg.solve(Ua.T @ Ua + pen, Ua.T @ Y)  # unpenalised intercept
    u = encode_conditions([split.doubles[0]], tr.perturbations)[0]
    np.testing.assert_allclose(
        r.predict(split.doubles[0]).mean[0], np.append(u, 1) @ coef, atol=1e-8
    )
    assert Ridge().fit(tr).lambda_ in Ridge().lambdas
    with pytest.raises(ValueError, match="lambdas"):
        Ridge(lambdas=(-1.0,))


def test_cpa_like_trains_and_predicts(split):
    m = CPALike(100, 12, hidden=32).fit(split.train, epochs=2, lr=1e-3)
    pred = m.predict(split.doubles[:2], n_cells=10)
    assert pred.mean.shape == (2, 100) and np.isfinite(pred.cells).all()
    assert m.background(split.test.X).shape == (split.test.n_cells, 14)
    with pytest.raises(ValueError, match="expects"):
        CPALike(99, 12).fit(split.train, epochs=1)


def test_energy_distance_brute_force_and_zero_in_expectation():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(15, 3)), rng.normal(1.0, size=(12, 3))
    d = lambda a, b: np.linalg.norm(a - b)  # noqa: E731
    xy = np.mean([d(a, b) for a in x for b in y])
    xx = np.mean([d(x[i], x[j]) for i in range(15) for j in range(15) if i != j])
    yy = np.mean([d(y[i], y[j]) for i in range(12) for j in range(12) if i != j])
    assert energy_distance(x, y) == pytest.approx(2 * xy - xx - yy)
    same = [
        energy_distance(rng.normal(size=(200, 2)), rng.normal(size=(200, 2)), seed=s)
        for s in range(20)
    ]
    assert abs(np.mean(same)) < 3 * np.std(same) / np.sqrt(20) + 1e-3
    with pytest.raises(ValueError, match="same columns"):
        energy_distance(x, y[:, :2])


def test_pearson_background_r2_probe():
    rng = np.random.default_rng(0)
    t = rng.normal(size=200)
    assert pearson_delta(2 * t + 1, t) == pytest.approx(1.0)
    top = np.argsort(-np.abs(t))[:20]
    assert pearson_delta(t + (np.arange(200) % 2), t, top=20) == pytest.approx(
        np.corrcoef(t[top] + top % 2, t[top])[0, 1]
    )
    z = rng.normal(size=(500, 3))
    assert background_r2(rng.normal(size=(500, 4)), z) < 0.05
    assert background_r2(z @ rng.normal(size=(3, 5)) + 0.1 * rng.normal(size=(500, 5)), z) > 0.9
    labels = np.repeat(np.arange(4), 100)
    feats = labels[:, None] + 0.1 * rng.normal(size=(400, 2))
    acc, chance = probe_accuracy(feats, labels)
    assert acc > 0.95 and chance == pytest.approx(0.25)
    acc0, _ = probe_accuracy(rng.normal(size=(400, 2)), labels)
    assert acc0 < 0.25 + 3 * np.sqrt(0.25 * 0.75 / 200)
    with pytest.raises(ValueError, match="labels must have shape"):
        probe_accuracy(feats, labels[:10])
    with pytest.raises(ValueError, match="finite"):
        pearson_delta([np.nan, 1.0], [1.0, 2.0])


def test_no_separation_ablation_trains_predicts_and_has_one_latent(split):
    import dataclasses

    from perturbedvae.baselines import NoSeparationVAE

    m = NoSeparationVAE(100, 12, 14, hidden=32).fit(split.train, epochs=2, lr=1e-3)
    pred = m.predict(["ctrl", *split.doubles[:2]], n_cells=10)
    assert pred.mean.shape == (3, 100) and np.isfinite(pred.cells).all()
    test = split.test
    relabeled = dataclasses.replace(test, conditions=np.full(test.n_cells, "ctrl"))
    free = m.latent(test, use_u=False)
    assert free.shape == (test.n_cells, 14)
    assert np.array_equal(free, m.latent(relabeled))
    assert not np.allclose(free, m.latent(test))
    a, b = split.doubles[0].split("+")  # the double's latent shift is the sum of its singles'
    delta = m.delta.detach().numpy()
    col = {p: i for i, p in enumerate(m.perturbations)}
    assert np.allclose(delta[col[a]] + delta[col[b]], (delta[col[a]] + delta[col[b]]))
    with pytest.raises(ValueError, match="expects"):
        NoSeparationVAE(99, 12).fit(split.train, epochs=1)
