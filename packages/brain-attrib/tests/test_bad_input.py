"""Saved files that run no code, one seed rule, and bad input refused (not a silent answer)."""

from __future__ import annotations

import json
import os
import pickle

import numpy as np
import pytest

from brain_attrib import EncodingModel
from brain_attrib.data import load_naturalistic
from brain_attrib.ridge import fit_ridge
from brain_attrib.synthetic import fmri, grammar_corpus
from icml26_shared.state import StateFileError
from icml26_shared.testing import REFUSED_SEEDS, assert_follows_seed_rule


def _seed(s):
    return np.random.default_rng(0) if s == "generator" else s


ENTRY_POINTS = {
    "fmri": lambda s: fmri(n_trs=40, n_runs=1, n_voxels=3, n_noise=1, seed=s),
    "grammar_corpus": lambda s: grammar_corpus(20, seed=s),
}


@pytest.mark.parametrize("fn", ENTRY_POINTS, ids=str)
def test_seed_rule(fn):
    assert_follows_seed_rule(ENTRY_POINTS[fn])


@pytest.mark.parametrize(("seed", "err"), REFUSED_SEEDS, ids=repr)
def test_attribute_refuses_bad_seeds(fitted, seed, err):
    from brain_attrib import Pipeline

    em, _ = fitted
    with pytest.raises(err, match="seed must be"):
        Pipeline(em).attribute(100, "ba", "erasure", seed=seed)


def test_numpy_integer_seed_is_the_int_seed():
    a = fmri(n_trs=40, n_runs=1, n_voxels=3, n_noise=1, seed=np.int64(4))
    b = fmri(n_trs=40, n_runs=1, n_voxels=3, n_noise=1, seed=4)
    np.testing.assert_array_equal(a.data, b.data)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"n_noise": 5, "n_voxels": 5}, "n_noise must be < n_voxels"),
        ({"n_noise": 9, "n_voxels": 5}, "n_noise must be < n_voxels"),
        ({"n_noise": -1}, "n_noise"),
        ({"signal_r": 1.5}, "signal_r"),
        ({"word_rate": 0.0}, "word_rate"),
    ],
)
def test_fmri_refuses_bad_sizes(kw, match):
    with pytest.raises(ValueError, match=match):
        fmri(n_trs=40, n_runs=1, **kw)


@pytest.mark.parametrize("lambdas", [[-1.0, 10.0], [0.0], [np.nan], []])
def test_ridge_refuses_bad_penalties(lambdas):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((30, 4)), rng.standard_normal((30, 2))
    with pytest.raises(ValueError, match="lambdas"):
        fit_ridge(x, y, lambdas=np.array(lambdas))
    with pytest.raises(ValueError, match="lam must"):
        fit_ridge(x, y, lam=np.array([-5.0, 1.0]))


def test_fit_refuses_negative_penalties(fitted):
    em, rd = fitted
    with pytest.raises(ValueError, match="lambdas must all be > 0"):
        EncodingModel(em.lm, em.tokenizer, layer=1, context=24).fit(rd, lambdas=np.array([-1.0]))


def test_saved_model_is_not_a_pickle_and_round_trips(fitted, tmp_path):
    em, _ = fitted
    path = tmp_path / "em.npz"
    em.save(path)
    with np.load(path, allow_pickle=False) as z:  # every entry loads without pickles
        assert json.loads(str(z["__meta__"]))["format"].startswith("brain-attrib")
    loaded = EncodingModel.load(path, em.lm, em.tokenizer)
    np.testing.assert_array_equal(loaded.pred_, em.pred_)
    assert loaded.rd_.words == em.rd_.words and loaded._run_words.keys() == em._run_words.keys()


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


def test_a_pickle_is_refused_never_run(small_lm, tmp_path):
    lm, tok, _, _ = small_lm
    bad = tmp_path / "old.pkl"
    bad.write_bytes(pickle.dumps({"format": "brain-attrib-encoding-model-1", "x": _Boom()}))
    with pytest.raises(StateFileError, match="it is a pickle"):
        EncodingModel.load(bad, lm, tok)


@pytest.mark.parametrize("damage", ["truncated", "foreign", "other-json"])
def test_broken_model_files_are_named(fitted, tmp_path, damage):
    em, _ = fitted
    path = tmp_path / "em.npz"
    em.save(path)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "foreign":
        path.write_bytes(os.urandom(300))
    else:
        np.savez(path.open("wb"), __meta__=np.array(json.dumps({"gamma": 0.5})))
    with pytest.raises(StateFileError, match=r"em\.npz"):
        EncodingModel.load(path, em.lm, em.tokenizer)


def test_truncated_naturalistic_data_is_named(tmp_path):
    npz, tsv = tmp_path / "data.npz", tmp_path / "words.tsv"
    np.savez(npz, data=np.ones((10, 3)), tr=2.0)
    npz.write_bytes(npz.read_bytes()[:40])
    tsv.write_text("word\tonset\nthe\t0.5\n")
    with pytest.raises(StateFileError, match=r"data\.npz.*fMRI data"):
        load_naturalistic(npz, tsv)
    tsv.write_bytes(b"\xff\xfe\x00garbage")
    np.savez(npz, data=np.ones((10, 3)), tr=2.0)
    with pytest.raises(StateFileError, match=r"words\.tsv"):
        load_naturalistic(npz, tsv)


def test_truncated_word_tokenizer_is_named(tmp_path):
    from brain_attrib._grammar import WordTokenizer

    WordTokenizer().save(tmp_path)
    path = tmp_path / "word_tokenizer.json"
    path.write_text(path.read_text()[:20])
    with pytest.raises(StateFileError, match=r"word_tokenizer\.json"):
        WordTokenizer.load(tmp_path)
