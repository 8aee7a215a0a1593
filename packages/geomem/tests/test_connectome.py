"""The Drosophila connectome as a memorisation graph: the real file, its graph, a bad folder."""

from __future__ import annotations

import numpy as np
import pytest

from geomem.graphs import drosophila_left, load_drosophila_left


def test_the_shipped_connectome_is_the_real_one():
    W, labels = load_drosophila_left()
    assert W.shape == (209, 209) and len(labels) == 209
    assert {lab: labels.count(lab) for lab in set(labels)} == {"K": 101, "P": 58, "O": 29, "I": 21}
    assert int((W > 0).sum()) == 7425 and np.trace(W) == 0


@pytest.mark.parametrize("seed", [0, 1])
def test_graph_leaves_have_one_shortest_path_at_distance_two(seed):
    g = drosophila_left(seed=seed)
    assert (g.n_nodes, g.n_edges) == (118, 398) and g.is_connected()
    assert int(g.degrees[g.root]) == 13 and len(g.leaves) == 30
    assert (len(g.train_leaves), len(g.test_leaves)) == (22, 8)
    assert not set(g.train_leaves) & set(g.test_leaves)
    A = g.adj
    for t in g.leaves:
        root, hop, leaf = g.path_to(int(t))
        assert A[root, hop] == A[hop, leaf] == 1 and A[root, leaf] == 0 and leaf != root
        # the hop is the only common neighbour of root and leaf
        assert int((A[root] * A[leaf]).sum()) == 1


def test_seeds_relabel_the_same_graph():
    a, b = drosophila_left(seed=0), drosophila_left(seed=1)
    assert sorted(a.degrees.tolist()) == sorted(b.degrees.tolist())
    assert not np.array_equal(a.adj, b.adj)
    ev = [np.linalg.eigvalsh(g.adj) for g in (a, b)]
    np.testing.assert_allclose(ev[0], ev[1], atol=1e-9)


def test_bad_folder_and_threshold_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"left_adjacency\.csv"):
        load_drosophila_left(tmp_path)
    np.savetxt(tmp_path / "left_adjacency.csv", np.ones((3, 2)))
    (tmp_path / "left_cell_labels.csv").write_text("K\nK\nP\n")
    with pytest.raises(ValueError, match="square matrix with one row per label"):
        load_drosophila_left(tmp_path)
    with pytest.raises(ValueError, match="min_synapses=60"):
        drosophila_left(min_synapses=60)
    with pytest.raises(ValueError, match="min_synapses must be"):
        drosophila_left(min_synapses=0)
