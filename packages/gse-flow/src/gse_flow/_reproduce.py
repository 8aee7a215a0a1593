"""``python -m gse_flow reproduce [--quick]``: charged N-body, GSE-Flow vs the baselines.

Quick (≤ 4 minutes): 500/64 train/test windows, one seed, 150 steps of batch 16, four
trainings. Full (issue 14 item 2, ≤ 30 minutes of 2 CPU cores): 3000/200/500
train/validation/test windows, ``STEPS_FULL`` steps of batch 32 for every network, one seed
(``GSE_FLOW_SEEDS=0,1,2`` for three: they do not fit the budget), toy MD only with
``GSE_FLOW_TOY_MD=1``, the ase LJ13 cluster (either mode) only with ``GSE_FLOW_LJ13=1``.
The full mode caches each trained model under ``OUT/cache`` and, with
``GSE_FLOW_MAX_STAGES=k``, stops after k new expensive stages (exit 3): rerun the same
command to resume, so the run fits in short locked chunks. The flow's prior is ``"cv"`` (chosen
on validation in 0.2.0: minADE@5 0.465 vs 0.631 for ``"last"``); its skip data scale ρ is
``DATA_SCALE`` (chosen on validation, ``benchmarks/diag_rho.py``). All networks are trained
by the same trainer for the same number of steps and batch size; the EGNN's width is chosen
so its parameter count is within ±20% of GSE-Flow's (the deterministic GNN is the same
network, so equal).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import pickle
import sys
import time
from pathlib import Path

import equinox as eqx
import jax
import numpy as np
import optax

from icml26_shared.experiment import (
    Experiment,
    ExperimentResult,
    ResultTable,
    require_matplotlib,
    save_figure,
)
from icml26_shared.experiment import progress as progress_bar

from ._baselines import EGNN, EquivariantGNN, constant_velocity, count_parameters
from ._data import Windows, nbody_windows, toy_md_windows
from ._evaluate import energy_score, evaluate, spread_skill
from ._flow import (
    enhance,
    flow_config,
    flow_matching_loss,
    mse_loss,
    noise_pass_through,
    sample,
)
from ._model import GSEFlow
from ._train import predict, train

__all__ = ["EXPERIMENT", "reproduce"]

EULER_STEPS = (1, 2, 5, 10, 20)
HEUN_STEPS = (5, 10)


# ρ of the "x1" skip (GSEFlow(data_scale=...)), chosen on validation minADE@5 by
# benchmarks/diag_rho.py (README, "Choice of ρ"); the deterministic GNN keeps ρ = 1 (no flow).
DATA_SCALE = 0.25


def _config(quick: bool) -> dict:
    if quick:
        return dict(
            n_train=500,
            n_val=100,
            n_test=64,
            n_sweep=16,
            n_pass=16,
            priors=("cv",),  # chosen on validation in 0.2.0 ("cv" 0.465 vs "last" 0.631)
            seeds=(0,),
            steps=150,
            batch=16,
            md=False,
            cache=False,
        )
    seeds = tuple(int(v) for v in os.environ.get("GSE_FLOW_SEEDS", "0").split(","))
    return dict(
        n_train=3000,
        n_val=200,
        n_test=500,
        n_sweep=100,
        n_pass=32,
        priors=("cv",),
        seeds=seeds,
        steps=STEPS_FULL,
        batch=32,
        md=os.environ.get("GSE_FLOW_TOY_MD", "0") == "1",
        cache=True,
    )


# the full (issue 14 item 2) budget: every network trains STEPS_FULL steps of batch 32 on 3000
# windows; one seed fits the <= 30-minute CPU budget, three do not (README)
STEPS_FULL = 500


def _matched_egnn(target: int, kw: dict, vel_scale: float, key: jax.Array) -> EGNN:
    best = None
    for hidden in (8, 12, 16, 20, 24, 28, 32, 40, 48, 56, 64):
        model = EGNN(
            n_history=kw["n_history"],
            n_future=kw["n_future"],
            node_attr_dim=kw["node_attr_dim"],
            hidden=hidden,
            n_layers=4,
            length_scale=vel_scale,
            key=key,
        )
        gap = abs(count_parameters(model) - target)
        if best is None or gap < best[0]:
            best = (gap, model)
    return best[1]


def _lr(steps: int) -> optax.GradientTransformation:
    """Adam, warm-up + cosine schedule, global-norm gradient clipping (every model)."""
    return optax.chain(
        optax.clip_by_global_norm(1.0),
        optax.adam(optax.warmup_cosine_decay_schedule(0.0, 2e-3, max(steps // 20, 1), steps, 1e-5)),
    )


class Incomplete(SystemExit):
    """Raised when ``GSE_FLOW_MAX_STAGES`` new stages have run: rerun to resume."""


class _Stages:
    """Trained models and results cached under ``out_dir/cache`` (full mode), so a run cut
    into chunks (``GSE_FLOW_MAX_STAGES=k``: at most k new stages per process) resumes where
    it stopped; each stage's own wall time is kept, and the sum is the run's compute time."""

    def __init__(self, out_dir: Path, cfg: dict, enabled: bool):
        self.enabled = enabled
        self.dir = Path(out_dir) / "cache"
        tag = json.dumps({k: v for k, v in cfg.items() if k != "seeds"}, sort_keys=True)
        self.tag = hashlib.sha1(f"{tag} rho={DATA_SCALE}".encode()).hexdigest()[:10]
        limit = os.environ.get("GSE_FLOW_MAX_STAGES")
        self.left = int(limit) if (limit and enabled) else None
        self.seconds: dict[str, float] = {}

    def _path(self, name: str, ext: str) -> Path:
        return self.dir / f"{name}-{self.tag}.{ext}"

    def _tick(self) -> None:
        if self.left is not None:
            if self.left <= 0:
                print(
                    "reproduce: stage limit reached (GSE_FLOW_MAX_STAGES); rerun to resume",
                    file=sys.stderr,
                    flush=True,
                )
                raise Incomplete(3)
            self.left -= 1

    def model(self, name: str, like, build, *, cheap: bool = False):
        """``build()`` (a trained model) or its cached leaves loaded into ``like``
        (``cheap`` stages do not count towards ``GSE_FLOW_MAX_STAGES``)."""
        path, meta = self._path(name, "eqx"), self._path(name, "json")
        if self.enabled and path.exists() and meta.exists():
            self.seconds[name] = json.loads(meta.read_text())["seconds"]
            return eqx.tree_deserialise_leaves(path, like)
        if not cheap:
            self._tick()
        t0 = time.perf_counter()
        model = build()
        self.seconds[name] = time.perf_counter() - t0
        if self.enabled:
            self.dir.mkdir(parents=True, exist_ok=True)
            eqx.tree_serialise_leaves(path, model)
            meta.write_text(json.dumps({"seconds": self.seconds[name]}))
        return model

    def value(self, name: str, compute):
        """``compute()`` (picklable results) or its cached value."""
        path = self._path(name, "pkl")
        if self.enabled and path.exists():
            value, self.seconds[name] = pickle.loads(path.read_bytes())
            return value
        self._tick()
        t0 = time.perf_counter()
        value = compute()
        self.seconds[name] = time.perf_counter() - t0
        if self.enabled:
            self.dir.mkdir(parents=True, exist_ok=True)
            path.write_bytes(pickle.dumps((value, self.seconds[name])))
        return value


def _one_seed(seed: int, cfg: dict, data: dict, show: bool, stages: _Stages) -> dict:
    tr, va, te = data["train"], data["val"], data["test"]
    key = jax.random.PRNGKey(seed)
    k = jax.random.split(key, 8)
    steps, batch = cfg["steps"], cfg["batch"]
    out: dict = {"val": {}}

    def fit(model, windows, key, loss_fn=flow_matching_loss):
        def build():
            return train(
                model,
                windows,
                _lr(steps),
                steps,
                key=key,
                batch_size=batch,
                loss_fn=loss_fn,
                progress=show,
            ).model

        return build

    # the prior ("last" or "cv", each with its own residual σ_p) is chosen on validation
    vsub = va.take(np.arange(min(cfg["n_select"], va.n_windows))) if "n_select" in cfg else va
    flows = {}
    for prior in cfg["priors"]:
        kw_p = flow_config(tr, prior)
        init = GSEFlow(key=k[0], data_scale=DATA_SCALE, **kw_p)
        flows[prior] = stages.model(f"s{seed}-flow-{prior}", init, fit(init, tr, k[1]))
        if len(cfg["priors"]) > 1:
            sv = sample(
                flows[prior], vsub.history, k[5], node_attr=vsub.node_attr, edges=vsub.edges, k=5
            )
            out["val"][prior] = evaluate(sv, vsub.future)["min_ade"]
        else:
            out["val"][prior] = float("nan")
    prior = min(cfg["priors"], key=lambda p_: np.nan_to_num(out["val"][p_], nan=0.0))
    out["prior"] = prior
    flow = flows[prior]
    kw = flow_config(tr, prior)
    vel_scale = kw["length_scale"]
    det0 = EquivariantGNN(key=k[0], **kw)
    det = stages.model(f"s{seed}-det", det0, fit(det0, tr, k[2], mse_loss))
    egnn0 = _matched_egnn(count_parameters(flow), kw, vel_scale, k[3])
    egnn = stages.model(f"s{seed}-egnn", egnn0, fit(egnn0, tr, k[4], mse_loss), cheap=True)
    # enhance mode around the trained EGNN
    prior_tr, sigma_e = enhance(lambda w: predict(egnn, w), tr, validation=va, per_frame=True)
    kw_e = dict(kw, sigma=sigma_e, prior="last")
    flow_e0 = GSEFlow(key=k[6], data_scale=DATA_SCALE, **kw_e)
    flow_e = stages.model(f"s{seed}-enhance", flow_e0, fit(flow_e0, prior_tr, k[7]))
    out["params"] = {
        "flow": count_parameters(flow),
        "det": count_parameters(det),
        "egnn": count_parameters(egnn),
    }

    def evaluation() -> dict:
        res: dict = {}
        cv = constant_velocity(te.history, te.future.shape[1])
        res["cv"] = evaluate(cv[:, None], te.future)
        eg_te = predict(egnn, te)  # also the enhanced flow's prior mean below
        res["egnn"] = evaluate(eg_te[:, None], te.future)
        res["det"] = evaluate(predict(det, te)[:, None], te.future)
        t0 = time.perf_counter()
        s = sample(flow, te.history, k[5], node_attr=te.node_attr, edges=te.edges, k=5)
        res["flow_sample_s"] = time.perf_counter() - t0
        res["flow"] = evaluate(s, te.future)
        res["flow"]["energy"] = energy_score(s, te.future)
        res["flow"]["spread_skill"] = spread_skill(s, te.future)
        s_e = sample(
            flow_e,
            te.history,
            k[5],
            node_attr=te.node_attr,
            edges=te.edges,
            k=5,
            prior_mean=eg_te,
        )
        res["enhanced"] = evaluate(s_e, te.future)
        psub = te.take(np.arange(cfg["n_pass"]))
        res["pass"] = {n: noise_pass_through(flow, psub, k[6], n_steps=n) for n in (1, 10)}
        # error vs ODE steps on a subset
        sub = te.take(np.arange(cfg["n_sweep"]))
        sweep = {}
        for solver, grid in (("euler", EULER_STEPS), ("heun", HEUN_STEPS)):
            for n in grid:
                ss = sample(
                    flow,
                    sub.history,
                    k[5],
                    node_attr=sub.node_attr,
                    edges=sub.edges,
                    k=5,
                    n_steps=n,
                    solver=solver,
                )
                sweep[(solver, n)] = evaluate(ss, sub.future)["min_ade"]
        res["sweep"] = sweep
        return res

    out.update(stages.value(f"s{seed}-eval", evaluation))
    return out


def _small_table(
    cfg: dict, show: bool, title: str, tr: Windows, te: Windows, cutoff: float
) -> ResultTable:
    """CV, the parameter-matched EGNN and GSE-Flow (prior "cv", ρ = ``DATA_SCALE``), each
    trained ``cfg["steps"] // 2`` steps by the same trainer: the N-body protocol, smaller."""
    kw = flow_config(tr, "cv")
    vel_scale = kw["length_scale"]
    kw["cutoff"] = cutoff
    key = jax.random.PRNGKey(0)
    steps = cfg["steps"] // 2
    t0 = time.perf_counter()
    flow = train(
        GSEFlow(key=key, data_scale=DATA_SCALE, **kw),
        tr,
        _lr(steps),
        steps,
        key=key,
        batch_size=cfg["batch"],
        progress=show,
    ).model
    egnn = train(
        _matched_egnn(count_parameters(flow), kw, vel_scale, key),
        tr,
        _lr(steps),
        steps,
        key=key,
        batch_size=cfg["batch"],
        loss_fn=mse_loss,
        progress=show,
    ).model
    F = te.future.shape[1]
    cv = evaluate(constant_velocity(te.history, F)[:, None], te.future)
    eg = evaluate(predict(egnn, te)[:, None], te.future)
    fl = evaluate(sample(flow, te.history, key, node_attr=te.node_attr, edges=te.edges), te.future)
    table = ResultTable(
        f"{title} ({len(tr.history)} train / {len(te.history)} test windows, "
        f"{tr.history.shape[1]} + {F} frames, {steps} steps × batch {cfg['batch']})",
        ["ADE", "FDE", "minADE@5", "minFDE@5", "params"],
        note=f"trained and evaluated in {time.perf_counter() - t0:.0f} s",
    )
    table.add_row("constant velocity", ADE=cv["ade"], FDE=cv["fde"], params=0)
    table.add_row("EGNN", ADE=eg["ade"], FDE=eg["fde"], params=count_parameters(egnn))
    table.add_row(
        "GSE-Flow (ours, recon.)",
        ADE=fl["ade"],
        FDE=fl["fde"],
        **{"minADE@5": fl["min_ade"], "minFDE@5": fl["min_fde"]},
        params=count_parameters(flow),
    )
    return table


def _toy_md(cfg: dict, show: bool) -> ResultTable:
    return _small_table(
        cfg,
        show,
        "Toy MD (21 atoms)",
        toy_md_windows(600, seed=10),
        toy_md_windows(100, seed=11),
        3.0,
    )


def _lj13(cfg: dict, show: bool) -> ResultTable:
    """LJ13 with ase (``GSE_FLOW_LJ13=1``; ≈ 2.4 ms per MD step, so ≈ 90 s of simulation)."""
    from ._lj13 import lj13_windows

    tr = lj13_windows(300, n_trajectories=3, seed=10)
    te = lj13_windows(64, n_trajectories=2, spacing=30, seed=11)
    return _small_table(cfg, show, "LJ13 cluster (ase Langevin, kT = 0.3)", tr, te, 3.0)


def reproduce(quick: bool, out_dir: Path, progress: bool) -> ExperimentResult:
    """Run the N-body comparison (and toy MD in full mode); see the module docstring."""
    cfg = _config(quick)
    result = ExperimentResult(
        "gse-flow", "Equivariant flow matching vs baselines on charged N-body"
    )
    runs = []
    stages = _Stages(out_dir, cfg, cfg["cache"])
    for seed in progress_bar(cfg["seeds"], enabled=progress, desc="seeds"):
        data = {
            "train": nbody_windows(cfg["n_train"], seed=100 + seed),
            "val": nbody_windows(cfg["n_val"], seed=200 + seed),
            "test": nbody_windows(cfg["n_test"], seed=300 + seed),
        }
        runs.append(_one_seed(seed, cfg, data, progress, stages))

    def col(name: str, metric: str) -> list[float]:
        return [r[name][metric] for r in runs]

    n = runs[0]["params"]
    table = ResultTable(
        f"Charged N-body ({cfg['n_train']} train windows, 10 + 20 frames, {len(runs)} seed(s), "
        f"{cfg['steps']} steps × batch {cfg['batch']})",
        ["ADE", "FDE", "minADE@5", "minFDE@5", "mean-ADE", "params"],
        note="ADE/FDE of GSE-Flow average over the K = 5 samples; mean-ADE is the ADE of the "
        "sample mean; 10 Euler steps.",
    )
    table.add_row("constant velocity", ADE=col("cv", "ade"), FDE=col("cv", "fde"), params=0)
    table.add_row("EGNN", ADE=col("egnn", "ade"), FDE=col("egnn", "fde"), params=n["egnn"])
    table.add_row(
        "equivariant GNN (det.)", ADE=col("det", "ade"), FDE=col("det", "fde"), params=n["det"]
    )
    for name, label in (
        ("flow", "GSE-Flow (ours, recon.)"),
        ("enhanced", "GSE-Flow enhance(EGNN)"),
    ):
        table.add_row(
            label,
            ADE=col(name, "ade"),
            FDE=col(name, "fde"),
            **{
                "minADE@5": col(name, "min_ade"),
                "minFDE@5": col(name, "min_fde"),
                "mean-ADE": col(name, "mean_ade"),
            },
            params=n["flow"],
        )
    result.tables.append(table)
    calib = ResultTable("GSE-Flow sample calibration (K = 5)", ["energy score", "spread/skill"])
    calib.add_row(
        "GSE-Flow",
        **{"energy score": col("flow", "energy"), "spread/skill": col("flow", "spread_skill")},
    )
    result.tables.append(calib)
    sweep = ResultTable(
        f"minADE@5 vs ODE steps ({cfg['n_sweep']} test windows)",
        [f"{s} {n}" for s, g in (("euler", EULER_STEPS), ("heun", HEUN_STEPS)) for n in g],
    )
    sweep.add_row(
        "GSE-Flow",
        **{f"{s} {n}": [r["sweep"][(s, n)] for r in runs] for (s, n) in runs[0]["sweep"]},
    )
    result.tables.append(sweep)
    if cfg["md"]:
        result.tables.append(_toy_md(cfg, progress))
    if os.environ.get("GSE_FLOW_LJ13", "0") == "1":  # read here, not in cfg: keeps cache tags
        result.tables.append(_lj13(cfg, progress))

    plt = require_matplotlib(package="gse-flow")
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for solver, grid, marker in (("euler", EULER_STEPS, "o"), ("heun", HEUN_STEPS, "s")):
        ys = [np.mean([r["sweep"][(solver, n)] for r in runs]) for n in grid]
        ax.plot(grid, ys, marker=marker, label=solver)
    ax.set_xscale("log")
    ax.set_xlabel("ODE steps")
    ax.set_ylabel("minADE@5")
    ax.set_title("GSE-Flow (reconstruction) on charged N-body")
    ax.legend()
    fig.tight_layout()
    path = Path(out_dir) / "error_vs_ode_steps.png"
    save_figure(fig, path, dpi=120)
    result.figures.append(path)

    m = lambda name, metric: float(np.mean(col(name, metric)))  # noqa: E731
    p = runs[0]["params"]
    e10 = np.mean([r["sweep"][("euler", 10)] for r in runs])
    e20 = np.mean([r["sweep"][("euler", 20)] for r in runs])
    euler_curve = [np.mean([r["sweep"][("euler", n)] for r in runs]) for n in EULER_STEPS]
    result.checks = {
        "params within ±20% (EGNN vs GSE-Flow)": abs(p["egnn"] - p["flow"]) <= 0.2 * p["flow"],
        "minADE@5 <= 0.8 x constant-velocity ADE": m("flow", "min_ade") <= 0.8 * m("cv", "ade"),
        "minADE@5 < EGNN ADE": m("flow", "min_ade") < m("egnn", "ade"),
        "minADE@5 <= deterministic GNN ADE": m("flow", "min_ade") <= m("det", "ade"),
        "enhance: minADE@5 >= 5% below EGNN ADE": m("enhanced", "min_ade")
        <= 0.95 * m("egnn", "ade"),
        "enhance: sample-mean ADE no worse than EGNN": m("enhanced", "mean_ade")
        <= m("egnn", "ade"),
        "10 Euler steps within 5% of 20": abs(e10 - e20) <= 0.05 * e20,
        "minADE@5 non-increasing in Euler steps (2% slack)": all(
            b <= 1.02 * a for a, b in itertools.pairwise(euler_curve)
        ),
    }
    result.headline = (
        f"N-body minADE@5 {m('flow', 'min_ade'):.3f} (GSE-Flow recon.) vs ADE CV "
        f"{m('cv', 'ade'):.3f}, EGNN {m('egnn', 'ade'):.3f}, det. GNN {m('det', 'ade'):.3f}; "
        f"enhance(EGNN) minADE@5 {m('enhanced', 'min_ade'):.3f}"
    )
    result.notes.append(
        "Our reconstruction of GSE-Flow from the abstract; not comparable to the paper's numbers."
    )
    if len(cfg["priors"]) == 1:
        result.notes.append(
            f"prior fixed to {cfg['priors'][0]!r} (chosen on validation in 0.2.0; no selection in this run)"
        )
    else:
        result.notes.append(
            "prior chosen on validation minADE@5 per seed: "
            + "; ".join(
                f"seed {i}: "
                + ", ".join(f"{p_} {v:.3f}" for p_, v in r["val"].items())
                + f" -> {r['prior']}"
                for i, r in zip(cfg["seeds"], runs)
            )
        )
    total = sum(stages.seconds.values())
    result.notes.append(
        f"flow sampler noise pass-through (seed 0, {cfg['n_pass']} test windows): "
        f"{runs[0]['pass'][1]:.3f} after 1 Euler step, {runs[0]['pass'][10]:.3f} after 10; "
        f"data_scale rho = {DATA_SCALE}"
    )
    result.notes.append(
        "stage wall times (s): "
        + ", ".join(f"{n} {t:.0f}" for n, t in stages.seconds.items())
        + f"; sum {total:.0f} s"
        + (" (cached stages: their own run's time)" if cfg["cache"] else "")
    )
    result.notes.append(
        f"seed 0: flow training {stages.seconds.get('s0-flow-' + runs[0]['prior'], float('nan')):.0f} s, "
        f"sampling {cfg['n_test']}×5 futures {runs[0]['flow_sample_s']:.0f} s"
    )
    return result


EXPERIMENT = Experiment(
    "gse-flow",
    "Equivariant flow matching (GSE-Flow, our reconstruction) vs CV, EGNN, det. GNN on N-body",
    reproduce,
)
