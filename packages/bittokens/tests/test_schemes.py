"""BitTokens and the four baselines share one interface; tokenisation, decoding, training."""

from __future__ import annotations

import math

import pytest
import torch

from bittokens import NUM_TOKEN, BitTokens, TinyGPT, fit, format_number, parse_number
from bittokens.baselines import DigitTokens, FoNE, SubwordTokens, XVal
from bittokens.data import make_task, score

SCHEMES = [BitTokens, DigitTokens, SubwordTokens, XVal, FoNE]


def test_format_number_shortest_round_trip():
    for x in [100.0, -0.5, 1.5e-06, 1e16, 0.1 + 0.2, -1234.5678, 7e-300]:
        s = format_number(x)
        assert float(s) == x and parse_number(s) == x
        assert "+" not in s and not s.endswith(".0")
    assert math.isnan(parse_number("1..2"))


def test_digit_and_subword_tokens():
    assert DigitTokens(128).tokens_for(-12.5) == ["-", "1", "2", ".", "5"]
    assert SubwordTokens(128).tokens_for(12345.25) == ["123", "45", ".", "25"]
    assert SubwordTokens(128).tokens_for(1.5e-06) == ["1", ".", "5", "e", "-", "06"]
    assert len(SubwordTokens(128).vocab) == 1113
    for x in [-0.001234, 98765.4321, 3e-7]:
        for s in (DigitTokens(128), SubwordTokens(128)):
            assert s.parse(s.tokens_for(x)) == x


def test_xval_scale_is_invertible_and_bounded():
    xv = XVal(128)
    x = torch.tensor([1e-12, -3.5, 2e14, 1e20, -1e-20], dtype=torch.float64)
    s = xv.scale(x)
    assert torch.all(s.abs() <= 5)
    back = xv.unscale(s)
    assert torch.allclose(back[:3], x[:3], rtol=1e-9)
    assert back[3] == 1e15  # clamped


def test_fone_digits_and_decode():
    fo = FoNE(128, places=(-4, 3))
    digits, sign = fo.digits(torch.tensor([12.5, -0.0034, 9999.9999], dtype=torch.float64))
    assert digits[0].tolist() == [0, 0, 1, 2, 5, 0, 0, 0]
    assert digits[1].tolist() == [0, 0, 0, 0, 0, 0, 3, 4] and sign.tolist() == [False, True, False]
    # head that scores the right prototype decodes the right value
    proto = fo.prototypes
    target = torch.cat([proto[digits[0]].reshape(-1), torch.tensor([-5.0], dtype=torch.float64)])
    with torch.no_grad():
        fo.head = torch.nn.Linear(128, 17).double()
        fo.head.weight.zero_()
        fo.head.bias.copy_(target)
    assert float(fo.predict(torch.zeros(1, 128, dtype=torch.float64))[0]) == 12.5


@pytest.mark.parametrize("cls", SCHEMES)
def test_common_interface_trains_and_generates(cls, torch_threads):
    torch.manual_seed(0)
    scheme = cls(128)
    model = TinyGPT(scheme, max_len=64)
    task = make_task("minmax", 96, seed=0)
    data = model.tokenize(task)
    assert data.ids.shape[0] == 96 and bool(data.target.any())
    if scheme.single_token:
        assert int(data.num_mask.sum()) == sum(
            sum(isinstance(v, float) for v in p + a) for p, a in zip(task.prompts, task.answers)
        )
        assert model.tokens_per_number([1.25, -3e-3]) == 1.0
    else:
        assert model.tokens_per_number([1.25]) > 1
    res = fit(model, data, steps=6, batch_size=32, lr=3e-3, seed=0)
    assert len(res.losses) == 6 and all(math.isfinite(v) for v in res.losses)
    assert res.losses[-1] < res.losses[0]
    test = make_task("minmax", 8, seed=0, split="test")
    pred = model.generate(test.prompts, max_new=6)
    assert len(pred) == 8
    assert 0.0 <= score(test, pred) <= 1.0


def test_bittokens_generation_decodes_numbers():
    """A <|num|> chosen by the LM head takes the value decoded from the bit head."""
    torch.manual_seed(0)
    model = TinyGPT(BitTokens(128), max_len=32)
    with torch.no_grad():
        model.tok.weight[model.num_id] = 0.0
        model.tok.weight[model.index["<eos>"]] = 0.0
        model.scheme.head.net.weight.zero_()
        bits = torch.tensor(2.0).double()
        from bittokens import encode

        model.scheme.head.net.bias.copy_((encode(bits, reciprocal=False).float() * 2 - 1) * 10)
    # make <|num|> the argmax everywhere by giving it a dominant output direction
    with torch.no_grad():
        model.ln_f.weight.zero_()
        model.ln_f.bias.fill_(1.0)
        model.tok.weight[model.num_id] = 1.0
    out = model.generate([["max", 1.0, ",", 2.0, "="]], max_new=3)
    assert out[0][:3] == [2.0, 2.0, 2.0]


def test_tinygpt_bad_input():
    with pytest.raises(TypeError, match="scheme must be a NumberScheme"):
        TinyGPT("bits")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_heads must divide"):
        TinyGPT(BitTokens(128), n_heads=3)
    with pytest.raises(ValueError, match="max_len"):
        TinyGPT(DigitTokens(128), max_len=8).tokenize(make_task("sorting", 4))
    with pytest.raises(ValueError, match="at least batch_size"):
        fit(TinyGPT(BitTokens(128)), make_task("add", 10), steps=1, batch_size=16)
    assert NUM_TOKEN == "<|num|>"
