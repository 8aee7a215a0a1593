"""A new user's needs: a light import, save/load of a fitted encoding model, progress bars."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

from brain_attrib import EncodingModel, Pipeline
from icml26_shared.testing import assert_import_is_light, terminal_stderr


def test_import_loads_no_scipy_stats_sklearn_or_matplotlib():
    assert_import_is_light("brain_attrib", ["scipy.stats", "sklearn", "matplotlib"])


def test_hrf_is_the_double_gamma():
    from scipy.stats import gamma

    from brain_attrib._fmri import hrf

    t = np.linspace(-2.0, 40.0, 421)
    ref = np.where(t > 0, gamma.pdf(t, 6.0) - gamma.pdf(t, 16.0) / 6.0, 0.0)
    np.testing.assert_allclose(hrf(t), ref, rtol=1e-12, atol=1e-15)


def test_save_load_round_trip(fitted, tmp_path):
    em, _ = fitted
    path = tmp_path / "em.pkl"
    em.save(path)
    loaded = EncodingModel.load(path, em.lm, em.tokenizer)
    np.testing.assert_array_equal(loaded.score(), em.score())
    np.testing.assert_array_equal(loaded.X_, em.X_)
    np.testing.assert_array_equal(loaded.folds_[0].w, em.folds_[0].w)
    assert (loaded.layer, loaded.context, loaded.delays) == (em.layer, em.context, em.delays)
    np.testing.assert_array_equal(Pipeline(loaded).predict(50), Pipeline(em).predict(50))


def test_load_refuses_another_lm(fitted, tmp_path):
    em, _ = fitted
    path = tmp_path / "em.pkl"
    em.save(path)
    other = copy.deepcopy(em.lm)
    with torch.no_grad():
        other.get_input_embeddings().weight.add_(0.01)
    with pytest.raises(ValueError, match=r"lm must be the model '.*em\.pkl' was fitted with"):
        EncodingModel.load(path, other, em.tokenizer)


def test_save_before_fit_and_bad_files_are_named(small_lm, tmp_path):
    lm, tok, _, _ = small_lm
    with pytest.raises(RuntimeError, match="call fit first"):
        EncodingModel(lm, tok, layer=1).save(tmp_path / "x.pkl")
    bad = tmp_path / "bad.pkl"
    bad.write_bytes(b"\x80\x05garbage")
    with pytest.raises(ValueError, match=r"path '.*bad\.pkl' is not a readable EncodingModel"):
        EncodingModel.load(bad, lm, tok)
    bad.write_bytes(pickle.dumps({"weights": 1}))
    with pytest.raises(ValueError, match=r"must be a file written by EncodingModel\.save"):
        EncodingModel.load(bad, lm, tok)
    with pytest.raises(FileNotFoundError, match=r"nope\.pkl"):
        EncodingModel.load(tmp_path / "nope.pkl", lm, tok)


# progress=None: a bar on a terminal, and (issue 66) a start and an end line when piped
@pytest.mark.parametrize(("progress", "tty", "shown"), [
    (None, True, True), (None, False, True), (False, True, False), (True, False, True),
])  # fmt: skip
def test_fit_progress_bar_defaults_to_the_terminal(small_lm, monkeypatch, progress, tty, shown):
    from brain_attrib.synthetic import fmri

    lm, tok, _, _ = small_lm
    rd = fmri(n_trs=60, n_runs=1, n_voxels=3, n_noise=1, seed=1)
    err = terminal_stderr(monkeypatch, tty=tty)
    EncodingModel(lm, tok, layer=1, context=8).fit(rd, folds=2, progress=progress)
    assert ("features L1" in err.getvalue()) is shown


TINY_LM = dict(
    n_layer=1, n_embd=16, n_head=1, n_positions=32, train_tokens=3000, steps=2, batch=2, seq=16
)  # fmt: skip


@pytest.mark.parametrize("damage", ["info.json", "weights"])
def test_corrupt_tiny_lm_cache_is_named_and_retrained(tmp_path, damage):
    from brain_attrib.synthetic import tiny_lm

    folder = tmp_path / "lm"
    _, _, info = tiny_lm(folder=folder, progress=False, **TINY_LM)
    if damage == "info.json":
        target = folder / "info.json"
    else:
        (target,) = [p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin")]
    target.write_bytes(b"\x00garbage")
    with pytest.warns(UserWarning, match=r"cached tiny LM at .*lm.*retraining"):
        _, _, info2 = tiny_lm(folder=folder, progress=False, **TINY_LM)
    assert info2["heldout_ce"] == info["heldout_ce"]  # same seed, same model
    _, _, info3 = tiny_lm(folder=folder, progress=False, **TINY_LM)  # rewritten, readable
    assert info3.pop("source") == "cached" and info2.pop("source") == "trained"
    assert info3 == info2


@pytest.mark.slow
def test_readme_quickstart_runs_verbatim():
    """The README's first Python block, as written (the shipped LM, the full synthetic fMRI)."""
    from pathlib import Path

    text = (Path(__file__).parents[1] / "README.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})
