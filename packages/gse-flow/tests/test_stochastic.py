"""The pieces of the stochastic-data comparison: time-correlated prior noise, the K-matched
noisy baselines, out-of-fold enhance inputs, temperature, per-window scores."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import jax
import numpy as np
import pytest

import gse_flow as g
from icml26_shared.config import override


def test_walk_noise_unit_variance_and_correlation():
    eps = g.centered_noise(jax.random.PRNGKey(0), (20000, 6, 4, 3))
    walk = np.asarray(g.correlate_noise(eps, "walk"))
    assert np.asarray(g.correlate_noise(eps, "white")) is not None
    np.testing.assert_array_equal(np.asarray(g.correlate_noise(eps, "white")), np.asarray(eps))
    # node mean stays zero; variance per frame is that of the centred white noise (3/4 for N=4)
    np.testing.assert_allclose(walk.mean(axis=2), 0.0, atol=1e-5)
    var = walk.var(axis=(0, 2, 3))
    np.testing.assert_allclose(var, 0.75, rtol=0.03)
    a, b = walk[:, 1, 0, 0], walk[:, 5, 0, 0]  # frames 2 and 6: corr sqrt(2/6)
    assert abs(np.corrcoef(a, b)[0, 1] - np.sqrt(2 / 6)) < 0.03


def test_prior_noise_is_checked(tiny_kwargs):
    with pytest.raises(ValueError, match="prior_noise"):
        g.GSEFlow(key=jax.random.PRNGKey(0), prior_noise="pink", **tiny_kwargs)
    with pytest.raises(ValueError, match="prior_noise"):
        g.correlate_noise(np.zeros((2, 3, 3)), "pink")


def _walk_residual(rng, shape, scale):
    e = rng.standard_normal(shape)
    return (
        scale[None, :, :, None]
        * np.cumsum(e, 1)
        / np.sqrt(np.arange(1, shape[1] + 1))[None, :, None, None]
    )


def test_fit_noise_recovers_scale_and_structure():
    rng = np.random.default_rng(0)
    B, F, N = 300, 6, 3
    scale = np.linspace(0.1, 0.6, F)[:, None] * np.array([1.0, 2.0, 0.5])[None]
    pred = rng.standard_normal((B, F, N, 3))
    fut = pred + _walk_residual(rng, (B, F, N, 3), scale)
    fit = g.fit_noise(pred, fut, key=jax.random.PRNGKey(1), k=5)
    assert fit.structure == "walk"
    assert fit.multiplier == 1.0
    np.testing.assert_allclose(fit.scale, scale, rtol=0.15)
    fut_w = pred + scale[None, :, :, None] * rng.standard_normal((B, F, N, 3))
    assert g.fit_noise(pred, fut_w, key=jax.random.PRNGKey(1)).structure == "white"
    s = g.noisy_samples(pred, fit, jax.random.PRNGKey(2), k=4)
    assert s.shape == (B, 4, F, N, 3) and s.dtype == np.float32


def test_fit_noise_bad_input():
    z = np.zeros((4, 3, 2, 3))
    with pytest.raises(ValueError, match="pred must have the shape of future"):
        g.fit_noise(z[:, :2], z, key=jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="multipliers must be positive"):
        g.fit_noise(z, z, key=jax.random.PRNGKey(0), multipliers=(0.0,))
    with pytest.raises(ValueError, match="structures"):
        g.fit_noise(z, z, key=jax.random.PRNGKey(0), structures=("pink",))
    fit = g.NoiseFit(np.ones((3, 2)), "white", 1.0, 0.0)
    with pytest.raises(ValueError, match="pred must have shape"):
        g.noisy_samples(np.zeros((4, 5, 2, 3)), fit, jax.random.PRNGKey(0))


def test_out_of_fold_never_predicts_a_training_window(tiny_windows):
    w = tiny_windows
    marks = w._replace(
        future=np.arange(w.n_windows, dtype=np.float32)[:, None, None, None]
        + np.zeros_like(w.future)
    )

    def fit(train_w):  # "predicts" the ids it was trained on
        ids = set(np.asarray(train_w.future[:, 0, 0, 0]).astype(int))
        return lambda ww: np.full(
            np.shape(ww.future),
            -1.0 if ids & set(np.asarray(ww.future[:, 0, 0, 0]).astype(int)) else 1.0,
        )

    oof = g.out_of_fold(fit, marks, n_folds=3, seed=0)
    np.testing.assert_array_equal(oof, 1.0)
    with pytest.raises(ValueError, match="n_folds must be"):
        g.out_of_fold(fit, marks, n_folds=1)


def test_enhance_uses_out_of_fold_predictions(tiny_windows):
    w = tiny_windows
    oof = np.asarray(w.future) + 0.1
    out, sigma = g.enhance(lambda ww: np.asarray(ww.future), w, train_predictions=oof)
    np.testing.assert_allclose(out.prior_mean, oof)
    assert sigma == pytest.approx(0.1, rel=1e-5)  # from the out-of-fold residuals
    with pytest.raises(ValueError, match="train_predictions must have shape"):
        g.enhance(lambda ww: ww.future, w, train_predictions=oof[:, :2])


def test_temperature_zero_is_noise_free(light_model, tiny_windows):
    w = tiny_windows.take(np.arange(2))
    s0 = g.sample(light_model, w.history, jax.random.PRNGKey(0), k=3, temperature=0.0)
    np.testing.assert_array_equal(s0[:, 0], s0[:, 2])
    s1 = g.sample(light_model, w.history, jax.random.PRNGKey(0), k=3)
    assert not np.allclose(s1[:, 0], s1[:, 2])
    with pytest.raises(ValueError, match="temperature must be a finite number >= 0"):
        g.sample(light_model, w.history, jax.random.PRNGKey(0), temperature=-1.0)


def test_select_temperature_recovers_the_law_that_drew_the_futures(light_model, tiny_windows):
    # futures drawn from the model itself at T = 2 (a fresh noise draw per window): the energy
    # score is proper, so the grid's 2 must win over 1 and 0.5; the scores are those of the
    # samples the selection drew (paired: one noise draw for every T)
    w = tiny_windows
    drawn = g.sample(light_model, w.history, jax.random.PRNGKey(7), k=1, temperature=2.0)
    truth = w._replace(future=drawn[:, 0])
    key = jax.random.PRNGKey(3)
    t, scores = g.select_temperature(light_model, truth, key=key, k=8, temperatures=(0.5, 1, 2))
    assert t == 2.0 and set(scores) == {0.5, 1.0, 2.0}
    assert scores[2.0] < scores[1.0] < scores[0.5]
    s1 = g.sample(
        light_model, w.history, key, node_attr=w.node_attr, edges=w.edges, k=8, temperature=1.0
    )
    assert scores[1.0] == pytest.approx(g.energy_score(s1, truth.future), rel=1e-6)
    with pytest.raises(ValueError, match="temperatures must be positive finite numbers"):
        g.select_temperature(light_model, truth, key=key, temperatures=(0.0, 1.0))
    with pytest.raises(TypeError, match=r"windows must be gse_flow\.Windows"):
        g.select_temperature(light_model, w.history, key=key)


def test_window_scores_match_the_averages(rng):
    s = rng.standard_normal((5, 4, 3, 2, 3))
    t = rng.standard_normal((5, 3, 2, 3))
    ws = g.window_scores(s, t)
    ev = g.evaluate(s, t)
    assert np.mean(ws["min_ade"]) == pytest.approx(ev["min_ade"])
    assert np.mean(ws["min_fde"]) == pytest.approx(ev["min_fde"])
    assert np.mean(ws["ade"]) == pytest.approx(ev["ade"])
    assert np.mean(ws["energy"]) == pytest.approx(g.energy_score(s, t))
    # the energy score is proper: the true law scores better than a shifted one in expectation
    y = rng.standard_normal((4000, 1, 1, 3))
    good = rng.standard_normal((4000, 5, 1, 1, 3))
    assert g.energy_score(good, y) < g.energy_score(good + 0.5, y)


def test_paired_interval_over_seeds_and_windows():
    from scipy import stats

    from gse_flow._reproduce import _diff_ci

    base = [np.full(4, v) for v in (1.0, 1.2, 1.4)]
    flow = [np.zeros(4)] * 3
    m, lo, hi, how = _diff_ci(base, flow)
    half = stats.t.ppf(0.975, 2) * np.std([1.0, 1.2, 1.4], ddof=1) / np.sqrt(3)
    assert m == pytest.approx(1.2) and hi - m == pytest.approx(half) == m - lo
    assert "3 seeds" in how
    m2, lo2, hi2, how2 = _diff_ci(base[:2], flow[:2])  # < 3 seeds: over the pooled windows
    assert "8 windows" in how2 and lo2 < m2 < hi2


@pytest.mark.slow  # spawns workers that compile every model (several CPU-minutes)
@pytest.mark.parametrize("full", [False, True])
def test_reproduce_runs_end_to_end(tmp_path, full):
    """Both modes' paths at toy sizes on a shipped molecule: the quick one and the full one
    (a second molecule, N-body, enhance(EGNN) and the learning curves too)."""
    import gse_flow._reproduce as r

    tiny = r.Config(
        molecules=("ethanol", "alanine_dipeptide") if full else ("ethanol",),
        seeds=(0, 1),
        md_train=24,
        md_val=16,
        md_test=16,
        md_history=3,
        md_future=4,
        nbody=full,
        nbody_train=24,
        nbody_test=8,
        nbody_history=3,
        nbody_future=4,
        irreps="4x0e+2x1o",
        n_layers=1,
        steps=3,
        batch=8,
        enhance=full,
        select_temperatures=(1.0, 1.25) if full else (),
        heun=True,
        curve=full,
        curve_budgets=(2, 3),
    )
    res = r.reproduce(tiny, tmp_path, False)
    curves = [t for t in res.tables if t.title.startswith("Learning curves")]
    assert len(curves) == int(full)
    if full:  # the curve's other budgets use the comparison's recipe and keys: trained for
        # the comparison's 3 steps, the curve job gives the det. job's validation scores
        cfg = r._job_cfg(replace(tiny, steps=2))
        again = r._run_job("curve", cfg, "ethanol", 0, "det")[0][3]
        assert again["mse"] == pytest.approx(curves[0].rows["det-mse"]["3 steps"], rel=1e-5)
    assert res.tables[0].title.startswith("Ethanol (9 atoms; GFN2-xTB, 500 K")
    assert res.tables[1].title.startswith("Alanine dipeptide (22 atoms") == full
    assert (tmp_path / "gse_flow_md.png").exists()
    checks = {c.id: c for c in res.details}
    assert checks["e-equivariance"].passed and checks["e-equivariance"].value <= 1e-5
    assert "a-md17" in checks and "c-bond-w1" in checks
    assert ("d-enhance" in checks, "nbody-sanity" in checks, "b-alanine" in checks) == (
        full,
        full,
        full,
    )
    assert ("enhanced" in res.tables[0].rows) == full
    assert any(t.title.startswith("Charged N-body") for t in res.tables) == full
    for row in res.tables[0].rows.values():  # every method has its bond W1, in mÅ
        assert 0 < row["bond W1 (mÅ)"].mean < 1000


def _job_paths(config):
    import gse_flow._reproduce as r

    runner = r._runner(config, Path("out"), False, {})
    return {job.name: runner.path(job) for job in r._jobs(config)}


def test_more_seeds_reuse_the_cached_jobs_of_the_earlier_ones():
    import gse_flow._reproduce as r

    three = _job_paths(r.FULL)
    five = _job_paths(replace(r.FULL, seeds=(0, 1, 2, 3, 4)))
    assert all(five[name] == path for name, path in three.items())
    assert len(five) > len(three)
    fewer = _job_paths(replace(r.FULL, molecules=("toluene", "ethanol")))  # a subset, reordered
    assert all(three[name] == path for name, path in fewer.items())
    moved = _job_paths(replace(r.FULL, seeds=(1, 2, 3)))  # another first seed: equivariance
    assert moved["flow-ethanol-1"] != three["flow-ethanol-1"]
    assert _job_paths(replace(r.FULL, steps=601))["flow-ethanol-0"] != three["flow-ethanol-0"]
    assert _job_paths(r.QUICK)["flow-ethanol-0"] != three["flow-ethanol-0"]
    paused = _job_paths(replace(r.FULL, max_new_jobs=2))  # a run control, not a result
    assert paused == three


def test_the_budget_sets_the_learning_curve_and_bad_sizes_are_refused():
    import gse_flow._reproduce as r

    assert r.FULL.steps == 600 and r.FULL.budgets() is None  # curves are opt-in
    curved = replace(r.FULL, curve=True)
    assert replace(curved, steps=1200).budgets() == (150, 600, 1200, 2400)
    assert r.QUICK.steps == 100 and r.QUICK.budgets() is None
    assert r.QUICK.molecules == ("ethanol",) and len(r.FULL.molecules) == 4
    assert curved.budgets() == (150, 600, 1200)
    assert replace(curved, steps=100).budgets() == (100, 200)  # the last two: one doubling
    assert override(r.FULL, ["steps=600", "seeds=0,1,2,3"]).seeds == (0, 1, 2, 3)
    for bad, message in (
        (["steps=0"], "steps must be >= 1"),
        (["seeds="], "seeds must name at least one seed"),
        (["curve_budgets=5"], "curve_budgets must be empty or >= 2"),
        (["max_new_jobs=0"], "max_new_jobs must be >= 1"),
        (["step=5"], "unknown config key 'step'"),
        (["molecules=aspirin"], "molecules must be among ethanol"),
        (["molecules=ethanol,ethanol"], "molecules must name distinct molecules"),
        (["md_history=1"], "md_history must be >= 2"),
    ):
        with pytest.raises(ValueError, match=message):
            override(r.FULL, bad)
