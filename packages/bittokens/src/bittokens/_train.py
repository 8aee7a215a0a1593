"""Training loop for :class:`bittokens.TinyGPT`, on one process or data-parallel (DDP, gloo).

Each rank draws its examples with a :class:`torch.utils.data.DistributedSampler` and computes
*summed* losses; the token and number counts are all-reduced first, so every rank divides by the
global counts and multiplies by the world size (DDP averages gradients). Two ranks with batch
``B`` therefore take exactly the step of one rank with batch ``2B``:

.. math::

    g = \\frac{1}{W} \\sum_{r=1}^{W} W \\, \\nabla \\frac{S_r}{\\sum_{r'} N_{r'}}
      = \\nabla \\frac{\\sum_r S_r}{\\sum_r N_r}.

The default optimiser follows the paper's code: Muon (``torch.optim.Muon``, momentum 0.95,
Nesterov) at ``lr`` on the transformer blocks' weight matrices, and Adam (betas 0.9/0.95) at
``0.2 lr`` on the heads (number heads, positions), ``15 lr`` on the token embeddings and ``lr``
on every bias and norm; no weight decay, no clipping. ``optimizer="adamw"`` uses AdamW at ``lr``
everywhere instead (weight decay 0.01, clip 1). Both use linear warm-up over 5% of the steps and
cosine decay to 10%. With ``curriculum`` (one difficulty per example) the examples are drawn from
those at or below a difficulty frontier that rises linearly from 10% of the range to all of it
over the first half of the steps.
"""

from __future__ import annotations

import copy
import importlib
import math
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import DistributedSampler

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_positive,
    check_positive_int,
    int_from_seed,
)
from icml26_shared.experiment import progress as _progress
from icml26_shared.threads import single_thread

from ._model import Batch, TinyGPT
from ._optim import AdamW, MuonWithAdam, make_optimizer
from ._tasks import Task

__all__ = ["OPTIMIZERS", "AdamW", "FitResult", "MuonWithAdam", "fit"]

#: optimiser names accepted by :func:`fit`, and their default peak rates.
OPTIMIZERS = {"muon": 0.02, "adamw": 1e-3}


@dataclass
class FitResult:
    """What :func:`fit` returns.

    Attributes:
        model: the trained model (the same object that was passed in).
        losses: the global training loss of every step.
        curve: ``(step, value)`` pairs returned by ``eval_fn`` (single process only).
        seconds: wall time of the training loop.
    """

    model: TinyGPT
    losses: list[float] = field(default_factory=list)
    curve: list[tuple[int, float]] = field(default_factory=list)
    seconds: float = 0.0


def _lr_factor(step: int, steps: int) -> float:
    warm = max(1, int(0.05 * steps))
    if step < warm:
        return (step + 1) / warm
    frac = (step - warm) / max(1, steps - warm)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac))


def _batches(n: int, batch_size: int, world_size: int, rank: int, seed: int):
    sampler = DistributedSampler(
        range(n), num_replicas=world_size, rank=rank, shuffle=True, seed=seed, drop_last=True
    )
    epoch = 0
    while True:
        sampler.set_epoch(epoch)
        idx = list(sampler)
        for start in range(0, len(idx) - batch_size + 1, batch_size):
            yield torch.tensor(idx[start : start + batch_size])
        epoch += 1


def _curriculum_batches(
    difficulty: np.ndarray, steps: int, batch_size: int, world_size: int, rank: int, seed: int
):
    """Batches drawn uniformly from the examples at or below a frontier that rises linearly from
    10% of the difficulty range to all of it over the first half of ``steps``; every rank draws
    the same global batch and keeps its slice."""
    rng = np.random.default_rng([seed, 7])
    order = np.argsort(difficulty, kind="stable")
    ranked = difficulty[order]
    lo, hi = float(ranked[0]), float(ranked[-1])
    need = batch_size * world_size
    for step in range(steps):
        frontier = lo + (hi - lo) * min(1.0, 0.1 + 0.9 * step / max(1, steps // 2))
        n = max(int(np.searchsorted(ranked, frontier, side="right")), need)
        idx = order[rng.integers(0, n, need)]
        yield torch.from_numpy(idx[rank * batch_size : (rank + 1) * batch_size].copy())


def _train_loop(
    model: TinyGPT,
    data: Batch,
    *,
    steps: int,
    batch_size: int,
    lr: float,
    weight_decay: float,
    clip: float,
    seed: int,
    world_size: int,
    rank: int,
    optimizer: str,
    curriculum: np.ndarray | None,
    eval_fn: Callable[[TinyGPT, int], float] | None,
    eval_every: int,
    progress: bool | None = False,
) -> tuple[list[float], list[tuple[int, float]]]:
    ddp = None
    if world_size > 1:
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel

        ddp = DistributedDataParallel(model)
    opt = make_optimizer(model, optimizer, lr, weight_decay)
    losses: list[float] = []
    curve: list[tuple[int, float]] = []
    if curriculum is None:
        batches = _batches(len(data), batch_size, world_size, rank, seed)
    else:
        batches = _curriculum_batches(curriculum, steps, batch_size, world_size, rank, seed)
    model.train()
    for step in _progress(range(steps), enabled=progress, desc="fit"):
        opt.scale(_lr_factor(step, steps))
        b = data[next(batches)]
        width = int(b.attn.sum(1).max())  # right padding: drop the columns no row uses
        b = b[:, :width] if width < b.ids.shape[1] else b
        counts = torch.stack([b.target[:, 1:].sum(), (b.target[:, 1:] & b.num_mask[:, 1:]).sum()])
        counts = counts.to(torch.float64)
        if ddp is not None:
            dist.all_reduce(counts)
        terms = model.loss_terms(b, forward=ddp)
        loss = terms["ce_sum"] / counts[0].clamp(min=1)
        if counts[1] > 0:
            loss = loss + terms["num_sum"] / counts[1]
        opt.zero_grad()
        (loss * world_size).backward()
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        val = loss.detach().clone()
        if ddp is not None:
            dist.all_reduce(val)
        losses.append(float(val))
        if eval_fn is not None and (step + 1) % eval_every == 0:
            curve.append((step + 1, float(eval_fn(model, step + 1))))
            model.train()
    return losses, curve


def _worker(
    rank: int, world_size: int, init_file: str, out_file: str, kwargs: dict[str, Any]
) -> None:
    import torch.distributed as dist

    with single_thread():  # one thread per DDP process
        dist.init_process_group(
            "gloo", init_method=f"file://{init_file}", rank=rank, world_size=world_size
        )
        try:
            # a private copy: spawned workers receive the parameters in shared memory
            model = copy.deepcopy(kwargs.pop("model"))
            losses, _ = _train_loop(
                model, rank=rank, world_size=world_size, eval_fn=None, eval_every=1, **kwargs
            )
            if rank == 0:
                torch.save({"state": model.state_dict(), "losses": losses}, out_file)
        finally:
            dist.destroy_process_group()


def fit(
    model: TinyGPT,
    task: Task | Batch,
    *,
    steps: int,
    batch_size: int = 64,
    optimizer: str = "muon",
    lr: float | None = None,
    weight_decay: float | None = None,
    clip: float | None = None,
    seed: SeedLike = 0,
    world_size: int = 1,
    curriculum: Any = None,
    eval_fn: Callable[[TinyGPT, int], float] | None = None,
    eval_every: int = 50,
    start_method: str | None = None,
    progress: bool | None = None,
) -> FitResult:
    """Train ``model`` on ``task`` (Muon with the paper's parameter groups, or AdamW).

    Args:
        model: a :class:`TinyGPT`.
        task: a :class:`bittokens.data.Task` (tokenised here) or an already tokenised batch.
        steps: optimiser steps.
        batch_size: examples per step *per process*.
        optimizer: ``"muon"`` (default; :class:`MuonWithAdam`, the paper's groups and ratios)
            or ``"adamw"`` (AdamW at one rate, betas 0.9/0.98).
        lr: peak learning rate (Muon's rate for ``"muon"``); default 0.02 for ``"muon"``,
            1e-3 for ``"adamw"``.
        weight_decay: default 0 for ``"muon"`` (applied to the embeddings only, as in the
            paper), 0.01 for ``"adamw"``.
        clip: gradient-norm clip, 0 disables; default 0 for ``"muon"``, 1 for ``"adamw"``.
        seed: sampler seed: an integer, a ``numpy.random.Generator`` (one draw from it) or
            ``None`` (fresh entropy); the model's initial weights are the caller's.
        curriculum: optional per-example difficulties (e.g. ``task.meta["difficulty"]``, the
            operands' significant bits of binary-uniform tasks); training then draws from a
            rising difficulty frontier (module docstring).
        world_size: 1 trains here; ``> 1`` spawns that many CPU processes joined by DDP on gloo
            and loads rank 0's final weights back into ``model``.
        eval_fn: ``eval_fn(model, step) -> float`` called every ``eval_every`` steps
            (single process only), recorded in ``FitResult.curve``.
        eval_every: evaluation period.
        start_method: how DDP workers start: ``"fork"`` (default on Linux, no re-import) or
            ``"spawn"``.
        progress: a progress bar over the steps; ``None`` (default) shows one on a terminal
            and one line when training starts and ends when stderr is piped; ``False`` is
            silent (single process only; DDP workers stay silent).

    Returns:
        :class:`FitResult`.
    """
    import time

    check_positive_int(steps, "steps")
    check_positive_int(batch_size, "batch_size")
    check_positive_int(world_size, "world_size")
    check_choice(optimizer, "optimizer", tuple(OPTIMIZERS))
    check_positive_int(eval_every, "eval_every")
    seed = int_from_seed(seed, "seed", bits=63)
    if start_method is not None:
        check_choice(start_method, "start_method", ("fork", "spawn", "forkserver"))
    if eval_fn is not None and not callable(eval_fn):
        raise TypeError(f"eval_fn must be callable or None, got {type(eval_fn).__name__}")
    if eval_fn is not None and world_size > 1:
        raise ValueError("eval_fn runs in a single process only: pass world_size=1 or no eval_fn")
    lr = OPTIMIZERS[optimizer] if lr is None else lr
    check_positive(lr, "lr")
    if weight_decay is None:
        weight_decay = 0.0 if optimizer == "muon" else 0.01
    if clip is None:
        clip = 0.0 if optimizer == "muon" else 1.0
    weight_decay = check_positive(weight_decay, "weight_decay", strict=False)
    clip = check_positive(clip, "clip", strict=False)
    if not isinstance(model, TinyGPT):
        raise TypeError(f"model must be a TinyGPT, got {type(model).__name__}")
    if not isinstance(task, Task | Batch):
        raise TypeError(f"task must be a bittokens.data.Task or a Batch, got {type(task).__name__}")
    data = task if isinstance(task, Batch) else model.tokenize(task)
    if curriculum is not None:
        curriculum = np.asarray(curriculum, dtype=np.float64)
        if curriculum.shape != (len(data),) or not np.all(np.isfinite(curriculum)):
            raise ValueError(
                f"curriculum must hold one finite difficulty per example ({len(data)},), "
                f"got shape {curriculum.shape}"
            )
    if len(data) < batch_size * world_size:
        raise ValueError(
            f"task must hold at least batch_size * world_size = {batch_size * world_size} examples, "
            f"got {len(data)}"
        )
    data = Batch(data.ids, data.values.to(torch.float64), data.num_mask, data.attn, data.target)
    kwargs = dict(
        steps=steps,
        batch_size=batch_size,
        lr=lr,
        weight_decay=weight_decay,
        clip=clip,
        seed=seed,
        optimizer=optimizer,
        curriculum=curriculum,
    )
    start = time.perf_counter()
    if world_size == 1:
        losses, curve = _train_loop(
            model,
            data,
            world_size=1,
            rank=0,
            eval_fn=eval_fn,
            eval_every=eval_every,
            progress=progress,
            **kwargs,
        )
        return FitResult(model, losses, curve, time.perf_counter() - start)
    import torch.multiprocessing as mp

    method = start_method or ("fork" if sys.platform == "linux" else "spawn")
    if method == "fork":
        # DistributedDataParallel imports torch._dynamo when first built (10-20 s on a small
        # CPU); importing it once here lets every forked worker inherit it.
        importlib.import_module("torch._dynamo")
    with tempfile.TemporaryDirectory() as tmp:
        init_file = os.path.join(tmp, "init")
        out_file = os.path.join(tmp, "out.pt")
        mp.start_processes(
            _worker,
            args=(world_size, init_file, out_file, {"model": model, "data": data, **kwargs}),
            nprocs=world_size,
            join=True,
            start_method=method,
        )
        saved = torch.load(Path(out_file), weights_only=True)
    model.load_state_dict(saved["state"])
    return FitResult(model, [float(v) for v in saved["losses"]], [], time.perf_counter() - start)
