"""Task sequences and their text form."""

from __future__ import annotations

import pytest

from geomem.graphs import cycle, path_star
from geomem.tasks import SPECIALS, Vocab, edge_examples, from_text, path_examples, to_text


def test_edge_counts_and_directions():
    g = path_star(4, 4, 0)
    fwd = edge_examples(g, "forward")
    back = edge_examples(g, "backward")
    both = edge_examples(g, "both", self_edges=True)
    assert len(fwd) == len(back) == g.n_edges
    assert len(both) == 2 * g.n_edges + g.n_nodes
    depth = {g.root: 0, **{int(v): j + 1 for arm in g.arms for j, v in enumerate(arm)}}
    assert all(depth[e.ids[1]] < depth[e.ids[3]] for e in fwd)
    assert all(depth[e.ids[1]] > depth[e.ids[3]] for e in back)
    assert {(e.ids[1], e.ids[3]) for e in fwd} == {(e.ids[3], e.ids[1]) for e in back}


def test_path_examples():
    g = path_star(4, 4, 0)
    v = Vocab(g.n_nodes)
    ex = path_examples(g)
    assert len(ex) == len(g.train_leaves)
    for e, t in zip(ex, g.train_leaves):
        assert e.ids[1] == t and e.ids[3] == v.id("=")
        nodes = [i for i in e.ids[4:-1] if i < g.n_nodes]
        assert nodes == g.path_to(int(t))
        # loss on the tokens after "=" only
        assert [e.ids[i + 1] for i, m in enumerate(e.target) if m] == list(e.ids[4:])
    hard = path_examples(g, hardest_token=True)
    for e, t in zip(hard, g.train_leaves):
        (pos,) = [i for i, m in enumerate(e.target) if m]
        assert e.ids[pos + 1] == g.first_hop(int(t))


def test_text_round_trip():
    g = path_star(5, 4, 3)
    for e in edge_examples(g, self_edges=True) + path_examples(g, g.leaves):
        text = to_text(e, g.n_nodes)
        assert from_text(text, g.n_nodes) == e
        assert text.split()[0] in SPECIALS
    c = cycle(6)
    for e in edge_examples(c):
        assert from_text(to_text(e, 6), 6) == e


def test_bad_text_and_direction():
    with pytest.raises(ValueError, match="node ids"):
        from_text("[EDGE] 3 = 99 <eos>", 10)
    with pytest.raises(ValueError, match="text"):
        from_text("[EDGE] x = 1", 10)
    with pytest.raises(ValueError, match="start"):
        from_text("3 = 4", 10)
    with pytest.raises(ValueError, match="direction"):
        edge_examples(path_star(3, 3), "sideways")
