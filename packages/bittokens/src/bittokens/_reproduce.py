"""``python -m bittokens reproduce [--quick]``: BitTokens against xVal and single-digit tokens.

Training follows the paper's code: every scheme trains with Muon and the paper's parameter
groups (:func:`bittokens.fit`'s default), each with its own learning rate chosen on validation
from the same grid; BitTokens learns Mult from binary-uniform operands with a curriculum over
their significant bits, the peers from decimal-uniform operands with a curriculum over their
significant digits (as in the released configurations); every test set is decimal-uniform.
Schemes are compared at an equal token budget per task: the budget is BitTokens' steps x batch x
its mean tokens per training example, and each scheme gets the steps that spend it; the budget
table gives tokens, steps and FLOPs (6 N D, N the non-embedding parameters) per scheme.

Full mode (about 25 minutes on 2 idle cores): MinMax, Add and Mult on numbers of at most 4
significant digits with decimal exponents -3..3 (BitTokens steps 900 / 900 / 2000), then Add
and Mult on the paper's range (up to 15 significant digits in [1e-14, 1e15); tasks ``add@paper``,
``mult@paper``, 700 BitTokens steps); batch 64; the rate of each (scheme, task) chosen from
{0.02, 0.007} on validation with seed 0, then seeds 1 and 2 at it; mean and s.e. over 3 seeds.
Quick mode (at most 4 minutes): MinMax on the small range, 600 BitTokens steps, 2 seeds, one
rate (0.02, the paper's) for every scheme. One TinyGPT trunk (2 layers, d = 128, 4 heads);
number heads sized so that non-embedding parameter totals stay within 10%. :class:`Config`
holds every size (``--set key=value``).

Every training run (a cell: one scheme, task group, rate and seed) is a job of
:class:`icml26_shared.jobs.JobRunner`, on one thread in one of ``workers`` processes: its result
(scores, per-field bit accuracy, lr, steps, tokens, wall and CPU seconds) is cached under
``out_dir/cache`` by the config and :data:`CODE_VERSION` the moment it ends, so a stopped run
resumes; ``--set max_new_jobs=k`` runs at most k new cells per call (exit 3: run again). The
grid (seed 0 at every rate) runs first; the other seeds then run at each (scheme, task)'s rate
chosen on validation.

Also measured: bit-exact decoding rate under uniform logit noise (acceptance item 3's figure).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
import torch

from icml26_shared.config import config_dict
from icml26_shared.experiment import (
    Estimate,
    Experiment,
    ExperimentResult,
    ResultTable,
    cpu_share,
    require_matplotlib,
    save_figure,
)
from icml26_shared.jobs import Job, JobRunner, RunPaused
from icml26_shared.threads import single_thread

from ._baselines import DigitTokens, FoNE, SubwordTokens, XVal
from ._codec import decode, encode
from ._metric import field_accuracy
from ._model import Batch, TinyGPT
from ._schemes import BitTokens, NumberScheme
from ._tasks import PAPER_RANGE, TASKS, Task, make_task, score
from ._train import fit

__all__ = [
    "CODE_VERSION",
    "EXPERIMENT",
    "FULL",
    "QUICK",
    "Config",
    "make_scheme",
    "noise_exact_rate",
    "reproduce",
    "run_cell",
]

SchemeName = Literal["bittokens", "single-digit", "subword", "xval", "fone"]
SCHEME_NAMES: tuple[str, ...] = get_args(SchemeName)
#: the schemes the reproduce runs compare: BitTokens and the two named peers.
COMPARED: tuple[SchemeName, ...] = ("bittokens", "single-digit", "xval")

#: bumped when a cell's result changes for the same config (the job cache key's code part)
CODE_VERSION = 1


@dataclass(frozen=True)
class Config:
    """Sizes of one reproduce run (the defaults are the full mode).

    Attributes:
        tasks: task names, ``@paper`` for the paper's number range (else at most
            ``max_digits`` significant digits, decimal exponents ``exp_range``).
        steps: BitTokens' steps per task (aligned with ``tasks``): the task's token budget.
        batch_size: examples per step.
        lrs: the learning-rate grid (seed 0 at every rate, the other seeds at the rate chosen on
            validation; with one rate every seed runs at it).
        seeds: training seeds (the first one chooses the rate).
        n_train, n_val, n_test: training examples (split over a multi-task model's tasks),
            validation and test examples per task.
        curve_points: validation points along each training run.
        multitask: also train one model on all tasks.
        solo: train one model per task.
        d: model width.
        workers: worker processes (at most the cores the run may keep busy).
        schemes: the number schemes compared.
        max_digits, exp_range: the small number range.
        max_new_jobs: run at most this many uncached cells, then stop (exit 3: run again).
    """

    tasks: tuple[str, ...] = ("minmax", "add", "mult", "add@paper", "mult@paper")
    steps: tuple[int, ...] = (900, 900, 2000, 700, 700)
    batch_size: int = 64
    lrs: tuple[float, ...] = (0.02, 0.007)
    seeds: tuple[int, ...] = (0, 1, 2)
    n_train: int = 20000
    n_val: int = 128
    n_test: int = 300
    curve_points: int = 2
    multitask: bool = False
    solo: bool = True
    d: int = 128
    workers: int = 2
    schemes: tuple[SchemeName, ...] = COMPARED
    max_digits: int = 4
    exp_range: tuple[int, int] = (-3, 3)
    max_new_jobs: int | None = None

    def __post_init__(self) -> None:
        if not self.tasks or len(self.steps) != len(self.tasks):
            raise ValueError(
                f"steps must give one count per task ({len(self.tasks)}), got {self.steps}"
            )
        for spec in self.tasks:
            name, at, where = spec.partition("@")
            if name not in TASKS or (at and where != "paper"):
                raise ValueError(
                    f"tasks must be among {', '.join(TASKS)} (optionally with @paper), got {spec!r}"
                )
        if len(set(self.tasks)) != len(self.tasks):
            raise ValueError(f"tasks must not repeat, got {self.tasks}")
        for name in ("batch_size", "n_train", "n_val", "n_test", "curve_points", "workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if any(s < 1 for s in self.steps):
            raise ValueError(f"steps must be >= 1, got {self.steps}")
        if not self.lrs or any(not (lr > 0) for lr in self.lrs):
            raise ValueError(f"lrs must be one or more positive rates, got {self.lrs}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds must be one or more distinct seeds, got {self.seeds}")
        if not self.schemes or any(s not in SCHEME_NAMES for s in self.schemes):
            raise ValueError(f"schemes must be among {', '.join(SCHEME_NAMES)}, got {self.schemes}")
        if not (self.solo or self.multitask):
            raise ValueError("solo or multitask (or both) must be true")
        if self.max_new_jobs is not None and self.max_new_jobs < 1:
            raise ValueError(f"max_new_jobs must be >= 1 or None, got {self.max_new_jobs}")

    def steps_for(self, task: str) -> int:
        """BitTokens' steps on ``task`` (the task's token budget in steps)."""
        return self.steps[self.tasks.index(task)]


FULL = Config()
QUICK = Config(
    tasks=("minmax",),
    steps=(600,),
    lrs=(0.02,),
    seeds=(0, 1),
    n_val=64,
    n_test=200,
)


def _task_kw(spec: str, cfg: Config) -> tuple[str, dict[str, Any]]:
    """Task name and number-range keywords of a task spec (``"mult"`` or ``"mult@paper"``)."""
    name, _, where = spec.partition("@")
    if where == "paper":
        return name, dict(PAPER_RANGE)
    return name, {"max_digits": cfg.max_digits, "exp_range": cfg.exp_range}


def _train_sampling(scheme: str, name: str) -> str:
    """Mult training data: binary-uniform for BitTokens (the paper's), decimal for the peers."""
    return "binary_uniform" if scheme == "bittokens" and name == "mult" else "decimal"


def make_scheme(name: str, d: int = 128) -> NumberScheme:
    """The scheme ``name`` with the number-head sizes used here (totals within 10%)."""
    if name == "bittokens":
        return BitTokens(d)
    if name == "single-digit":
        return DigitTokens(d)
    if name == "subword":
        return SubwordTokens(d)
    if name == "xval":
        return XVal(d, head_hidden=2 * d)
    if name == "fone":
        return FoNE(d)
    raise ValueError(f"name must be one of {', '.join(SCHEME_NAMES)}, got {name!r}")


def _mix(tasks: list[Task], seed: int) -> Task:
    prompts = [p for t in tasks for p in t.prompts]
    answers = [a for t in tasks for a in t.answers]
    difficulty = [d for t in tasks for d in t.meta.get("difficulty", [0] * len(t))]
    order = np.random.default_rng(seed).permutation(len(prompts))
    return Task(
        "mixed",
        [prompts[i] for i in order],
        [answers[i] for i in order],
        "",
        {"difficulty": [difficulty[i] for i in order]},
    )


def _evaluate(model: TinyGPT, tests: dict[str, Task]) -> dict[str, Any]:
    """Test score per task and, for numeric answers, per-field bit accuracy (``"<t> bits"``)."""
    out: dict[str, Any] = {}
    for name, t in tests.items():
        max_new = 40 if t.name == "sorting" else 24
        if model.scheme.single_token:
            max_new = 12 if t.name == "sorting" else 2
        pred = model.generate(t.prompts, max_new=max_new)
        out[name] = score(t, pred)
        if t.metric == "log_smape":
            y = [a[0] for a in t.answers]
            y_hat = [next((v for v in p if isinstance(v, float)), float("nan")) for p in pred]
            out[f"{name} bits"] = field_accuracy(y, y_hat)
    return out


def _mean_tokens(model: TinyGPT, task: Task) -> float:
    """Mean tokens per training example (``<bos>`` prompt answer ``<eos>``) under ``model``."""
    return float(model.tokenize(task).attn.sum(1).double().mean())


def run_cell(
    scheme: str, tasks: tuple[str, ...], lr: float, seed: int, cfg: Config
) -> dict[str, Any]:
    """Train one model (one scheme, lr, seed) on ``tasks`` at the tasks' token budget; score
    the validation curve and the test split."""
    torch.manual_seed(seed)
    model = TinyGPT(make_scheme(scheme, cfg.d), max_len=160)
    per = max(cfg.n_train // len(tasks), cfg.batch_size)
    parts, val, test = [], {}, {}
    for spec in tasks:
        name, kw = _task_kw(spec, cfg)
        parts.append(
            make_task(name, per, seed=100 + seed, sampling=_train_sampling(scheme, name), **kw)
        )
        val[spec] = make_task(name, cfg.n_val, seed=900, **kw)  # train split, unseen seed
        test[spec] = make_task(name, cfg.n_test, seed=7, split="test", **kw)
    train = _mix(parts, seed)
    data: Batch = model.tokenize(train)
    mean_len = float(data.attn.sum(1).double().mean())
    # the token budget: BitTokens' steps x batch x BitTokens' mean tokens per example
    ref_len = float(np.mean([len(p) + len(a) + 2 for p, a in zip(train.prompts, train.answers)]))
    budget = sum(cfg.steps_for(spec) for spec in tasks) / len(tasks) * cfg.batch_size * ref_len
    steps = max(1, round(budget / (cfg.batch_size * mean_len)))
    curriculum = None
    if any(_task_kw(spec, cfg)[0] == "mult" for spec in tasks):
        curriculum = train.meta["difficulty"]
    every = max(1, steps // cfg.curve_points)

    def on_eval(m: TinyGPT, step: int) -> float:
        scores = {k: v for k, v in _evaluate(m, val).items() if k in val}
        curve_by_task.append((step / steps, scores))
        return float(np.mean(list(scores.values())))

    curve_by_task: list[tuple[float, dict[str, float]]] = []
    res = fit(
        model,
        data,
        steps=steps,
        batch_size=cfg.batch_size,
        lr=lr,
        seed=seed,
        curriculum=curriculum,
        eval_fn=on_eval,
        eval_every=every,
        progress=False,
    )
    start = time.perf_counter()
    scores = _evaluate(model, test)
    numbers = [
        v
        for t in test.values()
        for p, a in zip(t.prompts, t.answers)
        for v in p + a
        if isinstance(v, float)
    ]
    params = model.num_parameters(embeddings=False)
    tokens = steps * cfg.batch_size * mean_len
    return {
        "scheme": scheme,
        "lr": lr,
        "seed": seed,
        "val": res.curve[-1][1] if res.curve else 0.0,
        "curve": curve_by_task,
        "test": {k: v for k, v in scores.items() if k in test},
        "bits": {k[: -len(" bits")]: v for k, v in scores.items() if k.endswith(" bits")},
        "steps": steps,
        "tokens": tokens,
        "flops": 6.0 * params * tokens,
        "tokens_per_example": mean_len,
        "train_seconds": res.seconds,
        "eval_seconds": time.perf_counter() - start,
        "losses": res.losses,
        "tokens_per_number": model.tokens_per_number(numbers),
        "params": params,
        "params_all": model.num_parameters(),
    }


def noise_exact_rate(amplitudes: np.ndarray, n: int = 20000, seed: int = 0) -> np.ndarray:
    """Fraction of float64 numbers decoded bit-exactly from ``2b - 1 + U(-a, a)`` logits."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-14, 15, n)
    b = encode(x, reciprocal=False)
    rates = []
    for a in amplitudes:
        logits = (2.0 * b - 1.0) + rng.uniform(-a, a, b.shape)
        rates.append(float(np.mean(decode(logits).view(np.uint64) == x.view(np.uint64))))
    return np.array(rates)


def _cell(scheme: str, tasks: tuple[str, ...], lr: float, seed: int, cfg: Config) -> dict:
    """One cell as a job: :func:`run_cell` on one torch thread, with its wall and CPU
    seconds."""
    with single_thread():
        cpu, wall = time.process_time(), time.perf_counter()
        out = run_cell(scheme, tasks, lr, seed, cfg)
        out["cpu_seconds"] = time.process_time() - cpu
        out["wall_seconds"] = time.perf_counter() - wall
    return out


def _name(scheme: str, tasks: tuple[str, ...], lr: float, seed: int) -> str:
    """A cell's job name, e.g. ``single-digit_add-paper_lr0.007_s1``."""
    group = ".".join(t.replace("@", "-") for t in tasks)
    return f"{scheme}_{group}_lr{float(lr)!r}_s{int(seed)}"


def _job(scheme: str, tasks: tuple[str, ...], lr: float, seed: int, cfg: Config) -> Job:
    """A cell as a :class:`Job`; its cost (for balancing the workers) is its BitTokens steps,
    half as much again on the paper's range."""
    cost = float(np.mean([cfg.steps_for(t) * (1.5 if "@" in t else 1.0) for t in tasks]))
    return Job(_name(scheme, tasks, lr, seed), _cell, (scheme, tasks, lr, seed, cfg), cost=cost)


def _job_config(cfg: Config) -> Config:
    """The config a cell sees and its cache key holds: without the run's controls (how many
    workers, how many new cells per call), which change no result."""
    return replace(cfg, workers=FULL.workers, max_new_jobs=None)


def _workers(cfg: Config) -> int:
    """Worker processes: ``cfg.workers``, at most the cores this run may keep busy (one under
    ``icml26 reproduce --jobs 2`` on two cores)."""
    return max(1, min(cfg.workers, cpu_share()))


def _runner(
    cfg: Config, out_dir: Path, progress: bool | None, max_new_jobs: int | None
) -> JobRunner:
    """The cells' runner: results under ``out_dir/cache``, keyed by the config (less the run's
    controls) and :data:`CODE_VERSION`; at most ``max_new_jobs`` new cells."""
    return JobRunner(
        out_dir / "cache",
        {"config": config_dict(_job_config(cfg)), "code": CODE_VERSION},
        workers=_workers(cfg),
        progress=progress,
        max_new_jobs=max_new_jobs,
        desc="bittokens cells",
    )


def _choose_lr(runs: list[dict[str, Any]]) -> tuple[dict[str, Any], str | None]:
    """The run with the best validation score; a tie is resolved towards the first rate of the
    grid and reported (returned as a note) rather than chosen silently."""
    best = max(r["val"] for r in runs)
    tied = [r for r in runs if r["val"] == best]
    note = None
    if len(tied) > 1:
        note = (
            f"{runs[0]['scheme']} on {'+'.join(runs[0]['test'])}: validation scores tied at "
            f"{best:.4g} for lr {', '.join(format(r['lr'], 'g') for r in tied)}; "
            f"chose {tied[0]['lr']:g}, the first of the grid"
        )
    return tied[0], note


def _groups(cfg: Config) -> list[tuple[str, ...]]:
    groups: list[tuple[str, ...]] = [(t,) for t in cfg.tasks] if cfg.solo else []
    return groups + ([cfg.tasks] if cfg.multitask else [])


def _grid_jobs(cfg: Config, groups: list[tuple[str, ...]]) -> list[Job]:
    """Seed 0 at every rate of the grid (with a one-rate grid: every seed at that rate)."""
    job_cfg = _job_config(cfg)
    cells = [(s, g, lr, cfg.seeds[0]) for lr in cfg.lrs for g in groups for s in cfg.schemes]
    if len(cfg.lrs) == 1:
        cells += [
            (s, g, cfg.lrs[0], seed) for g in groups for s in cfg.schemes for seed in cfg.seeds[1:]
        ]
    return [_job(*cell, job_cfg) for cell in cells]


def _chosen(
    cfg: Config, groups: list[tuple[str, ...]], grid: dict[str, dict[str, Any]]
) -> tuple[dict[tuple, dict[str, Any]], list[str]]:
    """Per (group, scheme) the seed-0 run of the best validation rate, and tie notes."""
    chosen: dict[tuple, dict[str, Any]] = {}
    notes: list[str] = []
    for g in groups:
        for s in cfg.schemes:
            best, note = _choose_lr([grid[_name(s, g, lr, cfg.seeds[0])] for lr in cfg.lrs])
            if note and len(cfg.lrs) > 1:
                notes.append(note)
            chosen[(g, s)] = best
    return chosen, notes


def _seed_jobs(
    cfg: Config, groups: list[tuple[str, ...]], chosen: dict[tuple, dict[str, Any]]
) -> list[Job]:
    """The other seeds at each (group, scheme)'s chosen rate (none with a one-rate grid)."""
    if len(cfg.lrs) == 1:
        return []
    job_cfg = _job_config(cfg)
    return [
        _job(s, g, chosen[(g, s)]["lr"], seed, job_cfg)
        for g in groups
        for s in cfg.schemes
        for seed in cfg.seeds[1:]
    ]


def _runs(
    cfg: Config,
    groups: list[tuple[str, ...]],
    cells: dict[str, dict[str, Any]],
    chosen: dict[tuple, dict[str, Any]],
) -> list[dict[str, list[dict]]]:
    """Per group and scheme: seed 0 at the chosen rate, then the other seeds at that rate."""
    out = []
    for g in groups:
        per: dict[str, list[dict]] = {}
        for s in cfg.schemes:
            best = chosen[(g, s)]
            per[s] = [best] + [cells[_name(s, g, best["lr"], seed)] for seed in cfg.seeds[1:]]
        out.append(per)
    return out


def _table(title: str, tasks: tuple[str, ...], final: dict[str, list[dict]]) -> ResultTable:
    cols = [
        *tasks,
        "tokens/number",
        "params (non-emb.)",
        "params (all)",
        "best lr",
        "train s per seed",
    ]
    table = ResultTable(title, cols)
    for s, runs in final.items():
        cells: dict[str, Any] = {t: [r["test"][t] for r in runs] for t in tasks}
        cells["tokens/number"] = runs[0]["tokens_per_number"]
        cells["params (non-emb.)"] = runs[0]["params"]
        cells["params (all)"] = runs[0]["params_all"]
        lr = runs[0]["lr"]
        cells["best lr"] = (
            "/".join(f"{v:g}" for v in lr.values()) if isinstance(lr, dict) else f"{lr:g}"
        )
        cells["train s per seed"] = Estimate.of([r["train_seconds"] for r in runs])
        table.add_row(s, cells)
    return table


def _seed_table(
    tasks: tuple[str, ...], final: dict[str, list[dict]], seeds: tuple[int, ...]
) -> ResultTable:
    """Test score of every (scheme, task, seed) cell and the rate it ran at (issue 13: the
    item-1 table is scheme x task x seed, not only the mean)."""
    table = ResultTable(
        "Test score per seed (scheme x task x seed)", [*(f"seed {s}" for s in seeds), "lr"]
    )
    for s, runs in final.items():
        for t in tasks:
            lr = runs[0]["lr"]
            cells: dict[str, Any] = {
                f"seed {seed}": float(r["test"][t]) for seed, r in zip(seeds, runs)
            }
            cells["lr"] = f"{lr[t] if isinstance(lr, dict) else lr:g}"
            table.add_row(f"{s}-{t}", cells, label=f"{s} {t}")
    return table


def _bits_table(tasks: tuple[str, ...], final: dict[str, list[dict]]) -> ResultTable:
    """log-sMAPE next to the per-field bit accuracy of the decoded answers (numeric tasks)."""
    table = ResultTable(
        "Numeric answers: log-sMAPE and per-field bit accuracy (test, mean ± s.e. over seeds)",
        ["log-sMAPE", "sign", "exponent", "mantissa"],
    )
    for t in tasks:
        if TASKS[t.partition("@")[0]] != "log_smape":
            continue
        for s, runs in final.items():
            bits = [r["bits"][t] for r in runs]
            cells = {f: [b[f] for b in bits] for f in ("sign", "exponent", "mantissa")}
            table.add_row(
                f"{s}-{t}", {"log-sMAPE": [r["test"][t] for r in runs], **cells}, label=f"{s} {t}"
            )
    table.note = (
        "sign: fraction of answers with the right sign bit; exponent / mantissa: fraction of the "
        "11 / 52 bits equal to the target's float64 bits (a missing or non-finite answer counts "
        "as all bits wrong)."
    )
    return table


def _budget_table(tasks: tuple[str, ...], final: dict[str, list[dict]]) -> ResultTable:
    """Tokens, steps and FLOPs per (scheme, task): the equal-token budget made visible."""
    table = ResultTable(
        "Equal token budget per task: tokens, steps, FLOPs",
        ["tokens", "steps", "FLOPs", "tokens/example", "train s"],
    )
    for t in tasks:
        for s, runs in final.items():
            b = runs[0]["budget"][t]
            cells = {
                "tokens": float(b["tokens"]),
                "steps": int(b["steps"]),
                "FLOPs": float(b["flops"]),
                "tokens/example": float(b["tokens_per_example"]),
                "train s": [r["budget"][t]["train_seconds"] for r in runs],
            }
            table.add_row(f"{s}-{t}", cells, label=f"{s} {t}")
    table.note = (
        "tokens = steps x batch x mean tokens per training example (prompt, answer, <bos>, "
        "<eos>); FLOPs = 6 N tokens with N the non-embedding parameters. The budget of a task "
        "is BitTokens' steps x batch x its tokens per example; every scheme gets the steps that "
        "spend it."
    )
    return table


_NOTE = (
    "minmax/sorting: exact match; add/mult/div: log-sMAPE; interval: normalised accuracy; "
    "@paper: up to 15 significant digits in [1e-14, 1e15). Mean ± s.e. over seeds on a disjoint "
    "decimal test split, equal token budget per task; lr chosen on validation with seed 0."
)


def _merge_solo(
    tasks: tuple[str, ...], grids: list[dict[str, list[dict]]]
) -> dict[str, list[dict]]:
    """One record per (scheme, seed) whose test/curve/cost fields gather the solo task runs."""
    merged: dict[str, list[dict]] = {}
    for s in grids[0]:
        rows = []
        for k in range(len(grids[0][s])):
            parts = [g[s][k] for g in grids]
            rows.append(
                {
                    "scheme": s,
                    "lr": {t: p["lr"] for t, p in zip(tasks, parts)},
                    "test": {t: p["test"][t] for t, p in zip(tasks, parts)},
                    "bits": {t: p.get("bits", {}).get(t) for t, p in zip(tasks, parts)},
                    "budget": {
                        t: {k: p.get(k) for k in ("steps", "tokens", "flops", "tokens_per_example")}
                        | {"train_seconds": p["train_seconds"]}
                        for t, p in zip(tasks, parts)
                    },
                    "curve": [
                        (c[0][0], {t: c[i][1][t] for i, t in enumerate(tasks)})
                        for c in zip(*(p["curve"] for p in parts))
                    ],
                    "train_seconds": sum(p["train_seconds"] for p in parts),
                    "cpu_seconds": sum(p.get("cpu_seconds", 0.0) for p in parts),
                    "tokens_per_number": float(np.mean([p["tokens_per_number"] for p in parts])),
                    "params": parts[0]["params"],
                    "params_all": parts[0]["params_all"],
                }
            )
        merged[s] = rows
    return merged


def _plot(out_dir: Path, tasks: tuple[str, ...], final: dict[str, list[dict]], name: str) -> Path:
    plt = require_matplotlib("plot", "bittokens")
    fig, axes = plt.subplots(1, len(tasks), figsize=(4 * len(tasks), 3.2), squeeze=False)
    for ax, t in zip(axes[0], tasks):
        for s, runs in final.items():
            steps = [c[0] for c in runs[0]["curve"]]
            vals = np.array([[c[1][t] for c in r["curve"]] for r in runs])
            ax.errorbar(
                steps,
                vals.mean(0),
                yerr=vals.std(0) / np.sqrt(len(runs)),
                label=s,
                marker="o",
                ms=3,
            )
        ax.set_title(f"{t} ({TASKS[t.partition('@')[0]]}, validation)", fontsize=9)
        ax.set_xlabel("fraction of the token budget")
        ax.set_ylim(-0.05, 1.05)
    axes[0][0].set_ylabel("score")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    path = out_dir / name
    save_figure(fig, path, dpi=120)
    return path


def _noise_plot(out_dir: Path, amps: np.ndarray, rates: np.ndarray) -> Path:
    plt = require_matplotlib("plot", "bittokens")
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    theory = np.where(amps <= 1, 1.0, (1 - (amps - 1) / (2 * amps)) ** 64)
    ax.plot(amps, rates, "o-", label="measured (20k float64)")
    ax.plot(amps, theory, "--", label="(1 - (a-1)/2a)^64")
    ax.set_xlabel("noise amplitude a: logits 2b-1+U(-a,a)")
    ax.set_ylabel("bit-exact decode rate")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out_dir / "noise_exact_rate.png"
    save_figure(fig, path, dpi=120)
    return path


def reproduce(config: Config, out_dir: Path, progress: bool | None) -> ExperimentResult:
    """Run the comparison; see the module docstring for the protocol.

    The grid's cells run first, then the other seeds at each (scheme, task)'s chosen rate, both
    on one :class:`icml26_shared.jobs.JobRunner` (cached under ``out_dir/cache``: a stopped run
    resumes, ``--set max_new_jobs=k`` runs k new cells per call).
    """
    cfg = config
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    groups = _groups(cfg)
    load_before, wall = os.getloadavg(), time.perf_counter()
    grid = _grid_jobs(cfg, groups)
    runner = _runner(cfg, out_dir, progress, cfg.max_new_jobs)
    ran = len(grid) - len(runner.cached(grid))  # all of them, unless the runner pauses
    cells = runner.run(grid)
    chosen, tie_notes = _chosen(cfg, groups, cells)
    seeds = _seed_jobs(cfg, groups, chosen)
    left = None if cfg.max_new_jobs is None else cfg.max_new_jobs - ran  # per call, both stages
    todo = len(seeds) - len(runner.cached(seeds))
    if left == 0 and todo:
        raise RunPaused(ran, todo)
    cells |= _runner(cfg, out_dir, progress, left or None).run(seeds)
    wall = time.perf_counter() - wall
    load = (load_before[0], os.getloadavg()[0])
    result = ExperimentResult(
        "bittokens", "BitTokens vs xVal and single-digit tokens on arithmetic"
    )
    grids = _runs(cfg, groups, cells, chosen)
    final: dict[str, list[dict]] = {s: [] for s in cfg.schemes}
    if cfg.solo:
        final = _merge_solo(cfg.tasks, grids[: len(cfg.tasks)])
        table = _table(
            f"Test scores, solo (one model per task), {len(cfg.seeds)} seeds, equal tokens, "
            f"batch {cfg.batch_size}",
            cfg.tasks,
            final,
        )
        table.note = (
            _NOTE
            if len(cfg.lrs) > 1
            else _NOTE.replace(
                "lr chosen on validation with seed 0", "one lr for every scheme (see the notes)"
            )
        )
        result.tables.append(table)
        if any(TASKS[t.partition("@")[0]] == "log_smape" for t in cfg.tasks):
            result.tables.append(_bits_table(cfg.tasks, final))
        result.tables.append(_budget_table(cfg.tasks, final))
        result.tables.append(_seed_table(cfg.tasks, final, cfg.seeds))
        result.figures.append(_plot(out_dir, cfg.tasks, final, "learning_curves.png"))
    if cfg.multitask:
        multi = grids[-1]
        table = _table(
            f"Test scores, multi-task (one model for all tasks), {len(cfg.seeds)} seeds, "
            f"batch {cfg.batch_size}",
            cfg.tasks,
            multi,
        )
        table.note = _NOTE
        result.tables.append(table)
        result.figures.append(_plot(out_dir, cfg.tasks, multi, "learning_curves_multitask.png"))
        if not cfg.solo:
            final = multi
    _finish(result, cfg, out_dir, final, cells, tie_notes, (wall, *load))
    return result


def _finish(
    result: ExperimentResult,
    cfg: Config,
    out_dir: Path,
    final: dict[str, list[dict]],
    cells: dict[str, dict[str, Any]],
    tie_notes: list[str],
    timing: tuple[float, float, float],
) -> None:
    """The noise table, the checks, the headline and the notes (``timing``: the cells' wall
    seconds in this call and the 1-minute load average before and after)."""
    mode = "solo" if cfg.solo else "multi-task"

    amps = np.round(np.arange(0.5, 1.51, 0.1), 2)
    rates = noise_exact_rate(amps)
    noise = ResultTable(
        "Bit-exact decode rate under logit noise 2b-1+U(-a, a)", [f"a={a:g}" for a in amps]
    )
    noise.add_row(
        "decode",
        {f"a={a:g}": float(r) for a, r in zip(amps, rates)},
        label="bittokens decode",
    )
    result.tables.append(noise)
    result.figures.append(_noise_plot(out_dir, amps, rates))

    def mean(s: str, t: str) -> float:
        return float(np.mean([r["test"][t] for r in final[s]]))

    def bit(s: str, t: str, f: str) -> float:
        return float(np.mean([r["bits"][t][f] for r in final[s]]))

    params = [final[s][0]["params"] for s in cfg.schemes]
    result.check(
        "params",
        max(params) / min(params),
        "<=",
        1.1,
        "params within 10% (non-embedding)",
    )
    result.check("noise", float(np.min(rates[amps <= 1.0])), ">=", 1.0, "noise a<=1: all exact")
    if "minmax" in cfg.tasks:
        result.check(
            "a-minmax",
            mean("bittokens", "minmax"),
            ">=",
            0.95,
            "(a) bittokens minmax exact >= 0.95",
        )
    if "mult" in cfg.tasks:
        steps = final["bittokens"][0]["budget"]["mult"]["steps"]
        result.check(
            "c-mult",
            mean("bittokens", "mult"),
            ">=",
            0.8,
            f"(c) bittokens mult log-sMAPE >= 0.8 ({steps} steps)",
        )
        result.check(
            "c-sign",
            bit("bittokens", "mult", "sign"),
            ">=",
            0.95,
            f"(c) bittokens mult sign accuracy >= 0.95 ({steps} steps)",
        )
    for t in ("add", "mult"):
        if t in cfg.tasks and "xval" in final:
            bar = mean("xval", t) + 0.1
            result.check(
                f"d-{t}", mean("bittokens", t), ">=", bar, f"(d) bittokens {t} >= xval + 0.1"
            )
    for t in ("add@paper", "mult@paper"):
        if t in cfg.tasks and "single-digit" in final:
            result.check(
                f"e-{t.replace('@', '-')}",
                mean("bittokens", t),
                ">",
                mean("single-digit", t),
                f"(e) bittokens {t} > single-digit (equal tokens)",
            )
    cpu = sum(float(c.get("cpu_seconds") or 0.0) for c in cells.values())  # grid included
    cell_wall = sum(float(c.get("wall_seconds") or 0.0) for c in cells.values())
    wall, load_before, load_after = timing
    workers = _workers(cfg)
    result.headline = (
        "; ".join(
            f"{t}: " + ", ".join(f"{s} {mean(s, t):.3f}" for s in cfg.schemes) for t in cfg.tasks
        )
        + f" (test, {mode}, equal tokens per task, mean of {len(cfg.seeds)} seeds)"
    )
    result.notes.append(
        f"Wall time of the training cells {wall:.0f} s in this call on {workers} worker "
        f"process(es) (cells already cached take none), {cell_wall:.0f} s summed over the "
        f"{len(cells)} cells, {cpu:.0f} CPU-seconds in all (one torch thread per worker; "
        f"wall/CPU shows the load); load average (1 min) {load_before:.1f}->{load_after:.1f}. "
        "The quick preset is sized for at most 4 min of cells on 2 workers, the full one for "
        "30 min; timing is reported here, not checked."
    )
    if len(cfg.lrs) == 1:
        result.notes.append(
            f"One learning rate for every scheme, {cfg.lrs[0]:g} (Muon's rate in the paper's "
            "code), fixed before this run (no grid in this mode); it was not tuned per scheme."
        )
    if len(cfg.lrs) == 1:  # the quick preset's one-rate mode
        result.notes.append(
            "Quick mode is sized for a few minutes: MinMax on the small range, "
            f"{cfg.steps_for(cfg.tasks[0])} BitTokens steps, {len(cfg.seeds)} seeds, one rate. "
            "Check (a) is quick-sized here (fewer steps than the full mode's "
            f"{FULL.steps_for('minmax')}, one rate, 2 seeds); Mult (c, d), Add (d) and the "
            "paper's range (e) need the full mode's budget and run there only."
        )
    if len(cfg.lrs) > 1:
        result.notes.append(
            f"Learning rate per (scheme, task) chosen on validation (seed 0) from "
            f"{{{', '.join(f'{v:g}' for v in cfg.lrs)}}}, the same grid for every scheme."
        )
    result.notes += tie_notes or (
        ["No validation ties: every rate choice had a unique best score."]
        if len(cfg.lrs) > 1
        else []
    )
    result.notes.append(
        "Training: Muon (lr on the blocks' matrices) with Adam on heads (0.2 lr), token "
        "embeddings (15 lr), biases and norms (lr); no weight decay or clipping; 5% warm-up, "
        "cosine to 10%. Mult: BitTokens on binary-uniform operands, the peers on decimal "
        "operands, each with a curriculum over its operands' significant bits / digits; "
        "decimal test data for all."
    )
    result.notes.append(
        "Number heads sized for parameter parity: BitTokens Linear(d, 64) (the released default), "
        "xVal MLP d->2d->1 (the xVal paper's 4d would put it 16% above the digit baselines), "
        "FoNE Linear(d, 2K+1) with K = 21 places. "
        "Subword's 1113 number tokens add a 142k-row embedding table (see params (all))."
    )


EXPERIMENT = Experiment(
    "bittokens",
    "BitTokens vs xVal and single-digit tokens on MinMax/Add/Mult (Muon, equal token budgets)",
    reproduce,
    QUICK,
    FULL,
)
