"""Issue 13, item 1: why BitTokens does not learn the sign of a product (toy diagnosis).

The sign of ``x1 * x2`` is the XOR of the two operands' sign bits (bit 0 of each ``<|num|>``
input). The toy task keeps the Mult prompts (``mult x1 , x2 =``) and asks for ``sign(x1 x2)``:

* written as a word (``c1``/``c0``) and learned through the vocabulary cross-entropy, the
  2-layer d = 128 trunk learns the XOR (so attention, the embedding and the masks are sound);
* written as a number (``+-1.0``) and learned through the bit head with the default loss, the
  sign bit stays at chance: the other 63 target bits are constant and the ``<|num|>`` token at
  ``=`` is certain, and those saturating targets grow one constant direction of the residual
  stream at ``=`` (norm ~130 against an input-dependent spread ~2 after 150 steps); under the final
  LayerNorm this squeezes the input-dependent part, while the sign bit carries only 1/64 of
  ``lambda`` (0.16 against the cross-entropy's 0.5). With the head bias set to the log-odds of
  the training bits (no push from constant bits) and the sign bit weighted like a token
  (``loss_weight = 100``: 1.6 per bit) it is learned.

These are slow (training runs of 30-60 s each on one thread); the last one is the open
conditioning problem, kept as a strict xfail so that a fix shows up as a failure to update.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bittokens import BitTokens, TinyGPT, encode, fit
from bittokens.data import Task, make_task

pytestmark = pytest.mark.slow
STEPS = 300


def _xor_task(n: int, seed: int, as_word: bool) -> Task:
    base = make_task("mult", n, seed=seed)
    answers = [
        (["c1" if p[1] * p[3] > 0 else "c0"] if as_word else [float(np.sign(p[1] * p[3]))])
        for p in base.prompts
    ]
    return Task("xor", base.prompts, answers, "")


def _train(model: TinyGPT, task: Task) -> None:
    fit(model, task, steps=STEPS, batch_size=64, lr=3e-3, seed=0)


def _sign_bit_accuracy(model: TinyGPT, task: Task) -> float:
    b = model.tokenize(task)
    model.eval()
    with torch.no_grad():
        h, _ = model(b.ids, b.values, b.num_mask, b.attn)
        rows = b.target[:, 1:] & b.num_mask[:, 1:]
        logits = model.scheme.head(h[:, :-1][rows])
    truth = encode(b.values[:, 1:][rows], reciprocal=False)[:, 0]
    return float(((logits[:, 0] > 0).to(torch.uint8) == truth).float().mean())


def _bit_model(loss_weight: float, bias_from: Task | None) -> TinyGPT:
    torch.manual_seed(0)
    model = TinyGPT(BitTokens(128, loss_weight=loss_weight))
    if bias_from is not None:
        b = model.tokenize(bias_from)
        rows = b.target[:, 1:] & b.num_mask[:, 1:]
        p = encode(b.values[:, 1:][rows], reciprocal=False).double().mean(0).clamp(1e-3, 1 - 1e-3)
        with torch.no_grad():
            model.scheme.head.net.bias.copy_(torch.log(p / (1 - p)).float())
    return model


def test_trunk_learns_the_sign_xor_through_the_vocabulary(torch_threads):
    torch.manual_seed(0)
    model = TinyGPT(BitTokens(128))
    _train(model, _xor_task(20000, 100, as_word=True))
    val = _xor_task(400, 900, as_word=True)
    b = model.tokenize(val)
    model.eval()
    with torch.no_grad():
        _, logits = model(b.ids, b.values, b.num_mask, b.attn)
    at = b.target.float().argmax(1) - 1  # the "=" position
    z = logits[torch.arange(len(at)), at][:, [model.index["c0"], model.index["c1"]]]
    truth = torch.tensor([a[0] == "c1" for a in val.answers])
    assert float((z.argmax(1).bool() == truth).float().mean()) >= 0.9


def test_bit_head_learns_the_sign_xor_when_the_sign_bit_is_conditioned(torch_threads):
    train = _xor_task(20000, 100, as_word=False)
    model = _bit_model(loss_weight=100.0, bias_from=train)
    _train(model, train)
    assert _sign_bit_accuracy(model, _xor_task(400, 900, as_word=False)) >= 0.9


@pytest.mark.xfail(strict=True, reason="issue 13: open conditioning problem (module docstring)")
def test_default_bittokens_learns_the_sign_xor(torch_threads):
    train = _xor_task(20000, 100, as_word=False)
    model = _bit_model(loss_weight=10.0, bias_from=None)
    _train(model, train)
    assert _sign_bit_accuracy(model, _xor_task(400, 900, as_word=False)) >= 0.9
