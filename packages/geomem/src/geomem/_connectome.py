"""A real connectome as a memorisation graph: the left hemisphere of the *Drosophila* larva
mushroom body (Eichler et al., Nature 2017), as shipped in ``graspologic``'s wheel
(``graspologic/datasets/drosophila/left_adjacency.csv``: 209 neurons, synapse counts; MIT).

Two neurons are joined when they share at least ``min_synapses`` synapses in either direction
(the graph is made undirected, self-loops dropped) and the largest connected component is kept.
The path task needs one root and leaves with a single answer, so the root is the neuron of degree
``>= 8`` with the most neurons at distance exactly 2 reached by a *unique* shortest path (ties:
the most distinct first hops, then the lowest index); those neurons are the leaves and
``arms[i]`` is the path ``[n1, leaf]``. Every edge of the component is memorised; the leaves
split 75/25 into path-query leaves and unseen leaves as in the generators of
:mod:`geomem.graphs`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import SeedLike, check_positive_int, rng_from_seed

from ._graphs import Graph

__all__ = ["drosophila_left", "load_drosophila_left"]

_MIN_ROOT_DEGREE = 8


def load_drosophila_left(path: str | Path | None = None) -> tuple[NDArray[np.float64], list[str]]:
    """The raw connectome: ``(W, cell_types)`` with ``W[i, j]`` the synapse count from neuron
    ``i`` to ``j`` (209 × 209) and the cell type of each neuron (K, P, O, I).

    ``path=None`` reads the file inside the installed ``graspologic`` wheel (extra
    ``geomem[connectome]``); nothing is downloaded. ``path`` may name a folder holding
    ``left_adjacency.csv`` and ``left_cell_labels.csv`` in the same format.
    """
    if path is None:
        spec = importlib.util.find_spec("graspologic")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError(
                "the Drosophila connectome ships inside graspologic's wheel: "
                "pip install 'geomem[connectome]'"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "drosophila"
    folder = Path(path)
    adj_file, lab_file = folder / "left_adjacency.csv", folder / "left_cell_labels.csv"
    for f in (adj_file, lab_file):
        if not f.is_file():
            raise FileNotFoundError(f"path must name a folder holding {f.name}, got {folder}")
    W = np.loadtxt(adj_file, ndmin=2)
    labels = lab_file.read_text().split()
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.shape[0] != len(labels):
        raise ValueError(
            f"{adj_file} must be a square matrix with one row per label of {lab_file.name} "
            f"({len(labels)}), got shape {W.shape}"
        )
    if not np.isfinite(W).all() or (W < 0).any():
        raise ValueError(f"{adj_file} must hold finite non-negative synapse counts")
    return W, labels


def _bfs(adj: NDArray[np.float64], root: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Distances from ``root`` (-1 unreachable) and the number of shortest paths to each node."""
    n = len(adj)
    dist = np.full(n, -1, np.int64)
    count = np.zeros(n)
    dist[root], count[root] = 0, 1.0
    queue = [root]
    for u in queue:
        for v in np.flatnonzero(adj[u]):
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                queue.append(int(v))
            if dist[v] == dist[u] + 1:
                count[v] += count[u]
    return dist, count


def _arms(adj: NDArray[np.float64], root: int) -> list[tuple[int, int]]:
    """``(n1, leaf)`` for every node at distance 2 from ``root`` by a unique shortest path."""
    dist, count = _bfs(adj, root)
    out = []
    for t in np.flatnonzero((dist == 2) & (count == 1)):
        (hop,) = [int(v) for v in np.flatnonzero(adj[t]) if dist[v] == 1]
        out.append((hop, int(t)))
    return out


def drosophila_left(
    min_synapses: int = 10, seed: SeedLike = 0, path: str | Path | None = None
) -> Graph:
    """The connectome as a :class:`Graph` with a root, leaves and a train/test leaf split.

    At the default ``min_synapses=10``: 118 neurons, 398 edges, a root of degree 13 and 30
    leaves behind 10 distinct first hops (22 path-query, 8 unseen); node ids are permuted by ``seed``, which also draws the
    leaf split.
    """
    min_synapses = check_positive_int(min_synapses, "min_synapses")
    W, _ = load_drosophila_left(path)
    S = np.maximum(W, W.T)
    np.fill_diagonal(S, 0.0)
    A = (S >= min_synapses).astype(np.float64)
    if not A.any():
        raise ValueError(f"min_synapses={min_synapses} leaves no edge in the connectome")
    dist, _ = _bfs(A, int(A.sum(1).argmax()))
    keep = np.flatnonzero(dist >= 0)
    A = A[np.ix_(keep, keep)]
    best: tuple[int, int, int] | None = None
    for r in np.flatnonzero(A.sum(1) >= _MIN_ROOT_DEGREE):
        arms = _arms(A, int(r))
        key = (len(arms), len({h for h, _ in arms}), -int(r))
        if best is None or key > best:
            best = key
    if best is None or best[0] < 4:
        raise ValueError(
            f"min_synapses={min_synapses} leaves no root of degree >= {_MIN_ROOT_DEGREE} with "
            "at least 4 leaves at distance 2: lower it"
        )
    root = -best[2]
    rng = rng_from_seed(seed)
    n = len(A)
    perm = rng.permutation(n).astype(np.int64)
    adj = np.zeros_like(A)
    adj[np.ix_(perm, perm)] = A
    arms = [perm[np.array(a, np.int64)] for a in _arms(A, root)]
    leaves = np.array([a[-1] for a in arms], np.int64)
    order = rng.permutation(len(leaves))
    n_train = int(np.floor(0.75 * len(leaves)))
    return Graph(
        adj,
        int(perm[root]),
        leaves,
        np.sort(leaves[order[:n_train]]),
        np.sort(leaves[order[n_train:]]),
        arms,
        f"drosophila_left(min_synapses={min_synapses})",
    )
