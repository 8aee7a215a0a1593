"""Silent wrong answers found on a first try (issue 13, item 3) and the README's examples (item 4)."""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from bittokens import BitTokens, TinyGPT, decode, encode

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.parametrize(
    ("width", "kind"), [(32, "float32"), (32, "bfloat16"), (64, "float64"), (64, "float32")]
)
def test_decode_without_precision_refuses_ambiguous_widths(width, kind):
    reciprocal = width == 2 * {"float64": 64, "float32": 32, "bfloat16": 16}[kind]
    bits = encode(np.array([1.5]), kind, reciprocal=reciprocal)
    assert bits.shape[-1] == width
    with pytest.raises(ValueError, match=r"ambiguous.*pass precision"):
        decode(bits, precision=None)
    # with the precision given, the value comes back exactly
    assert float(decode(bits, kind)[0]) == 1.5


def test_decode_of_bfloat16_bits_with_the_default_precision_raises():
    # the example: this used to return 1.5019277
    with pytest.raises(ValueError, match="last dimension 64 or 128 for float64, got 32"):
        decode(encode([1.5], "bfloat16"))


def test_decode_without_precision_where_unambiguous():
    assert float(decode(encode(np.array([1.5]), "bfloat16", reciprocal=False), None)[0]) == 1.5
    assert float(decode(encode(np.array([-2.25])), None)[0]) == -2.25


@pytest.mark.parametrize("as_torch", [False, True])
def test_nan_logits_decode_to_nan_not_a_number(as_torch):
    logits = np.where(encode(np.array([3.0, 5.0]), reciprocal=False) > 0, 4.0, -4.0)
    logits[0, 20] = np.nan
    x = torch.tensor(logits) if as_torch else logits
    out = np.asarray(decode(x))
    assert np.isnan(out[0]) and out[1] == 5.0


def test_nan_in_the_ignored_reciprocal_half_does_not_matter():
    logits = np.where(encode(np.array([3.0])) > 0, 4.0, -4.0)
    logits[0, 100] = np.nan
    assert float(decode(logits)[0]) == 3.0


@pytest.fixture
def tokenizer(bpe_tokenizer):
    pytest.importorskip("tokenizers")
    from bittokens.hf import NumberTokenizer

    return NumberTokenizer(bpe_tokenizer)


def test_thousands_separators_are_one_number(hf_offline, tokenizer):
    _pieces, values = tokenizer.split("x 1,000 and 12,345,678.5 but 1,2,3 and 1,0000")
    assert values == [1000.0, 12345678.5, 1.0, 2.0, 3.0, 1.0, 0.0]
    batch = tokenizer(["x 1,000"])
    assert tokenizer.decode(batch["input_ids"][0], batch["number_values"][0]) == "x 1000"


@pytest.mark.parametrize(
    ("text", "word"),
    [("x 1e309", "overflows"), ("x -1e309", "overflows"), ("x 1e-400", "underflows")],
)
def test_out_of_range_numbers_warn(hf_offline, tokenizer, text, word):
    with pytest.warns(UserWarning, match=word):
        tokenizer.split(text)


def test_zero_does_not_warn(hf_offline, tokenizer):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tokenizer.split("0 and 0.0 and 0e5")[1] == [0.0, 0.0, 0.0]


def test_generate_refuses_prompts_longer_than_max_len():
    model = TinyGPT(BitTokens(128), max_len=8)
    with pytest.raises(ValueError, match="max_len = 8"):
        model.generate([["max", *[1.0] * 10, "="]])


def test_unknown_word_is_a_clear_error():
    model = TinyGPT(BitTokens(128), max_len=32)
    with pytest.raises(ValueError, match="'maximum' is not in the vocabulary"):
        model.generate([["maximum", 1.0, 2.0, "="]])


def _blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_quickstart_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    exec(compile(_blocks()[0], str(README), "exec"), {})


def test_readme_hf_example_runs_verbatim(hf_offline, tmp_path, monkeypatch, capsys):
    pytest.importorskip("transformers")
    (code,) = [b for b in _blocks() if "NumberTokenizer" in b]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {})
    assert "['max of 1.5, -2 = 1.5', 'x 1000']" in capsys.readouterr().out
    assert (tmp_path / "ckpt" / "bittokens.json").exists()
    assert os.environ["HF_HUB_OFFLINE"] == "1"
