"""Seeded arithmetic tasks (Add, Mult, Div, MinMax, Interval, Sorting) with disjoint splits.

Numbers are drawn *decimal-uniform*: the count of significant digits ``D`` is uniform in
``1..max_digits``, the leading ``D`` digits are uniform (first one non-zero), the decimal exponent
is uniform in ``exp_range`` and the sign is random, so ``x = +- m 10^(e - D + 1)`` with
``10^e <= |x| < 10^(e+1)``. *Binary-uniform* sampling, the paper's training data for Mult: the
count of significant bits ``B`` is uniform in ``1..max_bits`` (default 53, float64's precision,
as in the paper's generator), the binary exponent uniform over the same decimal range, the
``B - 2`` bits between the leading and the last one uniform. Short operands give exact products;
long ones reach the dense 52-bit mantissas of decimal numbers such as 0.37, which the decimal
test splits are made of. Results are the float64 products, not rounded to 15 digits.
``task.meta["difficulty"]`` holds each example's total significant digits (decimal) or bits
(binary samplers) over its input numbers, the key of the curriculum of :func:`bittokens.fit`. *Binary* sampling draws
full 52-bit mantissas. Products and quotients are kept inside the decimal range (the paper
redraws operands whose result leaves it). Results are rounded to 15 significant digits, the
paper's precision, so e.g. ``0.1 + 0.2`` is ``0.3``. :data:`PAPER_RANGE` is the paper's number
range: up to 15 significant digits in ``[1e-14, 1e15)``.

A split is decided by a hash of the example's input numbers (test: hash = 0 mod 5), so train and
test never share an input, whatever the seeds.

An example is a prompt and an answer, lists of words (``str``) and numbers (``float``)::

    ["max", 1.25, ",", -30.0, ",", 0.004, "="]  ->  [1.25]

References:
    Kreitner, Hager et al., "Efficient numeracy in language models through single-token number
    embeddings" (BitTokens), ICML 2026, arXiv:2510.06824.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_positive_int,
    int_from_seed,
    rng_from_seed,
)

from ._metric import log_smape, normalised_accuracy

#: number samplers of :func:`sample_numbers`.
SAMPLINGS = ("decimal", "binary", "binary_uniform")

#: the paper's number range, as ``make_task`` keywords: <= 15 significant digits in [1e-14, 1e15).
PAPER_RANGE: dict[str, Any] = {"max_digits": 15, "exp_range": (-14, 14)}

#: task name -> metric name.
TASKS: dict[str, str] = {
    "add": "log_smape",
    "mult": "log_smape",
    "div": "log_smape",
    "minmax": "exact_match",
    "interval": "normalised_accuracy",
    "sorting": "exact_match",
}

#: the words tasks use (a scheme's number tokens come on top).
WORDS = [
    "<pad>", "<bos>", "<eos>", ",", "=",
    "add", "mult", "div", "min", "max", "interval", "asc", "desc",
    "c0", "c1", "c2", "c3", "c4",
]  # fmt: skip

Item = str | float


@dataclass
class Task:
    """A list of examples of one task.

    Attributes:
        name: task name (a key of :data:`TASKS`).
        prompts: per example, the words and numbers before the answer (ending with ``"="``).
        answers: per example, the answer's words and numbers (``<eos>`` is added by tokenisers).
        metric: ``"log_smape"``, ``"exact_match"`` or ``"normalised_accuracy"``.
    """

    name: str
    prompts: list[list[Item]]
    answers: list[list[Item]]
    metric: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.prompts)

    def __getitem__(self, idx: slice) -> Task:
        return Task(self.name, self.prompts[idx], self.answers[idx], self.metric, dict(self.meta))


def _round15(y: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.array([float(f"{v:.15g}") for v in y.tolist()], dtype=np.float64)


def significant_bits(x: NDArray[np.float64]) -> NDArray[np.int64]:
    """Significant bits of each float64, from the leading to the last one bit (0 for 0);
    subnormals count from their leading one."""
    u = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    full = (u & np.uint64(2**52 - 1)) | np.where(
        (u >> np.uint64(52)) & np.uint64(0x7FF) > 0, np.uint64(2**52), np.uint64(0)
    )
    lowest = full & (~full + np.uint64(1))
    top = np.frexp(full.astype(np.float64))[1]  # exact: full < 2^53
    low = np.frexp(lowest.astype(np.float64))[1]
    return np.where(full == 0, 0, top - low + 1).astype(np.int64)


#: the decimal exponents a float64 holds with room for 15 digits and the tasks' results
EXP_LIMIT = 290


def _check_exp_range(exp_range: Any) -> tuple[int, int]:
    try:
        lo, hi = exp_range
    except (TypeError, ValueError):
        raise TypeError(
            f"exp_range must be a pair (low, high) of integers, got {exp_range!r}"
        ) from None
    for v in (lo, hi):
        if isinstance(v, bool) or not isinstance(v, int | np.integer):
            raise TypeError(f"exp_range must be a pair (low, high) of integers, got {exp_range!r}")
    if lo > hi:
        raise ValueError(f"exp_range must be (low, high) with low <= high, got {exp_range}")
    if lo < -EXP_LIMIT or hi > EXP_LIMIT:
        raise ValueError(
            f"exp_range must lie within [-{EXP_LIMIT}, {EXP_LIMIT}] (float64 range), got {exp_range}"
        )
    return int(lo), int(hi)


def sample_numbers(
    rng: SeedLike,
    size: int | tuple[int, ...],
    *,
    max_digits: int = 4,
    exp_range: tuple[int, int] = (-3, 3),
    sampling: str = "decimal",
    max_bits: int | None = None,
) -> NDArray[np.float64]:
    """Draw signed numbers decimal-uniformly (or binary-uniformly) over ``exp_range``.

    Args:
        rng: numpy generator (or a seed, see :func:`icml26_shared.checks.check_seed`).
        size: output shape.
        max_digits: most significant digits (decimal sampling), 1..15.
        exp_range: inclusive range of decimal exponents ``e`` with ``10^e <= |x| < 10^(e+1)``.
        sampling: ``"decimal"``, ``"binary_uniform"`` (significant bits uniform in
            ``1..max_bits``) or ``"binary"`` (full 52-bit mantissas).
        max_bits: most significant bits (binary-uniform), 1..53; default 53 (float64's
            precision: decimal operands have dense 52-bit mantissas).

    Returns:
        float64 array of ``size``.
    """
    rng = rng_from_seed(rng, "rng")
    check_choice(sampling, "sampling", SAMPLINGS)
    check_positive_int(max_digits, "max_digits")
    if max_digits > 15:
        raise ValueError(f"max_digits must be <= 15, got {max_digits}")
    if max_bits is None:
        max_bits = 53
    check_positive_int(max_bits, "max_bits")
    if max_bits > 53:
        raise ValueError(f"max_bits must be <= 53, got {max_bits}")
    lo, hi = _check_exp_range(exp_range)
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    if sampling in ("binary", "binary_uniform"):
        e2 = np.floor(rng.uniform(lo * np.log2(10), (hi + 1) * np.log2(10), size))
        frac = rng.random(size)
        if sampling == "binary_uniform":
            n_bits = rng.integers(1, max_bits + 1, size)
            # exactly n_bits: the leading one, n_bits - 2 uniform bits, a final one
            odd = 2.0 * np.floor(np.ldexp(frac, n_bits - 2)) + 1.0
            frac = np.where(n_bits > 1, np.ldexp(odd, 1 - n_bits), 0.0)
        x = np.ldexp(1.0 + frac, e2.astype(np.int64))
        return sign * x
    n_dig = rng.integers(1, max_digits + 1, size)
    mant = np.floor(10.0 ** (n_dig - 1) * (1.0 + 9.0 * rng.random(size)))
    mant = np.minimum(mant, 10.0**n_dig - 1)
    exp10 = rng.integers(lo, hi + 1, size) - n_dig + 1
    pos = np.where(
        exp10 >= 0, mant * 10.0 ** np.maximum(exp10, 0), mant / 10.0 ** np.maximum(-exp10, 0)
    )
    return sign * pos


def _is_test(nums: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Split hash of each row of numbers: test when 0 mod 5."""
    u = np.ascontiguousarray(nums, dtype=np.float64).view(np.uint64)
    mult = np.uint64(0x9E3779B97F4A7C15)
    h = np.zeros(u.shape[0], dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(u.shape[1]):
            h = (h ^ u[:, j]) * mult
            h ^= h >> np.uint64(29)
    return (h % np.uint64(5)) == 0


def _draw(
    rng: np.random.Generator,
    n: int,
    k: int,
    split: str,
    kw: dict[str, Any],
    result: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
) -> NDArray[np.float64]:
    """``n`` rows of ``k`` numbers of the split; with ``result``, only rows whose result's
    magnitude lies in the decimal range (or is 0)."""
    rows: list[NDArray[np.float64]] = []
    have = 0
    lo, hi = kw["exp_range"]
    empty = 0
    while have < n:
        m = max(16, 2 * (n - have) * (5 if split == "test" else 2))
        x = sample_numbers(rng, (m, k), **kw)
        keep = _is_test(x) == (split == "test")
        if result is not None:
            with np.errstate(over="ignore", divide="ignore"):
                r = np.abs(result(x))
            keep &= (r == 0) | ((r >= 10.0**lo) & (r < 10.0 ** (hi + 1)))
        rows.append(x[keep])
        have += int(keep.sum())
        empty = empty + 1 if not keep.any() else 0
        if empty >= 50:
            raise ValueError(
                f"exp_range {kw['exp_range']} gives no example whose result lies in the range "
                "too (e.g. products overflow it): choose a wider or smaller range"
            )
    return np.concatenate(rows)[:n]


def _join(nums: list[float]) -> list[Item]:
    out: list[Item] = []
    for i, v in enumerate(nums):
        if i:
            out.append(",")
        out.append(float(v))
    return out


def make_task(
    name: str,
    n: int,
    *,
    seed: SeedLike = 0,
    split: str = "train",
    max_digits: int = 4,
    exp_range: tuple[int, int] = (-3, 3),
    sampling: str = "decimal",
    max_bits: int | None = None,
) -> Task:
    """Generate ``n`` examples of a task.

    Args:
        name: ``"add"``, ``"mult"``, ``"div"``, ``"minmax"`` (2-5 numbers, min or max),
            ``"interval"`` (x and 4 sorted bounds -> class 0-4, the count of bounds <= x) or
            ``"sorting"`` (3-6 numbers, ascending or descending).
        n: number of examples.
        seed: generator seed: an integer (the same task every time), a
            ``numpy.random.Generator`` (one draw from it) or ``None`` (fresh entropy).
        split: ``"train"`` or ``"test"`` (disjoint inputs by construction).
        max_digits: most significant digits of each input number.
        exp_range: decimal exponent range of the inputs.
        sampling: ``"decimal"`` (default), ``"binary_uniform"`` (the paper's Mult training
            data) or ``"binary"``. ``meta["difficulty"]`` holds each example's total
            significant digits (decimal) or bits (binary), the curriculum key of
            :func:`bittokens.fit`.
        max_bits: most significant bits per number for ``"binary_uniform"`` (default 53).

    Returns:
        A :class:`Task`.
    """
    check_choice(name, "name", TASKS)
    check_choice(split, "split", ("train", "test"))
    check_positive_int(n, "n")
    seed = int_from_seed(seed, "seed", bits=63)
    _check_exp_range(exp_range)
    rng = np.random.default_rng([seed, list(TASKS).index(name)])
    kw = {"max_digits": max_digits, "exp_range": exp_range, "sampling": sampling}
    if max_bits is not None:
        kw["max_bits"] = max_bits
    prompts: list[list[Item]] = []
    answers: list[list[Item]] = []
    ops = {
        "add": lambda x: x[:, 0] + x[:, 1],
        "mult": lambda x: x[:, 0] * x[:, 1],
        "div": lambda x: x[:, 0] / x[:, 1],
    }
    if name in ops:
        x = _draw(rng, n, 2, split, kw, None if name == "add" else ops[name])
        y = ops[name](x)
        y = y if sampling == "binary_uniform" else _round15(y)  # binary-uniform: float64 products
        for row, t in zip(x.tolist(), y.tolist()):
            prompts.append([name, *_join(row), "="])
            answers.append([t])
    elif name in ("minmax", "sorting"):
        lo, hi = (2, 5) if name == "minmax" else (3, 6)
        x = _draw(rng, n, hi, split, kw)
        counts = rng.integers(lo, hi + 1, n)
        flags = rng.random(n) < 0.5
        for row, c, f in zip(x.tolist(), counts.tolist(), flags.tolist()):
            nums = row[:c]
            if name == "minmax":
                word = "max" if f else "min"
                prompts.append([word, *_join(nums), "="])
                answers.append([max(nums) if f else min(nums)])
            else:
                word = "desc" if f else "asc"
                prompts.append([word, *_join(nums), "="])
                answers.append(_join(sorted(nums, reverse=f)))
    else:  # interval
        x = _draw(rng, n, 5, split, kw)
        for row in x.tolist():
            bounds = sorted(row[1:])
            cls = int(sum(b <= row[0] for b in bounds))
            prompts.append(["interval", *_join([row[0], *bounds]), "="])
            answers.append([f"c{cls}"])
    nums = np.array([v for p in prompts for v in p if isinstance(v, float)])
    if sampling == "decimal":
        per = np.array(
            [len(f"{abs(v):.14e}".split("e")[0].replace(".", "").rstrip("0")) for v in nums]
        )
    else:
        per = significant_bits(nums)
    sizes = np.cumsum([sum(isinstance(v, float) for v in p) for p in prompts])[:-1]
    difficulty = [int(c.sum()) for c in np.split(per, sizes)]
    meta: dict[str, Any] = {"seed": seed, "split": split, **kw, "difficulty": difficulty}
    return Task(name, prompts, answers, TASKS[name], meta)


def _numbers(items: list[Item]) -> list[float]:
    return [float(v) for v in items if isinstance(v, float)]


def score(task: Task, predictions: list[list[Item]]) -> float:
    """Score predicted answers against ``task.answers`` with the task's metric.

    log-sMAPE for Add/Mult/Div (a missing number counts as NaN, score 0), exact match of the
    whole answer for MinMax/Sorting, normalised accuracy ``(acc - 0.2)/0.8`` for Interval.
    """
    if not isinstance(predictions, list | tuple):
        raise TypeError(
            f"predictions must be a list of predicted answers, got {type(predictions).__name__}"
        )
    if len(predictions) != len(task):
        raise ValueError(f"predictions must have {len(task)} entries, got {len(predictions)}")
    if task.metric == "log_smape":
        y = np.array([_numbers(a)[0] for a in task.answers])
        y_hat = np.array([(_numbers(p) or [np.nan])[0] for p in predictions])
        return float(log_smape(y, y_hat))
    if task.metric == "exact_match":
        hits = [
            _numbers(p) == _numbers(a) and len(_numbers(a)) > 0
            for p, a in zip(predictions, task.answers)
        ]
        return float(np.mean(hits))
    y = np.array([int(str(a[0])[1:]) for a in task.answers])
    y_hat = np.array(
        [int(str(p[0])[1:]) if p and str(p[0]) in WORDS[13:18] else -1 for p in predictions]
    )
    return normalised_accuracy(y, y_hat)
