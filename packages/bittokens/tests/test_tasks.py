"""Task generator: seeding, disjoint splits, answers, sampling, scoring, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from bittokens.data import TASKS, make_task, sample_numbers, score


@pytest.mark.parametrize("name", list(TASKS))
def test_seeded_and_disjoint(name):
    a = make_task(name, 300, seed=1)
    b = make_task(name, 300, seed=1)
    assert a.prompts == b.prompts and a.answers == b.answers
    assert make_task(name, 50, seed=2).prompts != a.prompts[:50]
    test = make_task(name, 300, seed=1, split="test")
    key = lambda p: tuple(v for v in p if isinstance(v, float))  # noqa: E731
    assert not {key(p) for p in a.prompts} & {key(p) for p in test.prompts}


def test_answers_are_correct():
    add = make_task("add", 100, seed=0)
    for p, a in zip(add.prompts, add.answers):
        assert a[0] == float(f"{p[1] + p[3]:.15g}")
    mm = make_task("minmax", 200, seed=0)
    for p, a in zip(mm.prompts, mm.answers):
        nums = [v for v in p if isinstance(v, float)]
        assert 2 <= len(nums) <= 5
        assert a[0] == (max(nums) if p[0] == "max" else min(nums))
    srt = make_task("sorting", 100, seed=0)
    for p, a in zip(srt.prompts, srt.answers):
        nums = [v for v in p if isinstance(v, float)]
        assert 3 <= len(nums) <= 6
        assert [v for v in a if isinstance(v, float)] == sorted(nums, reverse=p[0] == "desc")
    iv = make_task("interval", 100, seed=0)
    for p, a in zip(iv.prompts, iv.answers):
        x, *bounds = [v for v in p if isinstance(v, float)]
        assert bounds == sorted(bounds)
        assert a[0] == f"c{sum(b <= x for b in bounds)}"


def test_decimal_uniform_sampling():
    rng = np.random.default_rng(0)
    x = sample_numbers(rng, 20000, max_digits=4, exp_range=(-3, 3))
    mag = np.floor(np.log10(np.abs(x)))
    assert mag.min() == -3 and mag.max() == 3
    assert abs(np.mean(x < 0) - 0.5) < 0.02
    digits = np.array(
        [len(f"{abs(v):.15g}".replace(".", "").lstrip("0").rstrip("0") or "0") for v in x]
    )
    assert digits.max() == 4
    counts = np.bincount(digits, minlength=5)[1:]
    assert np.all(np.abs(counts / counts.sum() - 0.25) < 0.03)  # digits uniform in 1..4
    b = sample_numbers(rng, 5000, exp_range=(-3, 3), sampling="binary")
    assert np.all((np.abs(b) >= 2.0**-10) & (np.abs(b) < 2.0**14))


def test_score_perfect_and_wrong():
    t = make_task("mult", 20, seed=0)
    assert score(t, t.answers) == 1.0
    assert score(t, [[]] * 20) == 0.0
    mm = make_task("minmax", 20, seed=0)
    assert score(mm, mm.answers) == 1.0
    iv = make_task("interval", 50, seed=0)
    assert score(iv, iv.answers) == 1.0


def test_bad_input():
    with pytest.raises(ValueError, match="name must be one of"):
        make_task("pow", 10)
    with pytest.raises(ValueError, match="split must be one of"):
        make_task("add", 10, split="val")
    with pytest.raises(ValueError, match="sampling must be one of"):
        make_task("add", 10, sampling="log")
    with pytest.raises(ValueError, match="predictions must have 10"):
        score(make_task("add", 10), [])


def test_significant_bits():
    from bittokens.data import significant_bits

    x = np.array([1.0, 3.0, 0.5, 0.75, -5.0, 0.0, 2.0**-1074, 1.0 + 2.0**-52])
    assert significant_bits(x).tolist() == [1, 2, 1, 2, 3, 0, 1, 53]


def test_binary_uniform_sampling_draws_uniform_bit_counts():
    from bittokens.data import significant_bits

    x = sample_numbers(
        np.random.default_rng(0), 30000, exp_range=(-3, 3), sampling="binary_uniform", max_bits=6
    )
    bits = significant_bits(x)
    counts = np.bincount(bits, minlength=7)[1:]
    assert bits.min() == 1 and bits.max() == 6
    assert np.all(np.abs(counts / counts.sum() - 1 / 6) < 0.02)
    assert np.all((np.abs(x) >= 2.0**-10) & (np.abs(x) < 2.0**14))
    assert abs(np.mean(x < 0) - 0.5) < 0.02


def test_binary_uniform_default_reaches_the_dense_mantissas_of_decimal_operands():
    # decimal test operands such as 0.37 have 53 significant bits; the default training
    # sampler (the paper's: bits uniform up to float64's precision) must reach them
    from bittokens.data import significant_bits

    x = sample_numbers(np.random.default_rng(0), 20000, sampling="binary_uniform")
    bits = significant_bits(x)
    assert bits.min() == 1 and bits.max() == 53
    assert abs(np.mean(bits > 40) - 13 / 53) < 0.02
    test = make_task("mult", 200, seed=0, split="test")
    dec = significant_bits(np.array([[p[1], p[3]] for p in test.prompts]))
    assert np.mean(dec > 40) > 0.5  # most decimal operands are long in binary


def test_binary_uniform_mult_is_exact_and_carries_its_difficulty():
    from bittokens.data import significant_bits

    t = make_task("mult", 300, seed=0, sampling="binary_uniform", max_bits=12)
    for p, a in zip(t.prompts, t.answers):
        assert a[0] == p[1] * p[3]  # short operands: the float64 product is exact
        assert 1e-3 <= abs(a[0]) < 1e4  # results kept in the decimal range
    ops = np.array([[p[1], p[3]] for p in t.prompts])
    assert t.meta["difficulty"] == significant_bits(ops).sum(1).tolist()
    dec = make_task("mult", 50, seed=0)
    assert dec.meta["difficulty"] == [
        sum(len(f"{abs(v):.15g}".replace(".", "").strip("0")) for v in p if isinstance(v, float))
        for p in dec.prompts
    ]


def test_paper_range_reaches_15_digits_and_1e_minus_14():
    from bittokens.data import PAPER_RANGE

    x = sample_numbers(np.random.default_rng(1), 40000, **PAPER_RANGE)
    mag = np.floor(np.log10(np.abs(x)))
    assert mag.min() == -14 and mag.max() == 14
    assert max(len(f"{abs(v):.15g}".replace(".", "").split("e")[0].strip("0")) for v in x) == 15
    with pytest.raises(ValueError, match="max_bits must be <= 53"):
        sample_numbers(np.random.default_rng(0), 3, sampling="binary_uniform", max_bits=60)
