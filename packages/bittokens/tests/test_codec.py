"""Acceptance items 1-3 (round trip, reciprocal, noise) and the codec's bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bittokens import bit_flip_errors, decode, decode_confidence, encode, encode_pm1

SPECIAL64 = np.array(
    [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072009e-308,
     2.2250738585072014e-308, 1.7976931348623157e308, -1.7976931348623157e308, 1.0, -1.0],
)  # fmt: skip


def random_float64(n: int, seed: int = 0) -> np.ndarray:
    """Random sign, exponent code uniform over all 2048 values, random mantissa."""
    rng = np.random.default_rng(seed)
    sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    exp = rng.integers(0, 2048, n, dtype=np.uint64) << np.uint64(52)
    mant = rng.integers(0, 2**52, n, dtype=np.uint64)
    bits = np.concatenate([sign | exp | mant, SPECIAL64.view(np.uint64)])
    return bits.view(np.float64)


def test_round_trip_float64_bit_identical():
    x = random_float64(10**6)
    bits = encode(x, reciprocal=False)
    assert bits.shape == (x.size, 64) and bits.dtype == np.uint8
    assert np.array_equal(decode(bits).view(np.uint64), x.view(np.uint64))
    # NaN payload kept, signalling NaN included
    snan = np.array([0x7FF0000000000001, 0xFFF4000000000123], dtype=np.uint64).view(np.float64)
    assert np.array_equal(decode(encode(snan)).view(np.uint64), snan.view(np.uint64))


def test_layout_is_msb_first():
    b = encode(np.array([-1.5]), reciprocal=False)[0]
    assert b[0] == 1  # sign
    assert b[1:12].tolist() == [0] + [1] * 10  # exponent 1023
    assert b[12] == 1 and b[13:].sum() == 0  # mantissa .1


def test_reciprocal_bits_equal_encode_of_inverse():
    x = random_float64(2 * 10**5, seed=1)
    with np.errstate(all="ignore"):
        inv = 1.0 / x
    both = encode(x)
    assert both.shape == (x.size, 128)
    assert np.array_equal(both[:, 64:], encode(inv, reciprocal=False))
    assert np.array_equal(both[:, :64], encode(x, reciprocal=False))
    zeros = encode(np.array([0.0, -0.0]))
    assert decode(zeros[:, 64:]).tolist() == [np.inf, -np.inf]


def test_round_trip_float32_all_bit_patterns_sampled():
    rng = np.random.default_rng(2)
    u = rng.integers(0, 2**32, 10**6, dtype=np.uint64).astype(np.uint32)
    special = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 1.1754942e-38, 1.17549435e-38, 3.4028235e38],
        dtype=np.float32,
    ).view(np.uint32)
    x = np.concatenate([u, special]).view(np.float32)
    bits = encode(x, "float32", reciprocal=False)
    assert bits.shape == (x.size, 32)
    back = decode(bits, "float32")
    assert back.dtype == np.float32
    assert np.array_equal(back.view(np.uint32), x.view(np.uint32))
    with np.errstate(all="ignore"):
        inv = np.float32(1) / x
    assert np.array_equal(encode(x, "float32")[:, 32:], encode(inv, "float32", False))


def test_round_trip_bfloat16_numpy_and_torch():
    u16 = np.arange(2**16, dtype=np.uint32)  # every bfloat16 bit pattern
    x32 = (u16 << np.uint32(16)).view(np.float32)
    bits = encode(x32, "bfloat16", reciprocal=False)
    assert bits.shape == (2**16, 16)
    packed = np.packbits(bits, axis=-1).view(">u2")[:, 0]
    assert np.array_equal(packed, u16.astype(np.uint16))
    assert np.array_equal(decode(bits, "bfloat16").view(np.uint32), x32.view(np.uint32))
    t = torch.from_numpy(u16.astype(np.int32)).to(torch.int16).view(torch.bfloat16)
    tb = encode(t, "bfloat16", reciprocal=False)
    assert torch.equal(tb, torch.from_numpy(bits))
    assert torch.equal(decode(tb, "bfloat16").view(torch.int16), t.view(torch.int16))


def test_torch_matches_numpy_and_keeps_type():
    x = random_float64(5000, seed=3)
    t = torch.from_numpy(x)
    tb = encode(t)
    assert isinstance(tb, torch.Tensor) and tb.dtype == torch.uint8
    assert np.array_equal(tb.numpy(), encode(x))
    back = decode(tb)
    assert back.dtype == torch.float64
    assert np.array_equal(back.numpy().view(np.uint64), x.view(np.uint64))
    assert torch.equal(decode(encode_pm1(t)).view(torch.int64), t.view(torch.int64))
    x32 = np.random.default_rng(4).standard_normal(1000).astype(np.float32)
    assert np.array_equal(encode(torch.from_numpy(x32), "float32").numpy(), encode(x32, "float32"))


def test_shapes_broadcast():
    x = np.linspace(-3, 3, 24).reshape(2, 3, 4)
    assert encode(x).shape == (2, 3, 4, 128)
    assert decode(encode(x)).shape == (2, 3, 4)
    assert np.array_equal(decode(encode(x)), x)


def test_noise_robust_decode_all_exact():
    x = random_float64(10**5, seed=5)
    b = encode(x, reciprocal=False)
    rng = np.random.default_rng(6)
    logits = (2.0 * b - 1.0) + rng.uniform(-0.5, 0.5, b.shape)
    assert np.array_equal(decode(logits.astype(np.float32)).view(np.uint64), x.view(np.uint64))


def test_decode_confidence_flags_uncertain_exponent():
    b = encode(np.array([3.0, 3.0]), reciprocal=False).astype(np.float64) * 2 - 1
    b[1, 5] *= 0.1
    conf = decode_confidence(b)
    assert conf["uncertain_exponent"].tolist() == [False, True]
    assert conf["mantissa"].tolist() == [1.0, 1.0]


def test_bit_flip_error_table():
    err = bit_flip_errors(np.array([1.0, -3.0]))
    assert err.shape == (2, 64)
    assert err[0, 0] == 2.0  # sign flip
    # the last mantissa bit changes the value by one ulp (relative 2^-52 at 1.0)
    assert err[0, 63] == 2.0**-52
    assert np.all(err[:, 12:] <= 0.5 + 1e-12)


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.array([1, 2, 3]), "floating-point"),
        (np.array([1 + 2j]), "complex"),
        (torch.tensor([1, 2]), "floating-point"),
        (np.array([True]), "floating-point"),
    ],
)
def test_encode_rejects_non_float(bad, match):
    with pytest.raises(ValueError, match=match):
        encode(bad)


def test_encode_rejects_unknown_precision():
    with pytest.raises(ValueError, match="precision must be one of"):
        encode(np.array([1.0]), precision="float16")


def test_decode_rejects_bad_bits():
    with pytest.raises(ValueError, match="bits must hold only 0 and 1"):
        decode(np.full((2, 64), 2, dtype=np.uint8))
    with pytest.raises(ValueError, match="last dimension 64 or 128"):
        decode(np.zeros((2, 63), dtype=np.uint8))
    with pytest.raises(ValueError, match="16, 32, 64 or 128"):
        decode(np.zeros((2, 48), dtype=np.uint8), precision=None)
    with pytest.raises(ValueError, match="bits must hold only 0 and 1"):
        decode(torch.full((1, 64), 3, dtype=torch.uint8))
    with pytest.raises(ValueError, match="complex"):
        decode(np.zeros((1, 64), dtype=complex))
