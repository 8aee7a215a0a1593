"""Training loops: full-batch gradient descent for the numpy models, AdamW for the GPT.

Recipes for the GPT (Noroozizadeh et al., arXiv:2510.26745): ``"mixed"`` (edge memorisation and
train-leaf path queries in every batch; the default), ``"staged"`` (edges until memorised, i.e.
edge recovery >= 0.99, then train-leaf paths only) and their ``"*_hardest_token"`` variants, in
which the loss of a path query falls on ``n1`` only: an ``l``-fold composition with no
intermediate supervision. Test leaves occur only in edge memorisation. The loss is the mean
cross-entropy of the target tokens (the tokens after ``=``).

Every ``log_every`` steps the probes are evaluated and appended to ``TrainResult.history``, so
one sees when lookup (edge recovery) and geometry (navigation, spectral share) appear.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from threadpoolctl import threadpool_limits
from torch.nn import functional as F

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_in_interval,
    check_positive,
    check_positive_int,
    check_seed,
    int_from_seed,
)
from icml26_shared.experiment import progress as progress_bar

from ._gpt import GPT
from ._graphs import Graph
from ._node2vec import AssociativeControl, Node2Vec
from ._probes import (
    _checked_scores,
    exact_path,
    first_step,
    geometric_score,
    navigation,
    recovery_fraction,
    spectral_alignment,
    spectral_share,
)
from ._tasks import Example, Vocab, edge_examples, path_examples

__all__ = [
    "GPT_STEPS",
    "MATRIX_STEPS",
    "RECIPES",
    "WARMUP_MAX",
    "TrainResult",
    "evaluate",
    "pad_examples",
    "train",
]

RECIPES = ("mixed", "staged", "mixed_hardest_token", "staged_hardest_token")
SCHEDULES = ("constant", "cosine")

#: default steps: the GPT recipe that meets acceptance item 4 (unseen-leaf first step 1.0 on
#: path-star d = 50 by step 2000 of 4000), and Node2Vec's 30,000 full-batch steps (item 2)
GPT_STEPS = 4000
MATRIX_STEPS = 30_000
#: default linear warm-up: ``min(WARMUP_MAX, steps // 10)`` steps (200 at 2000 steps and more)
WARMUP_MAX = 200


@dataclass(frozen=True)
class _Schedule:
    """Learning rate at step ``s``: linear warm-up to ``lr`` over ``warmup`` steps, then constant
    or a cosine from ``lr`` down to ``lr / 10`` at ``steps``."""

    lr: float
    kind: str
    warmup: int
    steps: int

    def __call__(self, s: int) -> float:
        if s < self.warmup:
            return self.lr * (s + 1) / self.warmup
        if self.kind == "constant":
            return self.lr
        frac = (s - self.warmup) / max(1, self.steps - self.warmup)
        return self.lr * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * frac)))


@dataclass
class TrainResult:
    """Losses per step, probe values every ``log_every`` steps, wall time.

    Attributes:
        losses: the training loss at every step.
        history: ``[{"step": s, probe: value, ...}, ...]``.
        seconds: wall-clock training time (probes included).
        switched_at: for ``staged`` recipes, the step at which path training began (else None).
    """

    losses: list[float] = field(default_factory=list)
    history: list[dict[str, float]] = field(default_factory=list)
    seconds: float = 0.0
    switched_at: int | None = None

    @property
    def final(self) -> dict[str, float]:
        return self.history[-1] if self.history else {}


def _spectral_k(graph: Graph, k: int | None) -> int:
    if k is not None:
        return k
    return len(graph.leaves) if len(graph.leaves) else 2


def _logged_recovery(model: Any, graph: Graph) -> float:
    """Edge recovery for the training log: from step 0, where an untrained bilinear map scores
    every pair alike (no node recovered), which the public probe refuses."""
    return recovery_fraction(_checked_scores(model, graph), graph)


def evaluate(model: Any, graph: Graph, k: int | None = None) -> dict[str, float]:
    """All probes that apply to ``model`` on ``graph`` (``k``: spectral width, default ``d``)."""
    emb = model.embeddings()
    kk = min(_spectral_k(graph, k), graph.n_nodes - 1)
    out = {
        "edge_recovery": _logged_recovery(model, graph),
        "geometric_score": geometric_score(emb, graph),
        "spectral_share": spectral_share(emb, graph, kk),
        "spectral_alignment": spectral_alignment(emb, graph, kk),
    }
    if graph.root >= 0:
        out["navigation"] = navigation(emb, graph)
    if isinstance(model, GPT) and len(graph.test_leaves):
        out["first_step"] = first_step(model, graph)
        out["exact_path"] = exact_path(model, graph)
        out["train_exact_path"] = exact_path(model, graph, graph.train_leaves)
    return out


def pad_examples(examples: list[Example], length: int, pad: int) -> tuple[torch.Tensor, ...]:
    """Stack examples into ``ids`` ``(N, length)`` (padded with ``pad``) and ``target`` masks."""
    ids = torch.full((len(examples), length), pad, dtype=torch.long)
    tgt = torch.zeros((len(examples), length), dtype=torch.bool)
    for i, e in enumerate(examples):
        ids[i, : len(e.ids)] = torch.tensor(e.ids)
        tgt[i, : len(e.target)] = torch.tensor(e.target)
    return ids, tgt


def train(
    model: Any,
    graph: Graph,
    recipe: str = "mixed",
    steps: int | None = None,
    *,
    lr: float = 3e-3,
    batch_size: int = 64,
    path_fraction: float = 0.2,
    weight_decay: float = 0.1,
    schedule: str = "cosine",
    warmup: int | None = None,
    direction: str = "both",
    self_edges: bool = False,
    seed: SeedLike = 0,
    log_every: int | None = None,
    k: int | None = None,
    progress: bool | None = None,
) -> TrainResult:
    """Train ``model`` to memorise ``graph``.

    The defaults are the GPT recipe that meets the spec's item 4 (path-star d = 50, l = 5:
    unseen-leaf first step and exact path 1.0 on 3 seeds' worth of runs, see the README): 4000
    AdamW steps at lr 3e-3 with 200 linear warm-up steps and cosine decay to 3e-4, weight decay
    0.1 on matrices and the token table, batches of 64 with 20% path queries.

    Args:
        model: :class:`~geomem.models.Node2Vec` / :class:`~geomem.models.AssociativeControl`
            (full-batch gradient descent on the directed edges at the model's own ``lr``;
            ``recipe`` and the batch arguments do not apply) or :class:`~geomem.models.GPT`.
        graph: the graph; its ``train_leaves`` give the path queries.
        recipe: one of :data:`RECIPES` (GPT only).
        steps: optimisation steps (default 4000 for a GPT, 30,000 for the matrix models).
        lr, weight_decay: AdamW settings for the GPT (weight decay on matrices and the token
            table only; biases and LayerNorm gains are not decayed). A matrix model trains at its own rate (``Node2Vec(..., lr=)``): passing ``lr`` or
            any other GPT-only argument with one raises instead of being ignored.
        schedule: ``"cosine"`` (linear warm-up over ``warmup`` steps, then cosine decay from
            ``lr`` to ``lr / 10`` at the last step, as in the paper's code) or ``"constant"``.
        warmup: linear warm-up steps (both schedules; default ``min(200, steps // 10)``).
        batch_size: sequences per GPT step; ``path_fraction`` of them are path queries.
        direction: edge directions memorised (``"forward"``, ``"backward"``, ``"both"``).
        self_edges: add ``u = u`` edges (the self-edge ablation).
        seed: seed of the batch sampler (GPT): an integer, a ``numpy.random.Generator`` or
            ``None``.
        log_every: probe interval (default ``steps // 10``); the last step is always logged.
        k: spectral width of the logged spectral probes (default: number of leaves, else 2).
        progress: show a progress bar (``None``: on a terminal, and a start and an end line
            when stderr is piped, the default; ``False``: silent).
    """
    check_choice(recipe, "recipe", RECIPES)
    if not isinstance(graph, Graph):
        raise TypeError(f"graph must be a geomem.graphs.Graph, got {type(graph).__name__}")
    seed_given = check_seed(seed) != 0
    seed = int_from_seed(seed, "seed", bits=63)
    if isinstance(model, Node2Vec | AssociativeControl):
        given = {
            "seed": seed_given,
            "recipe": recipe != "mixed",
            "lr": lr != 3e-3,  # NaN included
            "batch_size": batch_size != 64,
            "path_fraction": path_fraction != 0.2,
            "weight_decay": weight_decay != 0.1,
            "schedule": schedule != "cosine",
            "warmup": warmup is not None,
            "direction": direction != "both",
        }
        ignored = [name for name, passed in given.items() if passed]
        if ignored:
            raise ValueError(
                f"{', '.join(ignored)} appl{'y' if len(ignored) > 1 else 'ies'} to the GPT only: "
                f"a {type(model).__name__} trains by deterministic full-batch gradient descent at "
                "its own lr "
                f"(build it with {type(model).__name__}(..., lr=...))"
            )
        steps = check_positive_int(MATRIX_STEPS if steps is None else steps, "steps")
        if model.n_nodes != graph.n_nodes:
            raise ValueError(
                f"graph must have model.n_nodes={model.n_nodes} nodes, got {graph.n_nodes}"
            )
        return _train_matrix(model, graph, steps, self_edges, log_every, k, progress)
    if not isinstance(model, GPT):
        raise TypeError(f"model must be a Node2Vec, AssociativeControl or GPT, got {type(model)}")
    if model.n_nodes != graph.n_nodes:
        raise ValueError(
            f"graph must have model.n_nodes={model.n_nodes} nodes, got {graph.n_nodes}"
        )
    steps = check_positive_int(GPT_STEPS if steps is None else steps, "steps")
    check_choice(direction, "direction", ("forward", "backward", "both"))
    if warmup is None:
        warmup = min(WARMUP_MAX, steps // 10)
    check_positive(lr, "lr")
    check_positive(weight_decay, "weight_decay", strict=False)
    batch_size = check_positive_int(batch_size, "batch_size", minimum=2)
    path_fraction = check_in_interval(path_fraction, "path_fraction", 0, 1)
    check_choice(schedule, "schedule", SCHEDULES)
    if not isinstance(warmup, int | np.integer) or not 0 <= warmup < steps:
        raise ValueError(f"warmup must be an integer in [0, steps={steps}), got {warmup!r}")
    sched = _Schedule(lr, schedule, int(warmup), steps)
    return _train_gpt(
        model, graph, recipe, steps, sched, batch_size, path_fraction, weight_decay, direction,
        self_edges, seed, log_every, k, progress,
    )  # fmt: skip


def _log_steps(steps: int, log_every: int | None) -> set[int]:
    every = max(1, steps // 10) if log_every is None else check_positive_int(log_every, "log_every")
    return {*range(0, steps, every), steps}


def _train_matrix(
    model: Any, graph: Graph, steps: int, self_edges: bool, log_every: Any, k: Any, show: bool
) -> TrainResult:
    adj = graph.adj + np.eye(graph.n_nodes) if self_edges else graph.adj
    when = _log_steps(steps, log_every)
    res = TrainResult()
    start = time.perf_counter()
    # Small dense products: one BLAS thread is far faster than several on a shared machine
    # (scoped; the previous limits are restored on exit).
    with threadpool_limits(limits=1):
        for s in progress_bar(range(steps + 1), enabled=show, total=steps + 1, desc=model.kind):
            if s in when:
                res.history.append({"step": float(s), **evaluate(model, graph, k)})
            if s < steps:
                res.losses.append(model.step(adj))
    res.seconds = time.perf_counter() - start
    return res


def _train_gpt(
    model: GPT,
    graph: Graph,
    recipe: str,
    steps: int,
    sched: _Schedule,
    batch_size: int,
    path_fraction: float,
    weight_decay: float,
    direction: str,
    self_edges: bool,
    seed: int,
    log_every: int | None,
    k: int | None,
    show: bool,
) -> TrainResult:
    vocab = Vocab(graph.n_nodes)
    edges = edge_examples(graph, direction, self_edges)
    paths = path_examples(graph, hardest_token=recipe.endswith("hardest_token"))
    length = max(len(e.ids) for e in edges + paths)
    if length > model.max_len:
        raise ValueError(f"model.max_len must be >= {length} for this graph, got {model.max_len}")
    # Each kind padded to its own length: causal attention makes a sequence's logits independent
    # of what follows it, so this is the same loss as one padded batch at a third of the cost.
    pools = {
        kind: pad_examples(ex, max(len(e.ids) for e in ex), vocab.pad)
        for kind, ex in (("edge", edges), ("path", paths))
    }
    opt = torch.optim.AdamW(_param_groups(model, weight_decay), lr=sched(0))
    gen = torch.Generator().manual_seed(int(seed))
    n_path = min(batch_size - 1, max(1, round(batch_size * path_fraction)))
    staged = recipe.startswith("staged")
    phase_paths = False
    when = _log_steps(steps, log_every)
    check_every = max(1, min(100, steps // 20))
    res = TrainResult()
    start = time.perf_counter()
    model.train()
    for s in progress_bar(range(steps + 1), enabled=show, total=steps + 1, desc="gpt " + recipe):
        if s in when:
            res.history.append({"step": float(s), **evaluate(model, graph, k)})
        if s == steps:
            break
        if staged and not phase_paths and s % check_every == 0 and s > 0:
            if _logged_recovery(model, graph) >= 0.99:
                phase_paths, res.switched_at = True, s
        if staged:
            kind = "path" if phase_paths else "edge"
            counts = {kind: batch_size}
        else:
            counts = {"edge": batch_size - n_path, "path": n_path}
        total, n_tgt = 0.0, 0
        for kind, count in counts.items():
            ids, tgt = pools[kind]
            idx = torch.randint(0, len(ids), (count,), generator=gen)
            ids, mask = ids[idx], tgt[idx][:, :-1]
            logits = model(ids[:, :-1])
            total = total + F.cross_entropy(logits[mask], ids[:, 1:][mask], reduction="sum")
            n_tgt += int(mask.sum())
        loss = total / n_tgt
        for group in opt.param_groups:
            group["lr"] = sched(s)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        res.losses.append(float(loss.detach()))
    model.eval()
    res.seconds = time.perf_counter() - start
    return res


def _param_groups(model: GPT, weight_decay: float) -> list[dict[str, Any]]:
    """AdamW groups: decay on matrices (and the token table), none on biases / LayerNorm."""
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for p in params if p.dim() >= 2]
    rest = [p for p in params if p.dim() < 2]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]
