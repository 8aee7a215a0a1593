"""Graph generators with train/test leaf splits, and the normalised Laplacian.

Every generator draws a random permutation of node ids from ``seed``, so node labels carry no
structure. A :class:`Graph` holds the symmetric 0/1 adjacency ``adj`` and, for graphs with a
designated root (path-star, star-tree), the root, the leaves and the train/test leaf split
``|train| = floor(0.75 d)``. Test leaves only ever appear in edge memorisation, never in a path
query ("unseen leaves"), following Noroozizadeh, Nagarajan, Rosenfeld & Kumar, "Deep sequence
models tend to memorize geometrically; it is unclear why", ICML 2026, arXiv:2510.26745.

The normalised Laplacian is :math:`L = I - D^{-1/2} A D^{-1/2}` (undirected).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import SeedLike, check_positive_int, rng_from_seed

#: The fixed connected irregular graph of the spec: 16 nodes, 20 edges (degrees 1 to 5).
IRREGULAR_EDGES: tuple[tuple[int, int], ...] = (
    (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 2), (1, 6), (2, 7), (3, 8), (3, 9),
    (4, 10), (5, 11), (6, 12), (7, 12), (8, 13), (9, 13), (10, 14), (11, 15), (12, 14), (13, 15),
)  # fmt: skip


@dataclass(frozen=True)
class Graph:
    """An undirected graph with (optionally) a root, leaves and a train/test leaf split.

    Attributes:
        adj: ``(n, n)`` symmetric float64 0/1 adjacency, zero diagonal.
        root: the root node (``-1`` for graphs without one).
        leaves: leaf nodes, one per arm, in arm order.
        train_leaves: leaves used in path queries.
        test_leaves: leaves seen only in edge memorisation (``leaves`` minus ``train_leaves``).
        arms: ``(d, l-1)`` node ids of each arm from the root's neighbour to the leaf (empty for
            graphs without arms); ``arm_of[v]`` is the arm of node ``v`` (``-1`` for the root).
        name: a short description, e.g. ``"path_star(d=20, l=5)"``.
    """

    adj: NDArray[np.float64]
    root: int = -1
    leaves: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    train_leaves: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    test_leaves: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, np.int64))
    arms: list[NDArray[np.int64]] = field(default_factory=list)
    name: str = "graph"

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return int(self.adj.shape[0])

    @property
    def n_edges(self) -> int:
        """Number of undirected edges."""
        return int(np.triu(self.adj, 1).sum())

    @property
    def degrees(self) -> NDArray[np.int64]:
        """Node degrees."""
        return self.adj.sum(axis=1).astype(np.int64)

    def neighbours(self, u: int) -> NDArray[np.int64]:
        """The neighbours of ``u`` in increasing id order."""
        return np.flatnonzero(self.adj[u]).astype(np.int64)

    def edges(self) -> NDArray[np.int64]:
        """``(m, 2)`` undirected edges ``u < v``."""
        u, v = np.nonzero(np.triu(self.adj, 1))
        return np.stack([u, v], axis=1).astype(np.int64)

    @property
    def arm_of(self) -> NDArray[np.int64]:
        out = np.full(self.n_nodes, -1, np.int64)
        for a, arm in enumerate(self.arms):
            out[arm] = a
        return out

    def path_to(self, leaf: int) -> list[int]:
        """The root-to-leaf path ``[root, n1, ..., leaf]`` (graphs with a root only)."""
        if self.root < 0:
            raise ValueError(f"graph {self.name} has no root, so path_to is undefined")
        for arm in self.arms:
            if int(arm[-1]) == int(leaf):
                return [self.root, *(int(v) for v in arm)]
        raise ValueError(f"leaf must be one of the graph's leaves, got {leaf!r}")

    def first_hop(self, leaf: int) -> int:
        """The root's neighbour on the path to ``leaf``."""
        return self.path_to(leaf)[1]

    def is_connected(self) -> bool:
        seen = np.zeros(self.n_nodes, bool)
        stack = [0]
        seen[0] = True
        while stack:
            u = stack.pop()
            for v in np.flatnonzero(self.adj[u]):
                if not seen[v]:
                    seen[v] = True
                    stack.append(int(v))
        return bool(seen.all())


def _adjacency(n: int, edges: list[tuple[int, int]], perm: NDArray[np.int64]) -> NDArray:
    adj = np.zeros((n, n))
    for u, v in edges:
        adj[perm[u], perm[v]] = adj[perm[v], perm[u]] = 1.0
    return adj


def _split(leaves: NDArray[np.int64], rng: np.random.Generator) -> tuple[NDArray, NDArray]:
    order = rng.permutation(len(leaves))
    n_train = int(np.floor(0.75 * len(leaves)))
    return np.sort(leaves[order[:n_train]]), np.sort(leaves[order[n_train:]])


def _arms_graph(
    d: int, arm_nodes: list[list[int]], edges: list[tuple[int, int]], seed: int, name: str
) -> Graph:
    n = 1 + sum(len(a) for a in arm_nodes)
    rng = rng_from_seed(seed)
    perm = rng.permutation(n).astype(np.int64)
    adj = _adjacency(n, edges, perm)
    arms = [perm[np.asarray(a)] for a in arm_nodes]
    leaves = np.array([a[-1] for a in arms], np.int64)
    train, test = _split(leaves, rng)
    return Graph(adj, int(perm[0]), leaves, train, test, arms, name)


def path_star(d: int, l: int, seed: SeedLike = 0) -> Graph:
    """Path-star graph: a root and ``d`` arms of ``l - 1`` nodes each.

    ``d(l-1) + 1`` nodes, ``d(l-1)`` edges, ``d`` leaves; every root-to-leaf path has ``l - 1``
    edges. Node ids are randomly permuted; ``floor(0.75 d)`` leaves go to ``train_leaves``.

    >>> g = path_star(4, 3, seed=0)
    >>> g.n_nodes, g.n_edges, len(g.leaves), len(g.train_leaves)
    (9, 8, 4, 3)
    """
    d = check_positive_int(d, "d", minimum=2)
    l = check_positive_int(l, "l", minimum=2)
    arm_nodes, edges = [], []
    for a in range(d):
        nodes = [1 + a * (l - 1) + j for j in range(l - 1)]
        edges += list(zip([0, *nodes[:-1]], nodes))
        arm_nodes.append(nodes)
    return _arms_graph(d, arm_nodes, edges, seed, f"path_star(d={d}, l={l})")


def star_tree(d: int, depth: int, branching: int = 2, seed: SeedLike = 0) -> Graph:
    """Star of ``d`` trees: the root joins ``d`` complete ``branching``-ary trees of ``depth``
    levels. Leaves are the trees' deepest nodes; ``arms`` lists each root-to-leaf path (minus the
    root), so ``path_to`` and ``first_hop`` work as for path-stars.

    >>> g = star_tree(3, depth=2, branching=2)
    >>> g.n_nodes, len(g.leaves)
    (10, 6)
    """
    d = check_positive_int(d, "d", minimum=2)
    depth = check_positive_int(depth, "depth", minimum=1)
    branching = check_positive_int(branching, "branching", minimum=1)
    edges: list[tuple[int, int]] = []
    paths: list[list[int]] = []
    nxt = 1
    for _ in range(d):
        level = [[nxt]]
        edges.append((0, nxt))
        nxt += 1
        for _ in range(depth - 1):
            new = []
            for p in level:
                for _ in range(branching):
                    edges.append((p[-1], nxt))
                    new.append([*p, nxt])
                    nxt += 1
            level = new
        paths += level
    n = nxt
    rng = rng_from_seed(seed)
    perm = rng.permutation(n).astype(np.int64)
    adj = _adjacency(n, edges, perm)
    arms = [perm[np.asarray(p)] for p in paths]
    leaves = np.array([a[-1] for a in arms], np.int64)
    train, test = _split(leaves, rng)
    g = Graph(adj, int(perm[0]), leaves, train, test, arms, f"star_tree(d={d}, depth={depth})")
    return g


def grid(rows: int, cols: int, seed: SeedLike = 0) -> Graph:
    """The ``rows x cols`` grid graph (4-neighbourhood), ids permuted.

    >>> sorted(set(grid(4, 4).degrees.tolist()))
    [2, 3, 4]
    """
    rows = check_positive_int(rows, "rows")
    cols = check_positive_int(cols, "cols")
    if rows * cols < 2:
        raise ValueError(f"rows x cols must be at least 2 nodes, got {rows} x {cols}")
    edges = [(r * cols + c, r * cols + c + 1) for r in range(rows) for c in range(cols - 1)]
    edges += [(r * cols + c, (r + 1) * cols + c) for r in range(rows - 1) for c in range(cols)]
    perm = rng_from_seed(seed).permutation(rows * cols).astype(np.int64)
    return Graph(_adjacency(rows * cols, edges, perm), name=f"grid({rows}x{cols})")


def cycle(n: int, seed: SeedLike = 0) -> Graph:
    """The cycle on ``n >= 3`` nodes, ids permuted (every degree 2).

    >>> cycle(16).n_edges
    16
    """
    n = check_positive_int(n, "n", minimum=3)
    perm = rng_from_seed(seed).permutation(n).astype(np.int64)
    edges = [(i, (i + 1) % n) for i in range(n)]
    return Graph(_adjacency(n, edges, perm), name=f"cycle({n})")


def irregular(seed: SeedLike = 0) -> Graph:
    """The fixed connected irregular graph (16 nodes, 20 edges, :data:`IRREGULAR_EDGES`)."""
    perm = rng_from_seed(seed).permutation(16).astype(np.int64)
    return Graph(_adjacency(16, list(IRREGULAR_EDGES), perm), name="irregular(16, 20)")


def normalized_laplacian(adj: NDArray[np.float64]) -> NDArray[np.float64]:
    """``L = I - D^{-1/2} A D^{-1/2}``; isolated nodes get ``L_ii = 0`` (as networkx does)."""
    a = np.asarray(adj, dtype=np.float64)
    deg = a.sum(axis=1)
    inv = np.zeros_like(deg)
    inv[deg > 0] = 1.0 / np.sqrt(deg[deg > 0])
    lap = -inv[:, None] * a * inv[None, :]
    lap[np.diag_indices_from(lap)] += (deg > 0).astype(np.float64)
    return lap
