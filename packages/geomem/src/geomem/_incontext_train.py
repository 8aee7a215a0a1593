"""Training and evaluating the GPT on the in-context path-star task (see :mod:`_incontext`)."""

from __future__ import annotations

import time

import torch
from torch.nn import functional as F

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_positive,
    check_positive_int,
    check_seed,
    rng_from_seed,
)
from icml26_shared.experiment import progress as progress_bar

from ._gpt import GPT
from ._incontext import make_dataset, node_positions
from ._train import SCHEDULES, TrainResult, _param_groups, _Schedule

__all__ = ["evaluate_incontext", "train_incontext"]


def train_incontext(
    model: GPT,
    steps: int,
    *,
    d: int = 5,
    l: int = 5,
    batch_size: int = 64,
    lr: float = 1e-3,
    weight_decay: float = 1e-2,
    schedule: str = "constant",
    warmup: int = 0,
    seed: SeedLike = 0,
    commas: bool = True,
    log_every: int | None = None,
    progress: bool | None = None,
) -> TrainResult:
    """Teacher-forced training on fresh in-context path-stars (labels drawn from the model's
    ``n_nodes`` tokens); the history logs :func:`evaluate_incontext` on held-out graphs.
    ``schedule`` / ``warmup`` as in :func:`geomem.train`; AdamW with the same parameter groups.
    ``commas=False`` trains on the comma-free paths (see :func:`make_dataset`)."""
    steps = check_positive_int(steps, "steps")
    batch_size = check_positive_int(batch_size, "batch_size")
    check_positive(lr, "lr")
    check_positive(weight_decay, "weight_decay", strict=False)
    check_seed(seed)
    check_choice(schedule, "schedule", SCHEDULES)
    if not isinstance(warmup, int) or not 0 <= warmup < steps:
        raise ValueError(f"warmup must be an integer in [0, steps={steps}), got {warmup!r}")
    sched = _Schedule(lr, schedule, warmup, steps)
    opt = torch.optim.AdamW(_param_groups(model, weight_decay), lr=sched(0))
    every = max(1, steps // 10) if log_every is None else check_positive_int(log_every, "log_every")
    rng = rng_from_seed(seed)
    res = TrainResult()
    start = time.perf_counter()
    model.train()
    for s in progress_bar(range(steps + 1), enabled=progress, total=steps + 1, desc="in-context"):
        if s % every == 0 or s == steps:
            res.history.append(
                {"step": float(s), **evaluate_incontext(model, d, l, n=100, commas=commas)}
            )
        if s == steps:
            break
        batch = make_dataset(
            batch_size, d, l, model.n_nodes, seed=int(rng.integers(2**31)), commas=commas
        )
        logits = model(batch.ids[:, :-1])
        mask = batch.target[:, :-1]
        loss = F.cross_entropy(logits[mask], batch.ids[:, 1:][mask])
        for group in opt.param_groups:
            group["lr"] = sched(s)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        res.losses.append(float(loss.detach()))
    model.eval()
    res.seconds = time.perf_counter() - start
    return res


@torch.no_grad()
def evaluate_incontext(
    model: GPT, d: int = 5, l: int = 5, n: int = 200, seed: SeedLike = 10**6, commas: bool = True
) -> dict[str, float]:
    """On ``n`` unseen graphs: greedy first-step accuracy (chance ``1/d``), exact path, and the
    teacher-forced accuracy of the later path nodes ``n2 .. t`` (the shortcut's tokens)."""
    batch = make_dataset(n, d, l, model.n_nodes, seed=seed, commas=commas)
    eq = batch.eq
    prompt, truth = batch.ids[:, : eq + 1], batch.ids[:, eq + 1 : -1]
    out = model.generate(prompt, truth.shape[1])
    pos = node_positions(l, commas)
    pred = model(batch.ids[:, :-1]).argmax(-1)[:, eq:]
    tf = (pred[:, : truth.shape[1]] == truth).double()
    return {
        "first_step": float((out[:, pos[1]] == truth[:, pos[1]]).double().mean()),
        "exact_path": float((out == truth).all(1).double().mean()),
        "teacher_forced_first": float(tf[:, pos[1]].mean()),
        "teacher_forced_later": float(tf[:, pos[2:]].mean()),
    }
