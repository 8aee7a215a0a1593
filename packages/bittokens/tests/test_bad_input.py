"""One seed rule, saved files named when broken, and bad input refused (not a silent answer)."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
import torch

from bittokens import (
    BitHead,
    BitTokens,
    TinyGPT,
    bit_weights,
    encode,
    exact_match,
    field_accuracy,
    fit,
    log_smape,
    normalised_accuracy,
    parse_number,
)
from bittokens.data import make_task, sample_numbers, score

ACCEPTED = [0, 3, np.int64(3), np.uint8(7), None, "generator"]
REFUSED = [("3", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)]


def _seed(s):
    return np.random.default_rng(0) if s == "generator" else s


@pytest.mark.parametrize("seed", ACCEPTED, ids=repr)
def test_make_task_accepts_every_seed_kind(seed):
    task = make_task("add", 4, seed=_seed(seed))
    assert len(task) == 4


@pytest.mark.parametrize(("seed", "err"), REFUSED, ids=repr)
def test_make_task_refuses_bad_seeds(seed, err):
    with pytest.raises(err, match="seed must be"):
        make_task("add", 4, seed=seed)


def test_same_int_seed_same_task_and_numpy_integer_alike():
    a, b = make_task("mult", 6, seed=5), make_task("mult", 6, seed=np.int64(5))
    assert a.prompts == b.prompts and a.answers == b.answers


@pytest.fixture
def small():
    torch.manual_seed(0)
    return TinyGPT(BitTokens(128), n_layers=1), make_task("minmax", 16, seed=0)


@pytest.mark.parametrize("seed", ACCEPTED, ids=repr)
def test_fit_accepts_every_seed_kind(small, seed):
    model, task = small
    assert len(fit(model, task, steps=1, batch_size=4, seed=_seed(seed), progress=False).losses)


@pytest.mark.parametrize(("seed", "err"), REFUSED, ids=repr)
def test_fit_refuses_bad_seeds(small, seed, err):
    model, task = small
    with pytest.raises(err, match="seed must be"):
        fit(model, task, steps=1, batch_size=4, seed=seed)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"weight_decay": -1.0}, "weight_decay"),
        ({"weight_decay": float("nan")}, "weight_decay"),
        ({"clip": -1.0}, "clip"),
        ({"clip": float("nan")}, "clip"),
        ({"eval_every": 0}, "eval_every"),
        ({"start_method": "thread"}, "start_method"),
        ({"eval_fn": 3}, "eval_fn"),
        ({"lr": float("nan")}, "lr"),
    ],
)
def test_fit_refuses_bad_options(small, kw, match):
    model, task = small
    with pytest.raises((ValueError, TypeError), match=match):
        fit(model, task, steps=1, batch_size=4, **kw)


def test_fit_refuses_wrong_objects(small):
    model, task = small
    with pytest.raises(TypeError, match="task must be"):
        fit(model, None, steps=1)
    with pytest.raises(TypeError, match="model must be"):
        fit(None, task, steps=1)


def test_fit_progress_one_line_per_stage_when_piped(small, capsys):
    model, task = small
    fit(model, task, steps=2, batch_size=4, progress=None)
    err = capsys.readouterr().err
    assert "fit: 2 steps" in err and "fit: done" in err
    fit(model, task, steps=2, batch_size=4, progress=False)
    assert capsys.readouterr().err == ""


def test_sample_numbers_takes_a_seed_or_generator():
    a = sample_numbers(3, 5)
    b = sample_numbers(np.random.default_rng(3), 5)
    assert np.array_equal(a, b)
    with pytest.raises(TypeError, match="rng must be"):
        sample_numbers("3", 5)


@pytest.mark.parametrize(
    ("exp_range", "err"),
    [((0, 400), ValueError), ((-400, 0), ValueError), ((0.5, 2), TypeError), (3, TypeError)],
)
def test_exp_range_outside_float64_is_refused(exp_range, err):
    with pytest.raises(err, match="exp_range"):
        make_task("add", 4, exp_range=exp_range)


def test_unreachable_result_range_raises_instead_of_looping():
    with pytest.raises(ValueError, match="no example whose result"):
        make_task("mult", 4, exp_range=(200, 200))


@pytest.mark.parametrize(
    ("fn", "args", "match"),
    [
        (log_smape, ([1.0, np.nan], [1.0, 1.0]), "y must be finite"),
        (log_smape, ([], []), "at least one"),
        (log_smape, (["1"], ["1"]), "numeric"),
        (log_smape, ([1.0], ["1"]), "y_hat must be numeric"),
        (exact_match, ([], []), "at least one"),
        (normalised_accuracy, ([1], [1], 1), "n_classes"),
        (normalised_accuracy, ([7], [7], 5), "class labels"),
        (field_accuracy, ([np.nan], [1.0]), "y must be finite"),
    ],
)
def test_metrics_refuse_bad_targets(fn, args, match):
    with pytest.raises((ValueError, TypeError), match=match):
        fn(*args)


def test_nan_prediction_still_scores_zero():
    assert log_smape([2.0], [np.nan]) == 0.0


def test_score_refuses_a_non_list():
    task = make_task("minmax", 4, seed=0)
    with pytest.raises(TypeError, match="predictions"):
        score(task, None)


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: bit_weights(slope=float("nan")), "slope"),
        (lambda: BitHead(0), "d must be"),
        (lambda: BitHead(128, hidden=-1), "hidden"),
        (lambda: BitTokens(128, loss_weight=-1.0), "loss_weight"),
        (lambda: BitTokens(128, loss_weight=float("nan")), "loss_weight"),
        (lambda: encode(np.array([1.0]), reciprocal="no"), "reciprocal"),
        (lambda: parse_number(3), "text must be a str"),
    ],
)
def test_layers_refuse_bad_arguments(build, match):
    with pytest.raises((ValueError, TypeError), match=match):
        build()


@pytest.fixture
def saved(tmp_path, hf_offline, bpe_tokenizer):
    pytest.importorskip("transformers")
    from transformers import GPT2Config, GPT2LMHeadModel

    from bittokens.hf import BitTokensForCausalLM, NumberTokenizer

    nt = NumberTokenizer(bpe_tokenizer)
    config = GPT2Config(vocab_size=nt.vocab_size, n_embd=128, n_head=4, n_layer=1, n_positions=32)
    BitTokensForCausalLM(GPT2LMHeadModel(config), nt.num_id).save_pretrained(tmp_path / "ck")
    return tmp_path / "ck"


@pytest.mark.parametrize("name", ["bittokens.json", "bittokens.pt", "lm/model.safetensors"])
@pytest.mark.parametrize("damage", ["truncated", "foreign"])
def test_from_pretrained_names_a_broken_file(saved, name, damage):
    from bittokens.hf import BitTokensForCausalLM
    from icml26_shared.state import StateFileError

    path = saved / name
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2] if damage == "truncated" else os.urandom(256))
    with pytest.raises(StateFileError, match="cannot read it as"):
        BitTokensForCausalLM.from_pretrained(saved)


def test_from_pretrained_of_another_packages_json(saved):
    from bittokens.hf import BitTokensForCausalLM
    from icml26_shared.state import StateFileError

    (saved / "bittokens.json").write_text('{"gamma": 0.5, "q": [1, 2]}')
    with pytest.raises(StateFileError, match=r"bittokens\.json.*num_token_id"):
        BitTokensForCausalLM.from_pretrained(saved)
    shutil.rmtree(saved)
    with pytest.raises(FileNotFoundError, match="no such folder"):
        BitTokensForCausalLM.from_pretrained(saved)
