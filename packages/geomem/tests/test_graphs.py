"""Generators (acceptance item 1) against their definitions and networkx."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from geomem.graphs import cycle, grid, irregular, normalized_laplacian, path_star, star_tree


@pytest.mark.parametrize(
    ("d", "l", "seed"), [(2, 2, 0), (5, 5, 1), (20, 5, 2), (50, 5, 3), (7, 3, 9)]
)
def test_path_star_structure(d, l, seed):
    g = path_star(d, l, seed)
    assert g.n_nodes == d * (l - 1) + 1
    assert g.n_edges == d * (l - 1)
    assert len(g.leaves) == d and (g.degrees[g.leaves] == 1).all()
    assert g.degrees[g.root] == d
    for t in g.leaves:
        p = g.path_to(int(t))
        assert len(p) - 1 == l - 1 and p[0] == g.root and p[-1] == t
        assert all(g.adj[a, b] == 1 for a, b in itertools.pairwise(p))
    assert not set(g.train_leaves) & set(g.test_leaves)
    assert set(g.train_leaves) | set(g.test_leaves) == set(g.leaves)
    assert len(g.train_leaves) == int(np.floor(0.75 * d))
    assert np.array_equal(g.adj, g.adj.T) and np.trace(g.adj) == 0
    assert g.is_connected()


def test_path_star_seeded_and_permuted():
    a, b, c = path_star(10, 4, 0), path_star(10, 4, 0), path_star(10, 4, 1)
    assert np.array_equal(a.adj, b.adj) and np.array_equal(a.train_leaves, b.train_leaves)
    assert not np.array_equal(a.adj, c.adj)
    # ids carry no structure: the root is not always node 0
    assert {path_star(10, 4, s).root for s in range(10)} != {0}


def test_degree_sequences():
    assert sorted(grid(4, 4).degrees.tolist()) == [2] * 4 + [3] * 8 + [4] * 4
    assert grid(4, 4).n_edges == 24
    assert set(cycle(16).degrees.tolist()) == {2} and cycle(16).n_edges == 16
    ir = irregular()
    assert ir.n_nodes == 16 and ir.n_edges == 20 and ir.is_connected()
    assert len(set(ir.degrees.tolist())) > 2  # irregular


def test_star_tree():
    g = star_tree(3, depth=3, branching=2, seed=0)
    assert g.n_nodes == 1 + 3 * (1 + 2 + 4)
    assert len(g.leaves) == 12 and (g.degrees[g.leaves] == 1).all()
    for t in g.leaves:
        p = g.path_to(int(t))
        assert len(p) == 4 and all(g.adj[a, b] for a, b in itertools.pairwise(p))


def test_laplacian_matches_networkx():
    nx = pytest.importorskip("networkx")
    for g in (path_star(20, 5, 0), grid(4, 4), cycle(16), irregular(), star_tree(3, 2)):
        ref = nx.normalized_laplacian_matrix(nx.from_numpy_array(g.adj), nodelist=range(g.n_nodes))
        assert np.abs(normalized_laplacian(g.adj) - ref.toarray()).max() <= 1e-12


@pytest.mark.parametrize(
    ("fn", "args", "name"),
    [
        (path_star, (1, 5), "d"),
        (path_star, (5, 1), "l"),
        (path_star, (2.5, 3), "d"),
        (grid, (0, 3), "rows"),
        (grid, (3, -1), "cols"),
        (cycle, (2,), "n"),
        (cycle, (0,), "n"),
    ],
)
def test_bad_sizes(fn, args, name):
    with pytest.raises((ValueError, TypeError), match=name):
        fn(*args)


def test_path_to_unknown_leaf():
    g = path_star(3, 3)
    with pytest.raises(ValueError, match="leaf"):
        g.path_to(g.root)
    with pytest.raises(ValueError, match="root"):
        cycle(5).path_to(0)
