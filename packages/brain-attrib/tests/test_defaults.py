"""Defaults a new user can trust: the category baseline, ``n_steps``, ``context=32``, run order,
``pearson_cols`` refusing bad input, the shipped tiny LM, a message before any training."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from brain_attrib import EncodingModel, Pipeline, RunData, masking_test
from brain_attrib.ridge import pearson_cols


def test_defaults_are_the_category_baseline_and_context_32():
    assert inspect.signature(Pipeline.attribute).parameters["baseline"].default == "category"
    assert inspect.signature(masking_test).parameters["baseline"].default == "category"
    assert inspect.signature(EncodingModel).parameters["context"].default == 32
    assert "n_steps" in inspect.signature(Pipeline.attribute).parameters


def test_default_attribution_is_the_category_baseline(fitted):
    em, _ = fitted
    pl = Pipeline(em)
    default = pl.attribute(90, "ba", "gxi")
    cat = pl.attribute(90, "ba", "gxi", baseline="category")
    zero = pl.attribute(90, "ba", "gxi", baseline="zero")
    np.testing.assert_array_equal(default.scores, cat.scores)
    assert default.extras["baseline"] == "category"
    assert not np.allclose(default.scores, zero.scores)
    with pytest.raises(ValueError, match="n_steps must be a positive integer"):
        pl.attribute(90, "ba", "ig", n_steps=0)
    with pytest.raises(TypeError):
        pl.attribute(90, "ba", "ig", steps=20)  # renamed to captum's n_steps


def test_category_baseline_without_categories_names_the_way_out(fitted):
    em, rd = fitted
    bare = RunData(rd.words, rd.onsets, rd.word_run, rd.data, rd.tr, rd.tr_run)
    em2 = EncodingModel.__new__(EncodingModel)
    em2.__dict__.update(em.__dict__)
    em2.rd_ = bare
    pl = Pipeline(em2)
    with pytest.raises(ValueError, match=r"baseline='category' needs word categories.*'zero'"):
        pl.attribute(90, "ba", "gxi")
    assert np.isfinite(pl.attribute(90, "ba", "gxi", baseline="zero").scores).all()


def _runs(order):
    """Two runs of 6 TRs (TR 2 s), one word per TR, TRs stored in ``order`` of runs."""
    tr_run = np.repeat(order, 6)
    data = np.random.default_rng(0).standard_normal((12, 2))
    words = ["a"] * 12
    onsets = np.tile(np.arange(6) * 2.0 + 0.5, 2)
    return RunData(words, onsets, np.repeat([0, 1], 6), data, 2.0, tr_run)


def test_run_order_descending_is_indexed_right_and_interleaved_is_refused():
    rd = _runs([1, 0])
    assert rd.tr_local.tolist() == list(range(6)) * 2
    rd = RunData(
        ["a", "b"], np.array([0.5, 0.5]), np.array([1, 0]),
        np.random.default_rng(0).standard_normal((5, 2)), 2.0, np.array([1, 1, 1, 0, 0]),
    )  # fmt: skip
    assert rd.tr_local.tolist() == [0, 1, 2, 0, 1]
    with pytest.raises(ValueError, match=r"tr_run must list each run's TRs as one contiguous"):
        RunData(
            ["a"], np.array([0.5]), np.array([0]), np.zeros((4, 1)) + np.arange(4)[:, None],
            2.0, np.array([0, 1, 0, 1]),
        )  # fmt: skip
    with pytest.raises(ValueError, match=r"word_run names runs \[7\]"):
        RunData(["a"], np.array([0.5]), np.array([7]), np.arange(4.0)[:, None], 2.0, np.zeros(4))


def test_pearson_cols_refuses_nan_and_mismatched_shapes():
    a = np.random.default_rng(0).standard_normal((10, 3))
    with pytest.raises(ValueError, match=r"a and b must have the same shape.*\(10, 3\).*\(10, 1\)"):
        pearson_cols(a, a[:, :1])
    bad = a.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"\bb\b.*(finite|NaN)"):
        pearson_cols(a, bad)
    np.testing.assert_allclose(pearson_cols(a, 2 * a + 1), 1.0)


def test_shipped_tiny_lm_loads_without_training_and_keeps_its_ce(capsys):
    from brain_attrib._lm import SHIPPED, corpus_ids, heldout_ce
    from brain_attrib.synthetic import tiny_lm

    assert SHIPPED.is_file() and SHIPPED.stat().st_size < 1_000_000
    lm, tok, info = tiny_lm()
    assert info["source"] == "shipped" and lm.config.n_layer == 4
    assert "training" not in capsys.readouterr().err
    ce = heldout_ce(lm, corpus_ids(20_000, 2, tok), 128)  # the acceptance item 1 figure
    assert abs(ce - info["heldout_ce"]) < 1e-4
    assert ce <= 0.7 * info["unigram_ce"]


def test_training_announces_itself(tmp_path, capsys):
    from brain_attrib.synthetic import tiny_lm

    hp = dict(n_layer=1, n_embd=16, n_head=1, n_positions=32, train_tokens=3000, steps=2, batch=2,
              seq=16)  # fmt: skip
    _, _, info = tiny_lm(folder=tmp_path / "lm", progress=None, **hp)
    err = capsys.readouterr().err
    assert "training the tiny LM" in err and str(tmp_path / "lm") in err
    assert info["source"] == "trained"
    tiny_lm(folder=tmp_path / "lm", progress=None, **hp)  # cached: silent
    assert "training" not in capsys.readouterr().err
