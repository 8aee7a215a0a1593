"""The in-context dataset encodes a fresh path-star per example."""

from __future__ import annotations

import itertools

import pytest
import torch

from geomem.incontext import evaluate_incontext, make_dataset, sequence_length, train_incontext
from geomem.models import GPT
from geomem.tasks import SPECIALS


def test_examples_are_path_stars():
    d, l, n_labels = 4, 4, 30
    b = make_dataset(20, d, l, n_labels, seed=0)
    sp = {s: n_labels + i for i, s in enumerate(SPECIALS)}
    assert b.ids.shape == (20, sequence_length(d, l))
    for row in b.ids.tolist():
        m = d * (l - 1)
        pairs = [(row[1 + 3 * i], row[2 + 3 * i]) for i in range(m)]
        child = {}
        for u, v in pairs:
            child.setdefault(u, []).append(v)
        q = 1 + 3 * m - 1
        assert row[q] == sp["[PATH]"] and row[q + 3] == sp["="]
        leaf, path = row[q + 1], row[q + 4 : -1 : 2]
        assert len(child[path[0]]) == d and path[-1] == leaf and len(path) == l
        assert all(v in child[u] for u, v in itertools.pairwise(path))
    assert not torch.equal(b.ids[0], b.ids[1])  # fresh labels per example


def test_train_and_evaluate_run():
    torch.manual_seed(0)
    m = GPT(30, dim=16, n_heads=2, max_len=sequence_length(3, 3), seed=0)
    res = train_incontext(m, 4, d=3, l=3, batch_size=4, log_every=2)
    assert set(res.final) >= {"first_step", "teacher_forced_later"}
    out = evaluate_incontext(m, 3, 3, n=10)
    assert all(0 <= v <= 1 for v in out.values())


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_labels"):
        make_dataset(2, d=5, l=5, n_labels=10)
    with pytest.raises(ValueError, match="d"):
        make_dataset(2, d=1)


def test_comma_free_paths():
    d, l, n_labels = 3, 4, 30
    b = make_dataset(10, d, l, n_labels, seed=0, commas=False)
    sp = {s: n_labels + i for i, s in enumerate(SPECIALS)}
    assert b.ids.shape == (10, sequence_length(d, l, commas=False)) and not b.commas
    after = b.ids[:, b.eq + 1 : -1]
    assert after.shape[1] == l and not (after == sp[","]).any()
    # the same graphs and labels as the comma format, commas dropped from the path only
    w = make_dataset(10, d, l, n_labels, seed=0)
    torch.testing.assert_close(w.ids[:, : w.eq + 1], b.ids[:, : b.eq + 1])
    torch.testing.assert_close(w.ids[:, w.eq + 1 : -1 : 2], after)
    m = GPT(n_labels, dim=16, n_heads=2, max_len=b.ids.shape[1], positions="rotary", seed=0)
    res = train_incontext(m, 3, d=d, l=l, batch_size=4, commas=False, log_every=3)
    assert set(res.final) >= {"first_step", "teacher_forced_later"}
