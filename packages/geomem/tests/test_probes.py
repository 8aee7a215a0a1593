"""Probes against planted structure, random baselines (statistically) and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from geomem.graphs import Graph, cycle, grid, normalized_laplacian, path_star
from geomem.probes import (
    edge_recovery,
    eigen_energy,
    energy_per_eigenvalue,
    geometric_score,
    navigation,
    spectral_alignment,
    spectral_share,
)


def _smooth(g: Graph, k: int) -> np.ndarray:
    _, vecs = np.linalg.eigh(normalized_laplacian(g.adj))
    return vecs[:, 1 : k + 1] * np.linspace(2, 1, k)


def test_planted_spectral_embedding():
    g = path_star(8, 4, 0)
    e = _smooth(g, 8)
    # centring over nodes is not exactly the projection off the trivial eigenvector
    # (proportional to sqrt(deg)), so a planted embedding scores just below 1
    assert 0.99 <= spectral_share(e, g, 8) <= 1.0
    assert 0.99 <= spectral_alignment(e, g, 8) <= 1.0 + 1e-12
    assert spectral_share(_smooth(cycle(8), 2), cycle(8), 2) == pytest.approx(1.0, abs=1e-10)
    assert navigation(e, g) == 1.0
    assert geometric_score(e, g) > 0.3
    vals, energy = eigen_energy(e, g)
    assert np.all(np.diff(vals) >= -1e-12) and energy[0] < 0.01 * energy.sum()


def test_random_embedding_baselines():
    """Random Gaussian rows: share and alignment ~ k/(n-1); navigation ~ 1/d (binomial bound)."""
    g = path_star(20, 5, 0)
    n, k = g.n_nodes, 20
    rng = np.random.default_rng(0)
    shares = [spectral_share(rng.normal(size=(n, 100)), g, k) for _ in range(20)]
    assert np.mean(shares) == pytest.approx(k / (n - 1), abs=0.02)
    aligns = [spectral_alignment(rng.normal(size=(n, 100)), g, k) for _ in range(20)]
    assert np.mean(aligns) == pytest.approx(k / (n - 1), abs=0.03)
    hits = sum(navigation(rng.normal(size=(n, 50)), g) * 20 for _ in range(20))
    # 400 leaf trials at p = 0.05: mean 20, sd 4.4; 5 sd band
    assert 20 - 22 <= hits <= 20 + 22


def test_edge_recovery():
    g = grid(3, 4, seed=1)
    assert edge_recovery(g.adj + 0.01 * np.eye(g.n_nodes), g) == 1.0
    s = g.adj.copy()
    u = int(np.flatnonzero(g.degrees == 2)[0])
    s[u] = 0.0
    s[u, (u + 1) % g.n_nodes] = 0.0
    assert edge_recovery(s, g) < 1.0
    with pytest.raises(ValueError, match="shape"):
        edge_recovery(np.zeros((3, 3)), g)
    with pytest.raises(TypeError, match="edge_scores"):
        edge_recovery(object(), g)


def test_energy_per_eigenvalue_cycle():
    g = cycle(8)
    e = _smooth(g, 2)
    vals, per = energy_per_eigenvalue(e, g)
    assert len(vals) == 4  # eigenvalues of C8's normalised Laplacian: 0 and 4 double + 1 single ...
    assert per[0] == pytest.approx(per.sum())


def test_bad_embeddings():
    g = path_star(4, 3)
    good = np.random.default_rng(0).normal(size=(g.n_nodes, 5))
    with pytest.raises(ValueError, match="one row per node"):
        navigation(good[:-1], g)
    bad = good.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        spectral_share(bad, g, 2)
    with pytest.raises(TypeError, match="real"):
        geometric_score(good + 1j, g)
    with pytest.raises(ValueError, match="dimension"):
        spectral_share(good[:, 0], g, 2)
    for k in (0, g.n_nodes):
        with pytest.raises(ValueError, match="k must"):
            spectral_share(good, g, k)
    with pytest.raises(TypeError, match="k must"):
        spectral_alignment(good, g, 1.5)
    with pytest.raises(ValueError, match="root"):
        navigation(np.ones((16, 3)), grid(4, 4))


def test_disconnected_graph_warns_and_excludes_zero_eigenvalues():
    a = path_star(3, 3).adj
    n = a.shape[0]
    adj = np.zeros((2 * n, 2 * n))
    adj[:n, :n] = a
    adj[n:, n:] = a
    g = Graph(adj, name="two stars")
    e = np.random.default_rng(0).normal(size=(2 * n, 4))
    with pytest.warns(UserWarning, match="disconnected"):
        spectral_share(e, g, 2)
    # indicator of the components lives on the zero eigenspace: excluded from the share
    ind = np.r_[np.ones(n), -np.ones(n)][:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert spectral_share(np.hstack([ind, 1e-9 * e]), g, 2) < 1e-6


def test_probes_accept_torch_embedding_tables():
    """Any torch embedding matrix (e.g. an ``nn.Embedding`` weight) works like its numpy copy."""
    torch = pytest.importorskip("torch")
    g = path_star(5, 3, 0)
    w = torch.nn.Embedding(g.n_nodes, 8).weight  # requires grad
    e = w.detach().double().numpy()
    assert spectral_share(w, g, 5) == pytest.approx(spectral_share(e, g, 5))
    assert spectral_alignment(w, g, 5) == pytest.approx(spectral_alignment(e, g, 5))
    assert navigation(w, g) == navigation(e, g)
    assert geometric_score(w, g) == pytest.approx(geometric_score(e, g))


def test_navigation_refuses_empty_and_foreign_leaves():
    g = path_star(4, 3, 0)
    e = np.random.default_rng(0).standard_normal((g.n_nodes, 5))
    with pytest.raises(ValueError, match=r"leaves must name at least one leaf .* got an empty"):
        navigation(e, g, [])
    with pytest.raises(ValueError, match=r"leaves must be leaves of the graph .* got \[99\]"):
        navigation(e, g, [int(g.leaves[0]), 99])
    with pytest.raises(ValueError, match=rf"got \[{g.root}\]"):
        navigation(e, g, [g.root])
    with pytest.raises(TypeError, match=r"leaves must be integer node ids, got dtype float64"):
        navigation(e, g, [1.5])
    assert 0.0 <= navigation(e, g, g.leaves[:2]) <= 1.0


def test_edge_recovery_refuses_nan_and_constant_scores():
    g = path_star(4, 3, 0)
    s = np.random.default_rng(0).standard_normal((g.n_nodes, g.n_nodes))
    s[2, 5] = np.nan
    with pytest.raises(ValueError, match=r"edge scores must be finite, got nan at \(2, 5\)"):
        edge_recovery(s, g)
    const = np.ones((g.n_nodes, 8))  # constant embeddings: every pair scores alike
    with pytest.raises(ValueError, match=r"edge scores must differ between node pairs"):
        edge_recovery(const @ const.T, g)
    # a tie at the cut is not a recovery: scoring every pair of node 0 alike except itself
    planted = g.adj.astype(float).copy()
    assert edge_recovery(planted, g) == 1.0
    planted[0] = 0.0
    assert edge_recovery(planted, g) == pytest.approx(1 - 1 / g.n_nodes)
