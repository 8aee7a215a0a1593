"""read_screen on small .h5ad files written here; the synthetic and semi-synthetic generators."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

anndata = pytest.importorskip("anndata")

from perturbedvae.data import (  # noqa: E402
    CONTROL,
    interaction_score,
    read_screen,
    semisynthetic_pbmc,
    simulate_screen,
)


def _write(tmp_path, labels, X=None, name="s.h5ad", **obs):
    rng = np.random.default_rng(0)
    X = np.abs(rng.normal(size=(len(labels), 6))) if X is None else X
    adata = anndata.AnnData(X, obs={"condition": labels, **obs})
    adata.var_names = [f"G{i}" for i in range(X.shape[1])]
    path = tmp_path / name
    adata.write_h5ad(path)
    return path


def test_gears_and_norman_labels(tmp_path):
    gears = read_screen(_write(tmp_path, ["ctrl", "A+ctrl", "ctrl+B", "B+A", "A"]))
    assert list(gears.conditions) == ["ctrl", "A", "B", "A+B", "A"]
    assert gears.perturbations == ("A", "B")
    np.testing.assert_array_equal(gears.U, [[0, 0], [1, 0], [0, 1], [1, 1], [1, 0]])
    assert gears.genes == tuple(f"G{i}" for i in range(6))
    norman = read_screen(_write(tmp_path, ["ctrl", "A", "A_B", "B_ctrl", "ctrl"]), sep="_")
    assert list(norman.conditions) == ["ctrl", "A", "A+B", "B", "ctrl"]
    other = read_screen(
        _write(tmp_path, ["NT", "KLF1", "KLF1_SET", "NT"], key=["x"] * 4),
        control="NT", sep="_", batch_key="key",
    )  # fmt: skip
    assert list(other.conditions) == ["ctrl", "KLF1", "KLF1+SET", "ctrl"]
    assert list(other.batch) == ["x"] * 4


def test_counts_normalised_with_warning_or_kept(tmp_path):
    counts = np.random.default_rng(1).poisson(3.0, size=(4, 6)).astype(np.float64)
    counts[:, 0] += 5
    path = _write(tmp_path, ["ctrl", "A", "A", "ctrl"], X=counts)
    with pytest.warns(UserWarning, match="integer counts"):
        s = read_screen(path)
    np.testing.assert_allclose(s.X, np.log1p(counts / counts.sum(1, keepdims=True) * 1e4))
    kept = read_screen(path, keep_counts=True)
    assert kept.counts and np.array_equal(kept.X, counts)


def test_layer_and_in_memory(tmp_path):
    adata = anndata.AnnData(np.zeros((2, 3)), obs={"condition": ["ctrl", "A"]})
    adata.layers["lognorm"] = np.ones((2, 3)) * 0.5
    s = read_screen(adata, layer="lognorm")
    assert np.all(s.X == 0.5)
    with pytest.raises(ValueError, match="layer 'nope' not found"):
        read_screen(adata, layer="nope")


def test_read_screen_errors(tmp_path):
    with pytest.raises(ValueError, match="no control cells"):
        read_screen(_write(tmp_path, ["A", "B"]))
    with pytest.raises(ValueError, match="cannot be parsed"):
        read_screen(_write(tmp_path, ["ctrl", "A++B"]))
    with pytest.raises(ValueError, match="empty or missing"):
        read_screen(_write(tmp_path, ["ctrl", " "]))
    with pytest.raises(ValueError, match="repeats"):
        read_screen(_write(tmp_path, ["ctrl", "A+A"]))
    with pytest.raises(ValueError, match="condition_key 'cond'"):
        read_screen(_write(tmp_path, ["ctrl", "A"]), condition_key="cond")
    X = np.ones((2, 6))
    X[1, 2] = np.nan
    with pytest.raises(ValueError, match="finite"):
        read_screen(_write(tmp_path, ["ctrl", "A"], X=X))
    with pytest.raises(TypeError, match="AnnData"):
        read_screen(42)


def test_read_screen_feeds_fit_and_predict_of_an_unseen_double(tmp_path):
    """A real-screen round trip: .h5ad counts -> read_screen -> fit on ctrl + singles -> predict A+B."""
    from perturbedvae import PerturbedVAE

    labels = ["ctrl"] * 24 + ["A+ctrl"] * 12 + ["ctrl+B"] * 12 + ["A+B"] * 6
    counts = np.random.default_rng(2).poisson(4.0, size=(len(labels), 8)).astype(np.float64) + 1
    batch = ["b1", "b2"] * (len(labels) // 2)
    path = _write(tmp_path, labels, X=counts, batch=batch)
    for keep_counts, likelihood in [(True, "nb"), (False, "gaussian")]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # counts normalised with a warning
            screen = read_screen(path, batch_key="batch", keep_counts=keep_counts)
        assert screen.counts is keep_counts and screen.perturbations == ("A", "B")
        train = screen.subset(screen.conditions != "A+B")
        model = PerturbedVAE(8, 2, d_bg=3, d_pert=2, likelihood=likelihood, hidden=8)
        model.fit(train, epochs=1, lr=1e-3)
        pred = model.predict(["B+A", "ctrl"], n_cells=5)
        assert pred.conditions == ["A+B", "ctrl"] and pred.mean.shape == (2, 8)
        assert np.isfinite(pred.cells).all() and np.isfinite(model.background(screen)).all()


def test_simulate_screen_ground_truth():
    sp = simulate_screen(n_cells=50, n_controls=300, n_mc=3000, seed=3)
    tr, te = sp.train, sp.test
    assert set(tr.condition_names()) == {CONTROL, *tr.perturbations} and len(tr.perturbations) == 12
    assert len(sp.doubles) == 20 and all(len(d.split("+")) == 2 for d in sp.doubles)
    assert not set(sp.doubles) & set(tr.conditions)
    W = tr.truth["W"]
    assert np.all(W[np.triu_indices(6)] == 0)
    nz = np.abs(W[np.tril_indices(6, -1)])
    assert np.all((nz == 0) | ((nz >= 0.5) & (nz <= 1.0)))
    shifts = tr.truth["shifts"]
    assert np.all(((shifts != 0).sum(1) >= 1) & ((shifts != 0).sum(1) <= 2))
    assert np.all((np.abs(shifts[shifts != 0]) >= 1.5) & (np.abs(shifts[shifts != 0]) <= 3))
    assert tr.truth["z_bg"].shape == (tr.n_cells, 8) and te.truth["z_pert"].shape == (te.n_cells, 6)
    # z_nu feeds <= 10 genes each: genes outside every node's set do not move with u
    genes = np.unique(np.concatenate(tr.truth["genes_of_node"]))
    others = np.setdiff1d(np.arange(100), genes)
    tm = te.truth["true_means"]
    moved = np.abs(tm[sp.doubles[0]] - tm[CONTROL])
    assert moved[others].max() < 0.05 and moved[genes].max() > 0.1
    # heldout fraction and reproducibility
    assert (te.conditions == CONTROL).sum() == 75
    again = simulate_screen(n_cells=50, n_controls=300, n_mc=3000, seed=3)
    np.testing.assert_array_equal(again.train.X, tr.X)
    with pytest.raises(ValueError, match="n_doubles"):
        simulate_screen(n_doubles=100)
    with pytest.raises(ValueError, match="noise"):
        simulate_screen(noise="laplace")


def test_simulated_perturbation_share_of_variance():
    sp = simulate_screen(n_cells=100, n_controls=100, n_mc=100, seed=0)
    tr = sp.train
    ctrl_var = tr.X[tr.is_control].var(0).sum()
    assert tr.X.var(0).sum() < ctrl_var / 0.85  # perturbations explain well under 15%


def test_semisynthetic_pbmc_shifts():
    pytest.importorskip("scanpy")
    sp = semisynthetic_pbmc(n_cells=20, n_controls=40, effects="shifts", min_interacting=0, seed=0)
    tr, te = sp.train, sp.test
    assert tr.n_genes == 765 and len(tr.perturbations) == 10 and len(sp.doubles) == 20
    assert (tr.X >= 0).all() and (te.X >= 0).all()
    assert set(np.unique(tr.truth["cell_type"])) <= set(range(10))
    assert tr.truth["pcs"].shape == (tr.n_cells, 10)
    eff = tr.truth["effects"]
    assert np.all((eff != 0).sum(-1) <= int(0.05 * 765))
    peak = np.abs(eff).max(-1)  # (perturbation, cell type)
    ratio = peak / peak.min(1, keepdims=True)
    assert np.all(np.isclose(ratio, 1.0) | np.isclose(ratio, 1.5)) and np.any(ratio > 1.4)
    assert not set(sp.doubles) & set(tr.conditions)


def _recomputed_scores(split):
    tm = split.test.truth["true_means"]
    out = {}
    for d in split.doubles:
        a, b = d.split("+")
        out[d] = interaction_score(tm[CONTROL], tm[a], tm[b], tm[d])
    return out


def test_interaction_score_reference():
    rng = np.random.default_rng(0)
    c, a, b = rng.normal(size=(3, 50))
    assert interaction_score(c, a, b, a + b - c) == pytest.approx(0.0, abs=1e-12)
    ab = c + 0.3 * (a - c)  # far from additive
    gap = np.linalg.norm((ab - c) - (a - c) - (b - c))
    scale = max(np.linalg.norm(ab - c), np.linalg.norm(a + b - 2 * c))
    assert interaction_score(c, a, b, ab) == pytest.approx(gap / scale)


def test_synthetic_doubles_at_least_half_interact():
    sp = simulate_screen(n_cells=20, n_controls=60, n_mc=4000, seed=1)
    scores = _recomputed_scores(sp)
    hot = [d for d, v in scores.items() if v >= 0.2]
    assert sorted(hot) == sorted(sp.interacting) and len(hot) >= 10
    assert set(sp.additive) == set(sp.doubles) - set(hot)
    # two singles on disjoint nodes with no DAG path between them add up exactly
    tr = sp.train.truth
    M = np.linalg.inv(np.eye(6) - tr["W"])
    reach = np.abs(tr["shifts"] @ M.T) > 0  # nodes each single moves
    all_scores = tr["interaction_scores"]
    for pair, v in all_scores.items():
        a, b = (int(p[1:]) for p in pair.split("+"))
        if not (reach[a] & reach[b]).any():
            assert v < 1e-8
    with pytest.raises(ValueError, match="min_interacting"):
        simulate_screen(min_interacting=1.5)


def test_background_shift_moves_background_genes_only_when_asked():
    plain = simulate_screen(n_cells=20, n_controls=60, n_mc=2000, seed=2)
    moved = simulate_screen(n_cells=20, n_controls=60, n_mc=2000, seed=2, bg_shift=1.5)
    genes = np.unique(np.concatenate(plain.train.truth["genes_of_node"]))
    others = np.setdiff1d(np.arange(100), genes)
    for sp, lo, hi in ((plain, 0.0, 0.05), (moved, 0.05, np.inf)):
        tm = sp.test.truth["true_means"]
        change = np.abs(tm["P00"] - tm[CONTROL])[others].max()
        assert lo <= change < hi
    norms = np.linalg.norm(moved.train.truth["bg_shifts"], axis=1)
    np.testing.assert_allclose(norms, 1.5)
    # the true background latent is the unshifted one: the same draws as without the shift
    np.testing.assert_array_equal(plain.train.truth["z_bg"], moved.train.truth["z_bg"])
    with pytest.raises(ValueError, match="bg_shift"):
        simulate_screen(bg_shift=-1.0)


def test_semisynthetic_programs_interact_and_stay_sparse():
    pytest.importorskip("scanpy")
    sp = semisynthetic_pbmc(n_cells=20, n_controls=40, seed=1)
    scores = _recomputed_scores(sp)
    hot = sorted(d for d, v in scores.items() if v >= 0.2)
    assert hot == sorted(sp.interacting) and len(hot) >= 10
    eff = sp.train.truth["effects"]  # (single, cell type, gene)
    assert np.all((np.abs(eff) > 0).sum(-1) <= int(0.05 * 765))
    with pytest.raises(ValueError, match="effects"):
        semisynthetic_pbmc(effects="random")
