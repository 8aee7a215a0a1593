"""Probes that tell associative from geometric storage, on embeddings or on a model.

All probes follow Noroozizadeh et al., arXiv:2510.26745. On node embedding rows
:math:`\\Phi` (for a GPT, its input embedding table):

* navigation: for each leaf ``t``, :math:`\\arg\\max_{r \\in N(\\text{root})} \\cos(\\Phi_t, \\Phi_r)`
  is the true first hop (chance ``1/d``);
* geometric score: mean cosine over edges minus mean cosine over all non-edges;
* spectral share: with :math:`L = I - D^{-1/2} A D^{-1/2}` and eigenvectors :math:`u_i` in ascending
  eigenvalue, :math:`\\Phi_c` the node-centred table and :math:`E_i = \\|u_i^\\top \\Phi_c\\|^2`,
  share = :math:`\\sum` of :math:`E_i` over the ``k`` smoothest non-trivial eigenvectors / :math:`\\sum_i E_i`
  (random :math:`\\approx k/(n-1)`);
* spectral alignment: the mean of :math:`\\|U_k^\\top p_j\\|^2` over the leading left singular vectors
  :math:`p_j` of :math:`\\Phi_c` reaching 95% of its energy (at most ``k``).

On a model (which scores node pairs its own way, ``model.edge_scores()``): edge recovery (for each
``u``, its top-``deg(u)`` scores, self excluded, are exactly its neighbours). On a GPT: first-step
and exact-path accuracy of greedy generation on unseen leaves, and teacher-forced token accuracy.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_finite_array, check_positive_int

from ._graphs import Graph, normalized_laplacian
from ._tasks import Vocab, path_examples

_ZERO = 1e-9


def _emb(embeddings: ArrayLike, graph: Graph) -> NDArray[np.float64]:
    if isinstance(embeddings, torch.Tensor):
        embeddings = embeddings.detach().cpu().double().numpy()
    e = check_finite_array(embeddings, "embeddings", ndim=2)
    if e.shape[0] != graph.n_nodes:
        raise ValueError(
            f"embeddings must have one row per node of the graph ({graph.n_nodes}), "
            f"got shape {e.shape}"
        )
    return e


def _unit(e: NDArray[np.float64]) -> NDArray[np.float64]:
    norm = np.linalg.norm(e, axis=1, keepdims=True)
    return e / np.where(norm > 0, norm, 1.0)


def _check_leaves(leaves: ArrayLike | None, graph: Graph, default: NDArray[np.int64]) -> NDArray:
    """``leaves`` as int64 (``default`` when None): non-empty, integer, leaves of ``graph``."""
    if leaves is None:
        chosen = np.asarray(default, np.int64)
    else:
        raw = np.asarray(leaves)
        if raw.dtype.kind not in "iu" and raw.size:
            raise TypeError(f"leaves must be integer node ids, got dtype {raw.dtype}")
        chosen = raw.astype(np.int64).ravel()
    if chosen.size == 0:
        raise ValueError("leaves must name at least one leaf of the graph, got an empty list")
    bad = chosen[~np.isin(chosen, graph.leaves)]
    if bad.size:
        raise ValueError(
            f"leaves must be leaves of the graph ({len(graph.leaves)} leaves among node ids "
            f"0..{graph.n_nodes - 1}), got {bad[:5].tolist()}"
        )
    return chosen


def navigation(embeddings: ArrayLike, graph: Graph, leaves: ArrayLike | None = None) -> float:
    """Fraction of leaves whose most cosine-similar root neighbour is their true first hop.

    >>> import numpy as np
    >>> from geomem.graphs import path_star
    >>> g = path_star(3, 3, seed=0)
    >>> e = np.zeros((g.n_nodes, 3)); e[g.root] = 0
    >>> for a, arm in enumerate(g.arms): e[arm, a] = 1.0
    >>> navigation(e, g)
    1.0
    """
    e = _unit(_emb(embeddings, graph))
    if graph.root < 0:
        raise ValueError(f"graph must have a root for navigation, got {graph.name}")
    chosen = _check_leaves(leaves, graph, graph.leaves)
    nbrs = graph.neighbours(graph.root)
    hits = [nbrs[np.argmax(e[nbrs] @ e[t])] == graph.first_hop(int(t)) for t in chosen]
    return float(np.mean(hits))


def geometric_score(embeddings: ArrayLike, graph: Graph) -> float:
    """Mean cosine over edges minus mean cosine over all non-edges (``u != v``)."""
    e = _unit(_emb(embeddings, graph))
    cos = e @ e.T
    off = ~np.eye(graph.n_nodes, dtype=bool)
    edge = graph.adj > 0
    return float(cos[edge].mean() - cos[off & ~edge].mean())


def _scores(model: Any) -> NDArray[np.float64]:
    if isinstance(model, np.ndarray):
        return np.asarray(model, np.float64)
    if not hasattr(model, "edge_scores"):
        raise TypeError(
            f"model must have edge_scores() or be an (n, n) score array, got {type(model).__name__}"
        )
    return np.asarray(model.edge_scores(), np.float64)


def edge_recovery(model: Any, graph: Graph) -> float:
    """Fraction of nodes ``u`` whose ``deg(u)`` highest scores (self excluded) are exactly its
    neighbours, each neighbour scoring strictly above every non-neighbour (a tie at the cut is
    not a recovery). ``model`` is anything with ``edge_scores() -> (n, n)``, or that array.

    Raises ``ValueError`` for scores of the wrong shape, non-finite scores, and scores equal
    for every pair (constant embeddings or an untrained bilinear map: nothing to recover)."""
    s = _checked_scores(model, graph)
    off = s[~np.eye(graph.n_nodes, dtype=bool)]
    if off.size and np.all(off == off[0]):
        raise ValueError(
            f"edge scores must differ between node pairs, got {off[0]!r} for every pair "
            "(constant embeddings or an untrained model)"
        )
    return recovery_fraction(s, graph)


def _checked_scores(model: Any, graph: Graph) -> NDArray[np.float64]:
    s = _scores(model).copy()
    if s.shape != (graph.n_nodes, graph.n_nodes):
        raise ValueError(f"edge scores must have shape {(graph.n_nodes,) * 2}, got {s.shape}")
    bad = ~np.isfinite(s)
    if bad.any():
        u, v = np.argwhere(bad)[0]
        raise ValueError(f"edge scores must be finite, got {s[u, v]} at ({u}, {v})")
    return s


def recovery_fraction(scores: NDArray[np.float64], graph: Graph) -> float:
    """:func:`edge_recovery` on a checked ``(n, n)`` score array, constant scores allowed
    (every node then counts as not recovered); used to log training from step 0."""
    s = np.array(scores, np.float64)
    np.fill_diagonal(s, -np.inf)
    hits = []
    for u in range(graph.n_nodes):
        nb = graph.neighbours(u)
        rest = np.setdiff1d(np.arange(graph.n_nodes), np.append(nb, u))
        hits.append(bool(rest.size == 0 or s[u, nb].min() > s[u, rest].max()))
    return float(np.mean(hits))


def _spectrum(graph: Graph) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    lap = normalized_laplacian(graph.adj)
    vals, vecs = np.linalg.eigh(lap)
    zero = np.abs(vals) < _ZERO
    if zero.sum() > 1:
        warnings.warn(
            f"graph is disconnected ({int(zero.sum())} zero eigenvalues): every zero eigenvalue "
            "is excluded from the spectral probes",
            stacklevel=3,
        )
    return vals, vecs, zero


def eigen_energy(
    embeddings: ArrayLike, graph: Graph
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Eigenvalues of ``L`` (ascending) and ``E_i = ||u_i^T Phi_c||^2`` for each eigenvector."""
    e = _emb(embeddings, graph)
    vals, vecs, _ = _spectrum(graph)
    centred = e - e.mean(axis=0)
    return vals, ((vecs.T @ centred) ** 2).sum(axis=1)


def _check_k(k: int, graph: Graph) -> int:
    k = check_positive_int(k, "k")
    if k > graph.n_nodes - 1:
        raise ValueError(f"k must be in [1, n-1] = [1, {graph.n_nodes - 1}], got {k}")
    return k


def spectral_share(embeddings: ArrayLike, graph: Graph, k: int) -> float:
    """Share of the centred embedding energy on the ``k`` smoothest non-trivial Laplacian
    eigenvectors (random ``~ k/(n-1)``)."""
    k = _check_k(k, graph)
    e = _emb(embeddings, graph)
    _, vecs, zero = _spectrum(graph)
    energy = ((vecs.T @ (e - e.mean(axis=0))) ** 2).sum(axis=1)
    total = energy.sum()
    if total <= 0:
        raise ValueError("embeddings must not be constant over nodes (zero centred energy)")
    keep = np.flatnonzero(~zero)[:k]
    return float(energy[keep].sum() / total)


def spectral_alignment(embeddings: ArrayLike, graph: Graph, k: int) -> float:
    """Mean ``||U_k^T p_j||^2`` over the principal node-space directions ``p_j`` of the centred
    table that reach 95% of its energy (at most ``k``); random ``~ k/(n-1)``."""
    k = _check_k(k, graph)
    e = _emb(embeddings, graph)
    _, vecs, zero = _spectrum(graph)
    u, s, _ = np.linalg.svd(e - e.mean(axis=0), full_matrices=False)
    if s[0] <= 0:
        raise ValueError("embeddings must not be constant over nodes (zero centred energy)")
    frac = np.cumsum(s**2) / np.sum(s**2)
    m = min(int(np.searchsorted(frac, 0.95 - 1e-12)) + 1, k)
    uk = vecs[:, np.flatnonzero(~zero)[:k]]
    return float(np.mean(((uk.T @ u[:, :m]) ** 2).sum(axis=0)))


def energy_per_eigenvalue(
    embeddings: ArrayLike, graph: Graph, tol: float = 1e-8
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Distinct non-zero eigenvalues (ascending, merged within ``tol``) and the energy summed
    over each eigenspace (which does not depend on the basis chosen inside it)."""
    vals, energy = eigen_energy(embeddings, graph)
    keep = np.abs(vals) >= _ZERO
    vals, energy = vals[keep], energy[keep]
    groups: list[list[int]] = []
    for i, v in enumerate(vals):
        if groups and abs(v - vals[groups[-1][0]]) < tol:
            groups[-1].append(i)
        else:
            groups.append([i])
    return (
        np.array([vals[g].mean() for g in groups]),
        np.array([energy[g].sum() for g in groups]),
    )


# --- GPT behaviour probes -------------------------------------------------------------------


def _queries(graph: Graph, leaves: ArrayLike | None) -> tuple[torch.Tensor, torch.Tensor]:
    chosen = _check_leaves(leaves, graph, graph.test_leaves)
    ex = path_examples(graph, chosen)
    ids = torch.tensor([e.ids for e in ex])
    return ids[:, :4], ids[:, 4:-1]


def _generate(model: Any, graph: Graph, leaves: ArrayLike | None) -> tuple[torch.Tensor, ...]:
    if Vocab(graph.n_nodes).n_nodes != getattr(model, "n_nodes", None):
        raise ValueError(
            f"model must have n_nodes={graph.n_nodes} to query this graph, "
            f"got {getattr(model, 'n_nodes', None)}"
        )
    prompt, truth = _queries(graph, leaves)
    return model.generate(prompt, truth.shape[1]), truth


def first_step(model: Any, graph: Graph, leaves: ArrayLike | None = None) -> float:
    """Fraction of leaves (default: the unseen test leaves) whose greedily generated first hop
    ``n1`` (after ``root ,``) is correct; no teacher forcing."""
    out, truth = _generate(model, graph, leaves)
    return float((out[:, 2] == truth[:, 2]).float().mean())


def exact_path(model: Any, graph: Graph, leaves: ArrayLike | None = None) -> float:
    """Fraction of leaves (default: test leaves) whose whole greedy path matches."""
    out, truth = _generate(model, graph, leaves)
    return float((out == truth).all(dim=1).float().mean())


@torch.no_grad()
def teacher_forced(model: Any, graph: Graph, leaves: ArrayLike | None = None) -> NDArray:
    """Teacher-forced accuracy of each node of the path ``[root, n1, ..., t]``, averaged over
    leaves (default: test leaves)."""
    prompt, truth = _queries(graph, leaves)
    ids = torch.cat([prompt, truth], dim=1)
    pred = model(ids[:, :-1]).argmax(-1)[:, prompt.shape[1] - 1 :]
    node_pos = np.arange(0, truth.shape[1], 2)
    return (pred[:, node_pos] == truth[:, node_pos]).double().mean(0).numpy()
