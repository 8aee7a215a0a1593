"""Node2Vec and the associative control: gradients against torch autograd, training behaviour."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from geomem import train
from geomem.graphs import path_star
from geomem.models import AssociativeControl, Node2Vec
from geomem.probes import edge_recovery, navigation


def _torch_loss(scores: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
    u, v = torch.nonzero(adj, as_tuple=True)
    return torch.nn.functional.cross_entropy(scores[u], v)  # mean over directed edges


def test_node2vec_step_matches_autograd():
    g = path_star(4, 3, 0)
    m = Node2Vec(g.n_nodes, dim=6, seed=1, init_scale=0.5)
    phi = torch.tensor(m.phi, requires_grad=True)
    loss = _torch_loss(phi @ phi.T, torch.tensor(g.adj))
    loss.backward()
    before = m.phi.copy()
    got = m.step(g.adj)
    assert got == pytest.approx(float(loss.detach()), rel=1e-12)
    np.testing.assert_allclose((before - m.phi) / m.lr, phi.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_associative_step_matches_autograd():
    g = path_star(4, 3, 0)
    m = AssociativeControl(g.n_nodes, dim=12, seed=2, lr=1.0)
    m.w = np.random.default_rng(0).normal(size=m.w.shape)
    w = torch.tensor(m.w, requires_grad=True)
    phi = torch.tensor(m.phi)
    _torch_loss(phi @ w @ phi.T, torch.tensor(g.adj)).backward()
    before = m.w.copy()
    m.step(g.adj)
    np.testing.assert_allclose(before - m.w, w.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(m.phi, axis=1), 1.0)


def test_node2vec_learns_geometry_small():
    g = path_star(6, 4, 0)
    m = Node2Vec(g.n_nodes, seed=0)
    res = train(m, g, steps=8000, log_every=4000)
    assert navigation(m.embeddings(), g) == 1.0
    assert res.final["spectral_share"] > 0.8
    assert res.losses[-1] < res.losses[0]


def test_associative_memorises_without_geometry():
    g = path_star(10, 4, 0)
    navs = []
    for seed in range(3):
        m = AssociativeControl(g.n_nodes, seed=seed)
        train(m, g, steps=1500, log_every=1500)
        assert edge_recovery(m, g) >= 0.99
        navs.append(navigation(m.embeddings(), g))
    # chance is 1/10 per leaf: 30 leaves, P(>= 12 hits) < 1e-3 under chance
    assert np.mean(navs) < 0.4


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_nodes"):
        Node2Vec(1)
    with pytest.raises(ValueError, match="lr"):
        Node2Vec(5, lr=-1.0)
    with pytest.raises(ValueError, match="dim"):
        AssociativeControl(5, dim=0)
    with pytest.raises(ValueError, match="graph must have"):
        train(Node2Vec(5), path_star(3, 3), steps=2)
    with pytest.raises(ValueError, match="recipe"):
        train(Node2Vec(9), path_star(4, 3), recipe="nope", steps=2)
    with pytest.raises(ValueError, match="steps"):
        train(Node2Vec(9), path_star(4, 3), steps=0)
