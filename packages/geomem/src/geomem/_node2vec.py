"""The paper's analysis model (a window-1 Node2Vec) and the associative control, in numpy.

Node2Vec-style model (Noroozizadeh et al., arXiv:2510.26745, Sec. on the Node2Vec connection):
one tied table :math:`\\Phi \\in \\mathbb R^{n \\times k}`; the logits of a source ``u`` over all
nodes are :math:`\\Phi \\Phi_u`, and the loss is the mean over the ``E`` directed edges

.. math::

    \\mathcal L(\\Phi) = \\frac1E \\sum_{(u, v)} -\\log \\operatorname{softmax}(\\Phi\\Phi_u)_v
    = \\frac1E \\sum_u \\Big[\\deg(u) \\operatorname{lse}(S_u) - \\sum_v A_{uv} S_{uv}\\Big],
    \\quad S = \\Phi\\Phi^\\top.

With :math:`P = \\operatorname{softmax}(S)` row-wise and
:math:`G = (\\operatorname{diag}(\\deg) P - A)/E`, the gradient is
:math:`\\nabla_\\Phi \\mathcal L = (G + G^\\top)\\Phi`; training is full-batch gradient descent
(lr 0.01, :math:`\\Phi \\sim N(0, 0.01^2)`, ``k = 100``): full softmax, 1-hop neighbours, no
random walks.

Associative control: :math:`\\Phi` frozen random with unit-norm rows and scores
:math:`S = \\Phi W \\Phi^\\top` with ``W`` learned (:math:`\\nabla_W = \\Phi^\\top G \\Phi`). It can store
every edge (rows of :math:`\\Phi` are independent when ``n <= k``) but its embeddings carry no
graph structure, so navigation sits at chance.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import (
    SeedLike,
    check_positive,
    check_positive_int,
    check_seed,
    rng_from_seed,
)

__all__ = ["AssociativeControl", "Node2Vec", "edge_loss_grad"]


def _check_adj(adj: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    a = np.asarray(adj, dtype=np.float64)
    if a.shape != (n, n):
        raise ValueError(f"graph must have {n} nodes to match the model, got {a.shape[0]}")
    return a


def edge_loss_grad(
    scores: NDArray[np.float64], adj: NDArray[np.float64]
) -> tuple[float, NDArray[np.float64]]:
    """Mean edge cross-entropy of a score matrix and its gradient ``G = dL/dS``.

    ``L = (1/E) sum_{u,v} A_uv (lse(S_u) - S_uv)``, ``G = (diag(deg) softmax(S) - A) / E``.
    """
    deg = adj.sum(axis=1)
    n_edges = float(deg.sum())
    m = scores.max(axis=1, keepdims=True)
    ex = np.exp(scores - m)
    z = ex.sum(axis=1, keepdims=True)
    lse = (m + np.log(z))[:, 0]
    loss = float((deg * lse).sum() - (adj * scores).sum()) / n_edges
    grad = (deg[:, None] * (ex / z) - adj) / n_edges
    return loss, grad


def _seed_record(seed: SeedLike) -> int | None:
    """The seed as recorded on the model: the integer, or ``None`` for a Generator / entropy."""
    checked = check_seed(seed)
    return checked if isinstance(checked, int) else None


class Node2Vec:
    """Tied embedding table trained on 1-hop edge prediction with a full softmax.

    Args:
        n_nodes: number of nodes ``n``.
        dim: embedding width ``k`` (default 100).
        seed: seed of the initial table ``Phi ~ N(0, init_scale^2)``.
        lr: gradient-descent step (default 0.01).
        init_scale: standard deviation of the initial entries (default 0.01).

    >>> from geomem.graphs import path_star
    >>> from geomem import train
    >>> g = path_star(4, 3, seed=0)
    >>> m = Node2Vec(g.n_nodes, dim=8, seed=0)
    >>> _ = train(m, g, steps=10)
    >>> m.embeddings().shape
    (9, 8)
    """

    kind = "node2vec"

    def __init__(
        self,
        n_nodes: int,
        dim: int = 100,
        seed: SeedLike = 0,
        *,
        lr: float = 0.01,
        init_scale: float = 0.01,
    ) -> None:
        self.n_nodes = check_positive_int(n_nodes, "n_nodes", minimum=2)
        self.dim = check_positive_int(dim, "dim")
        self.lr = check_positive(lr, "lr")
        self.seed = _seed_record(seed)
        init_scale = check_positive(init_scale, "init_scale")
        self.phi = rng_from_seed(seed).normal(0.0, init_scale, (self.n_nodes, self.dim))

    def scores(self) -> NDArray[np.float64]:
        """``S = Phi Phi^T``: row ``u`` holds the logits of source ``u``."""
        return self.phi @ self.phi.T

    edge_scores = scores

    def step(self, adj: NDArray[np.float64]) -> float:
        """One full-batch gradient step on the edges of ``adj``; returns the loss before it."""
        a = _check_adj(adj, self.n_nodes)
        loss, g = edge_loss_grad(self.scores(), a)
        self.phi -= self.lr * ((g + g.T) @ self.phi)
        return loss

    def embeddings(self) -> NDArray[np.float64]:
        """The table ``Phi``, ``(n_nodes, dim)`` (a copy)."""
        return self.phi.copy()


class AssociativeControl:
    """Frozen random unit-norm node vectors ``Phi``; a learned bilinear map ``W`` scores pairs.

    Args:
        n_nodes: number of nodes.
        dim: width ``k`` of ``Phi`` (default 100).
        seed: seed of ``Phi``.
        lr: gradient-descent step on ``W`` (default 50: the gradient
            ``Phi^T G Phi`` is small because ``G`` carries ``1/E``).
    """

    kind = "associative"

    def __init__(
        self, n_nodes: int, dim: int = 100, seed: SeedLike = 0, *, lr: float = 50.0
    ) -> None:
        self.n_nodes = check_positive_int(n_nodes, "n_nodes", minimum=2)
        self.dim = check_positive_int(dim, "dim")
        self.lr = check_positive(lr, "lr")
        self.seed = _seed_record(seed)
        phi = rng_from_seed(seed).standard_normal((self.n_nodes, self.dim))
        self.phi = phi / np.linalg.norm(phi, axis=1, keepdims=True)
        self.w = np.zeros((self.dim, self.dim))

    def scores(self) -> NDArray[np.float64]:
        """``S = Phi W Phi^T``."""
        return self.phi @ self.w @ self.phi.T

    edge_scores = scores

    def step(self, adj: NDArray[np.float64]) -> float:
        a = _check_adj(adj, self.n_nodes)
        loss, g = edge_loss_grad(self.scores(), a)
        self.w -= self.lr * (self.phi.T @ g @ self.phi)
        return loss

    def embeddings(self) -> NDArray[np.float64]:
        """The frozen random table ``Phi`` (a copy)."""
        return self.phi.copy()
