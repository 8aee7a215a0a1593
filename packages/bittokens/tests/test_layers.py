"""Acceptance items 4-5: zero_pad embedding, order, bit loss; and the layers' bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bittokens import BitHead, NumberEmbedding, bit_loss, bit_weights, decode, encode


def _batch(d: int = 256, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    emb = torch.randn(3, 7, d, generator=g, dtype=torch.float64)
    values = torch.randn(3, 7, generator=g, dtype=torch.float64) * 1e3
    mask = torch.rand(3, 7, generator=g) < 0.4
    mask[0, 0] = True
    return emb, values, mask


@pytest.mark.parametrize("d", [128, 200, 512])
def test_zero_pad_rms_one_and_other_positions_unchanged(d):
    emb, values, mask = _batch(d)
    out = NumberEmbedding(d)(emb, values, mask)
    rms = out[mask].pow(2).mean(-1).sqrt()
    assert torch.all((rms - 1).abs() <= 1e-6)
    other = ~mask
    assert torch.equal(out[other].view(torch.int64), emb[other].view(torch.int64))
    assert torch.all(out[mask][:, 128:] == 0)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float8_e4m3fn])
def test_bits_survive_low_precision_cast(dtype):
    d = 192
    emb, values, mask = _batch(d, seed=1)
    out = NumberEmbedding(d)(emb, values, mask)
    low = out.to(dtype).to(torch.float64)
    read = decode(low[mask][:, :128])
    assert torch.equal(read.view(torch.int64), values[mask].view(torch.int64))


def test_sum_combine_adds_signs_to_learned_vector():
    d = 160
    emb, values, mask = _batch(d, seed=2)
    out = NumberEmbedding(d, combine="sum")(emb, values, mask)
    signs = encode(values[mask]).to(torch.float64) * 2 - 1
    assert torch.allclose(out[mask][:, :128] - emb[mask][:, :128], signs)
    assert torch.equal(out[mask][:, 128:], emb[mask][:, 128:])
    assert torch.equal(out[~mask], emb[~mask])


def _lex_less(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    diff = a != b
    first = diff.argmax(-1)
    rows = np.arange(a.shape[0])
    return diff.any(-1) & (a[rows, first] < b[rows, first])


def test_bit_strings_are_ordered():
    rng = np.random.default_rng(0)
    n = 10**5
    u = rng.integers(0, 0x7FF0000000000000, (n, 2), dtype=np.uint64)  # finite positive
    x, y = u.view(np.float64)[:, 0], u.view(np.float64)[:, 1]
    bx, by = encode(x, reciprocal=False), encode(y, reciprocal=False)
    assert np.array_equal(_lex_less(bx, by), x < y)
    nx, ny = encode(-x, reciprocal=False), encode(-y, reciprocal=False)
    assert np.array_equal(_lex_less(nx, ny), -x > -y)  # reversed for negatives


def test_confident_logits_give_tiny_loss_and_exact_decode():
    values = torch.tensor([[1.5, -2e-300, 7.0, 1e300]], dtype=torch.float64)
    logits = 20.0 * (encode(values, reciprocal=False).to(torch.float64) * 2 - 1)
    loss = bit_loss(logits, values)
    assert float(loss) < 1e-8
    assert torch.equal(decode(logits), values)


def test_masked_number_adds_zero_gradient():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 5, 64, generator=g, dtype=torch.float64, requires_grad=True)
    values = torch.randn(2, 5, generator=g, dtype=torch.float64)
    mask = torch.zeros(2, 5, dtype=torch.bool)
    mask[0, 1] = mask[1, 3] = True
    bit_loss(logits, values, mask).backward()
    assert torch.all(logits.grad[~mask] == 0)
    assert torch.all(logits.grad[mask].abs().sum(-1) > 0)
    # changing a masked value changes nothing
    values2 = values.clone()
    values2[0, 0] = 123.0
    assert torch.equal(bit_loss(logits, values, mask), bit_loss(logits, values2, mask))


def test_bit_weights_linear_mean_one():
    w = bit_weights(64, 0.5)
    assert torch.allclose(w.mean(), torch.tensor(1.0, dtype=torch.float64))
    assert w[0] < w[-1]  # s > 0 favours low bits
    assert torch.allclose(w[-1] / w[0], torch.tensor(1 + 64 * 0.5, dtype=torch.float64))
    assert torch.all(bit_weights(64, 0.0) == 1)
    assert bit_weights(64, -0.5)[0] > bit_weights(64, -0.5)[-1]


def test_bit_loss_matches_manual_bce():
    g = torch.Generator().manual_seed(1)
    logits = torch.randn(4, 64, generator=g, dtype=torch.float64)
    values = torch.randn(4, generator=g, dtype=torch.float64)
    b = encode(values, reciprocal=False).to(torch.float64)
    p = torch.sigmoid(logits)
    manual = -(b * p.log() + (1 - b) * (1 - p).log()).mean()
    assert torch.allclose(bit_loss(logits, values), manual)


def test_bit_head_shapes():
    h = torch.randn(2, 3, 128)
    assert BitHead(128)(h).shape == (2, 3, 64)
    assert BitHead(128, hidden=64)(h).shape == (2, 3, 64)
    assert BitHead(128, precision="float32")(h).shape == (2, 3, 32)


def test_bad_input():
    with pytest.raises(ValueError, match="d must be an integer >= 128"):
        NumberEmbedding(64)
    with pytest.raises(ValueError, match="combine must be one of"):
        NumberEmbedding(128, combine="concat")
    emb = torch.zeros(2, 3, 128)
    with pytest.raises(ValueError, match="values must have shape"):
        NumberEmbedding(128)(emb, torch.zeros(2, 4), torch.zeros(2, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="mask must have shape"):
        NumberEmbedding(128)(emb, torch.zeros(2, 3), torch.zeros(3, 3, dtype=torch.bool))
    with pytest.raises(ValueError, match="logits must have last dimension 64"):
        bit_loss(torch.zeros(2, 32), torch.zeros(2))
