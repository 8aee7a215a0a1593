"""The small GPT, its controls, training recipes and behaviour probes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from geomem import RECIPES, train
from geomem.graphs import path_star
from geomem.models import GPT
from geomem.probes import edge_recovery, exact_path, first_step, teacher_forced


@pytest.fixture(autouse=True)
def one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def test_shapes_and_controls():
    m = GPT(10, dim=16, n_heads=2, max_len=12)
    ids = torch.randint(0, m.vocab_size, (3, 7))
    assert m(ids).shape == (3, 7, m.vocab_size)
    assert m.embeddings().shape == (10, 16)
    assert m.generate(ids[:, :4], 5).shape == (3, 5)
    assert GPT(10, dim=16, n_heads=2, tied=False)(ids).shape == (3, 7, m.vocab_size)
    assert GPT(10, dim=16, n_heads=2, attention=False)(ids).shape == (3, 7, m.vocab_size)
    # causal: changing a later token leaves earlier logits unchanged
    for attn in (True, False):
        mm = GPT(10, dim=16, n_heads=2, attention=attn)
        ids2 = ids.clone()
        ids2[:, -1] = (ids2[:, -1] + 1) % mm.vocab_size
        torch.testing.assert_close(mm(ids)[:, :-1], mm(ids2)[:, :-1])
    with pytest.raises(ValueError, match="n_heads"):
        GPT(10, dim=10, n_heads=3)
    with pytest.raises(ValueError, match="max_len"):
        m(torch.zeros((1, 13), dtype=torch.long))


def test_frozen_embeddings_stay_fixed():
    g = path_star(3, 3, 0)
    m = GPT(g.n_nodes, dim=16, n_heads=2, max_len=10, freeze_embeddings=True)
    before = m.embeddings()
    train(m, g, steps=5, batch_size=8)
    np.testing.assert_array_equal(before, m.embeddings())
    np.testing.assert_allclose(np.linalg.norm(before, axis=1), 1.0, rtol=1e-6)


def test_training_memorises_small_graph():
    g = path_star(3, 3, 0)
    m = GPT(g.n_nodes, dim=32, n_heads=2, max_len=10, seed=0)
    res = train(m, g, steps=300, batch_size=32, lr=3e-3, log_every=150)
    assert res.losses[-1] < 0.25 * res.losses[0]
    assert edge_recovery(m, g) == 1.0
    assert exact_path(m, g, g.train_leaves) == 1.0
    assert set(res.final) >= {"first_step", "exact_path", "navigation", "spectral_share"}
    tf = teacher_forced(m, g, g.train_leaves)
    assert tf.shape == (3,) and tf.min() == 1.0
    assert 0.0 <= first_step(m, g) <= 1.0


@pytest.mark.parametrize("recipe", RECIPES)
def test_recipes_run_and_are_deterministic(recipe):
    g = path_star(3, 3, 0)
    hist = []
    for _ in range(2):
        m = GPT(g.n_nodes, dim=16, n_heads=2, max_len=10, seed=1)
        hist.append(train(m, g, recipe, steps=40, batch_size=8, seed=2, log_every=20).history)
    assert hist[0] == hist[1]


def test_bad_training_arguments():
    g = path_star(3, 3, 0)
    m = GPT(g.n_nodes, dim=16, n_heads=2, max_len=10)
    with pytest.raises(ValueError, match="recipe"):
        train(m, g, "greedy", steps=2)
    with pytest.raises(ValueError, match="path_fraction"):
        train(m, g, steps=2, path_fraction=1.5)
    with pytest.raises(ValueError, match="lr"):
        train(m, g, steps=2, lr=0.0)
    with pytest.raises(ValueError, match="n_nodes"):
        train(m, path_star(4, 3), steps=2)
    with pytest.raises(ValueError, match="max_len"):
        train(GPT(path_star(3, 6).n_nodes, dim=16, n_heads=2, max_len=8), path_star(3, 6), steps=2)
    with pytest.raises(TypeError, match="model"):
        train(object(), g, steps=2)
    with pytest.raises(ValueError, match="schedule"):
        train(m, g, steps=2, schedule="linear")
    with pytest.raises(ValueError, match="warmup"):
        train(m, g, steps=4, warmup=4)


def test_cosine_schedule_and_parameter_groups():
    from geomem._train import _param_groups, _Schedule

    s = _Schedule(1e-2, "cosine", 10, 110)
    assert s(0) == pytest.approx(1e-3) and s(9) == pytest.approx(1e-2)
    assert s(10) == pytest.approx(1e-2) and s(110) == pytest.approx(1e-3)
    assert s(60) == pytest.approx(1e-2 * (0.1 + 0.45))  # half way: the cosine's midpoint
    lrs = [s(i) for i in range(10, 111)]
    assert all(a >= b for a, b in itertools.pairwise(lrs))
    assert _Schedule(1e-2, "constant", 0, 50)(49) == 1e-2
    m = GPT(8, dim=16, n_heads=2)
    decay, rest = _param_groups(m, 0.1)
    assert decay["weight_decay"] == 0.1 and rest["weight_decay"] == 0.0
    assert all(p.dim() >= 2 for p in decay["params"]) and all(p.dim() == 1 for p in rest["params"])
    n = sum(1 for p in m.parameters() if p.requires_grad)
    assert len(decay["params"]) + len(rest["params"]) == n


def test_unpadded_batches_give_the_padded_loss():
    """Padding each kind to its own length changes nothing: causal logits ignore what follows."""
    from geomem._tasks import Vocab, edge_examples, path_examples
    from geomem._train import pad_examples

    g = path_star(3, 3, 0)
    m = GPT(g.n_nodes, dim=16, n_heads=2, max_len=10, seed=0)
    ex = edge_examples(g) + path_examples(g)
    pad = Vocab(g.n_nodes).pad
    ids, tgt = pad_examples(ex, 10, pad)
    full = torch.nn.functional.cross_entropy(
        m(ids[:, :-1])[tgt[:, :-1]], ids[:, 1:][tgt[:, :-1]], reduction="sum"
    )
    parts = 0.0
    for kind in ("edge", "path"):
        sub = [e for e in ex if e.kind == kind]
        i, t = pad_examples(sub, max(len(e.ids) for e in sub), pad)
        parts += torch.nn.functional.cross_entropy(
            m(i[:, :-1])[t[:, :-1]], i[:, 1:][t[:, :-1]], reduction="sum"
        )
    torch.testing.assert_close(parts, full, rtol=1e-5, atol=1e-5)


def test_rotary_positions_option():
    ids = torch.randint(0, 17, (2, 9))
    m = GPT(10, dim=16, n_heads=2, positions="rotary")
    assert m.pos is None and m(ids).shape == (2, 9, 17)
    ids2 = ids.clone()
    ids2[:, -1] = (ids2[:, -1] + 1) % m.vocab_size
    torch.testing.assert_close(m(ids)[:, :-1], m(ids2)[:, :-1])  # still causal
    # learned positions (the default) are unchanged by the option
    a, b = (
        GPT(10, dim=16, n_heads=2, seed=1),
        GPT(10, dim=16, n_heads=2, positions="learned", seed=1),
    )
    torch.testing.assert_close(a(ids), b(ids))
    with pytest.raises(ValueError, match="positions"):
        GPT(10, dim=16, n_heads=2, positions="sinusoidal")


@pytest.mark.parametrize("control", [{"tied": False}, {"attention": False}])
def test_untied_and_attention_off_controls_train(control):
    """The untied and attention-off controls train and are probed like the GPT."""
    g = path_star(3, 3, 0)
    m = GPT(g.n_nodes, dim=16, n_heads=2, max_len=10, seed=0, **control)
    if not control.get("tied", True):
        assert m.head is not None and m.head.weight is not m.tok.weight
    before = m.embeddings()
    res = train(m, g, steps=30, batch_size=8, lr=3e-3, log_every=30)
    assert not np.array_equal(before, m.embeddings())  # the table is trained
    assert res.losses[-1] < res.losses[0]
    assert set(res.final) >= {"edge_recovery", "navigation", "spectral_share", "first_step"}


def test_train_defaults_are_the_reproduce_recipe():
    """train()'s defaults are the GPT recipe that meets item 4 (the reproduce's Config)."""
    import inspect

    from geomem._reproduce import FULL
    from geomem._train import GPT_STEPS, WARMUP_MAX

    p = inspect.signature(train).parameters
    assert p["lr"].default == FULL.gpt_lr == 3e-3
    assert p["weight_decay"].default == FULL.gpt_weight_decay == 0.1
    assert p["schedule"].default == FULL.gpt_schedule == "cosine"
    assert p["path_fraction"].default == FULL.path_fraction == 0.2
    assert p["batch_size"].default == FULL.batch_size == 64
    assert GPT_STEPS == FULL.gpt_steps and WARMUP_MAX == FULL.gpt_warmup
    # the default warm-up, min(200, steps // 10): 4 steps when training for 40
    from geomem._train import _Schedule

    s = _Schedule(3e-3, "cosine", min(WARMUP_MAX, 40 // 10), 40)
    assert s(3) == pytest.approx(3e-3) and s(2) < 3e-3
    g = path_star(3, 3, 0)
    with pytest.raises(ValueError, match="warmup"):  # explicit values still checked
        train(GPT(g.n_nodes, dim=16, n_heads=2, max_len=10), g, steps=4, warmup=4)


@pytest.mark.slow
def test_default_recipe_finds_unseen_first_hops():
    """The defaults alone (4000 steps) find the first hop of every unseen leaf of a d = 20 star."""
    g = path_star(20, 5, seed=0)
    m = GPT(g.n_nodes, max_len=14, seed=0)
    res = train(m, g, log_every=4000)
    assert len(res.losses) == 4000
    assert first_step(m, g) >= 0.95
    assert edge_recovery(m, g) >= 0.99
