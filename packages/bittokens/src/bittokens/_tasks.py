"""Seeded arithmetic tasks (Add, Mult, Div, MinMax, Interval, Sorting) with disjoint splits.

Numbers are drawn *decimal-uniform*: the count of significant digits ``D`` is uniform in
``1..max_digits``, the leading ``D`` digits are uniform (first one non-zero), the decimal exponent
is uniform in ``exp_range`` and the sign is random, so ``x = +- m 10^(e - D + 1)`` with
``10^e <= |x| < 10^(e+1)``. *Binary-uniform* sampling (uniform binary exponent and mantissa bits
over the same range) is the curriculum alternative. Results are rounded to 15 significant digits,
the paper's precision, so e.g. ``0.1 + 0.2`` is ``0.3``.

A split is decided by a hash of the example's input numbers (test: hash = 0 mod 5), so train and
test never share an input, whatever the seeds.

An example is a prompt and an answer, lists of words (``str``) and numbers (``float``)::

    ["max", 1.25, ",", -30.0, ",", 0.004, "="]  ->  [1.25]

References:
    Kreitner, Hager et al., "Efficient numeracy in language models through single-token number
    embeddings" (BitTokens), ICML 2026, arXiv:2510.06824.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import check_choice, check_positive_int

from ._metric import log_smape, normalised_accuracy

__all__ = ["TASKS", "WORDS", "Task", "make_task", "sample_numbers", "score"]

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


def sample_numbers(
    rng: np.random.Generator,
    size: int | tuple[int, ...],
    *,
    max_digits: int = 4,
    exp_range: tuple[int, int] = (-3, 3),
    sampling: str = "decimal",
) -> NDArray[np.float64]:
    """Draw signed numbers decimal-uniformly (or binary-uniformly) over ``exp_range``.

    Args:
        rng: numpy generator.
        size: output shape.
        max_digits: most significant digits (decimal sampling), 1..15.
        exp_range: inclusive range of decimal exponents ``e`` with ``10^e <= |x| < 10^(e+1)``.
        sampling: ``"decimal"`` or ``"binary"``.

    Returns:
        float64 array of ``size``.
    """
    check_choice(sampling, "sampling", ("decimal", "binary"))
    check_positive_int(max_digits, "max_digits")
    if max_digits > 15:
        raise ValueError(f"max_digits must be <= 15, got {max_digits}")
    lo, hi = exp_range
    if lo > hi:
        raise ValueError(f"exp_range must be (low, high) with low <= high, got {exp_range}")
    sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
    if sampling == "binary":
        e2 = rng.uniform(lo * np.log2(10), (hi + 1) * np.log2(10), size)
        x = np.ldexp(1.0 + rng.random(size), np.floor(e2).astype(np.int64))
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
    rng: np.random.Generator, n: int, k: int, split: str, kw: dict[str, Any]
) -> NDArray[np.float64]:
    rows: list[NDArray[np.float64]] = []
    have = 0
    while have < n:
        m = max(16, 2 * (n - have) * (5 if split == "test" else 2))
        x = sample_numbers(rng, (m, k), **kw)
        keep = _is_test(x) == (split == "test")
        rows.append(x[keep])
        have += int(keep.sum())
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
    seed: int = 0,
    split: str = "train",
    max_digits: int = 4,
    exp_range: tuple[int, int] = (-3, 3),
    sampling: str = "decimal",
) -> Task:
    """Generate ``n`` examples of a task.

    Args:
        name: ``"add"``, ``"mult"``, ``"div"``, ``"minmax"`` (2-5 numbers, min or max),
            ``"interval"`` (x and 4 sorted bounds -> class 0-4, the count of bounds <= x) or
            ``"sorting"`` (3-6 numbers, ascending or descending).
        n: number of examples.
        seed: generator seed.
        split: ``"train"`` or ``"test"`` (disjoint inputs by construction).
        max_digits: most significant digits of each input number.
        exp_range: decimal exponent range of the inputs.
        sampling: ``"decimal"`` (default) or ``"binary"`` (curriculum).

    Returns:
        A :class:`Task`.
    """
    check_choice(name, "name", TASKS)
    check_choice(split, "split", ("train", "test"))
    check_positive_int(n, "n")
    rng = np.random.default_rng([seed, list(TASKS).index(name)])
    kw = {"max_digits": max_digits, "exp_range": exp_range, "sampling": sampling}
    prompts: list[list[Item]] = []
    answers: list[list[Item]] = []
    if name in ("add", "mult", "div"):
        x = _draw(rng, n, 2, split, kw)
        y = {"add": x[:, 0] + x[:, 1], "mult": x[:, 0] * x[:, 1], "div": x[:, 0] / x[:, 1]}[name]
        y = _round15(y)
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
    return Task(name, prompts, answers, TASKS[name], {"seed": seed, "split": split, **kw})


def _numbers(items: list[Item]) -> list[float]:
    return [float(v) for v in items if isinstance(v, float)]


def score(task: Task, predictions: list[list[Item]]) -> float:
    """Score predicted answers against ``task.answers`` with the task's metric.

    log-sMAPE for Add/Mult/Div (a missing number counts as NaN, score 0), exact match of the
    whole answer for MinMax/Sorting, normalised accuracy ``(acc - 0.2)/0.8`` for Interval.
    """
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
