"""One seed rule and bad input refused (not a silent answer or an ignored argument)."""

from __future__ import annotations

import numpy as np
import pytest

from geomem import incontext, train
from geomem.graphs import cycle, grid, path_star, star_tree
from geomem.models import GPT, AssociativeControl, Node2Vec
from icml26_shared.testing import assert_follows_seed_rule


def _seed(s):
    return np.random.default_rng(0) if s == "generator" else s


ENTRY_POINTS = {
    "path_star": lambda s: path_star(3, 2, seed=s),
    "star_tree": lambda s: star_tree(2, 2, seed=s),
    "grid": lambda s: grid(2, 2, seed=s),
    "cycle": lambda s: cycle(4, seed=s),
    "Node2Vec": lambda s: Node2Vec(7, 4, seed=s),
    "AssociativeControl": lambda s: AssociativeControl(7, 4, seed=s),
    "GPT": lambda s: GPT(7, dim=8, n_layers=1, n_heads=1, max_len=8, seed=s),
    "make_dataset": lambda s: incontext.make_dataset(2, seed=s),
    "train": lambda s: train(
        GPT(4, dim=8, n_layers=1, n_heads=1, max_len=16),
        path_star(3, 2),
        steps=1,
        batch_size=2,
        warmup=0,
        seed=s,
        progress=False,
    ),
}


@pytest.mark.parametrize("fn", ENTRY_POINTS, ids=str)
def test_seed_rule(fn):
    assert_follows_seed_rule(ENTRY_POINTS[fn])


def test_numpy_integer_seed_is_the_int_seed():
    assert np.array_equal(path_star(4, 3, seed=np.int64(5)).adj, path_star(4, 3, seed=5).adj)
    a, b = Node2Vec(7, 4, seed=np.int64(2)), Node2Vec(7, 4, seed=2)
    assert np.array_equal(a.phi, b.phi) and a.seed == b.seed == 2


@pytest.mark.parametrize(
    "kw",
    [
        {"lr": float("nan")},
        {"lr": 0.1},
        {"batch_size": 8},
        {"seed": 4},
        {"weight_decay": 0.0},
        {"schedule": "constant"},
        {"warmup": 3},
        {"path_fraction": 0.5},
        {"direction": "forward"},
    ],
    ids=str,
)
@pytest.mark.parametrize("cls", [Node2Vec, AssociativeControl])
def test_matrix_models_refuse_gpt_only_arguments(cls, kw):
    g = path_star(3, 2)
    name = next(iter(kw))
    with pytest.raises(ValueError, match=f"{name} applies to the GPT only"):
        train(cls(g.n_nodes, 4), g, steps=2, **kw)


def test_matrix_model_trains_with_the_defaults_and_its_own_lr():
    g = path_star(3, 2)
    res = train(Node2Vec(g.n_nodes, 4, lr=0.05), g, steps=2, progress=False)
    assert len(res.losses) == 2


def test_train_refuses_a_non_graph():
    with pytest.raises(TypeError, match="graph must be"):
        train(Node2Vec(7, 4), None, steps=1)


def test_train_prints_a_start_and_an_end_line_when_piped(capsys):
    g = path_star(3, 2)
    train(Node2Vec(g.n_nodes, 4), g, steps=2)
    err = capsys.readouterr().err
    assert "node2vec: 3 steps" in err and "done in" in err


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: grid(1, 1), "at least 2 nodes"),
        (lambda: incontext.sequence_length(0, 3), "d must be"),
        (lambda: incontext.sequence_length(2, 1), "l must be"),
    ],
)
def test_degenerate_sizes_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()
