"""``python -m gse_flow reproduce [--quick]``: GSE-Flow against K-matched baselines on real
molecular dynamics (the shipped trajectories of :mod:`gse_flow.md`), N-body as a sanity check.

Data: MD17's molecules (ethanol, toluene, naphthalene) under GFN2-xTB at 500 K and alanine
dipeptide under amber14 + GBn2 at 300 K, Langevin thermostat, one frame per 5 fs; windows of
10 past + 20 future frames (GeoTDM's MD17 protocol), split 60/20/20 by contiguous blocks of
time (:func:`gse_flow.md_windows`). One trajectory per molecule: the seeds change every
network's initialisation, batches and sampling keys, not the data. Every method gives K = 5
futures per window:

* GSE-Flow (prior "cv", noise correlated along time ("walk"), ρ = 1 with σ_p the per-frame CV
  residual RMS);
* constant velocity, the deterministic GNN (the same network trained by MSE) and the EGNN,
  each plus Gaussian noise with one scale per future frame and node whose multiplier and
  structure (white or random walk along time) are chosen on validation by the energy score
  (:func:`gse_flow.fit_noise`);
* enhance(EGNN): the flow trained around 2-fold out-of-fold EGNN predictions (full mode).

Scores: minADE@5, minFDE@5, the energy score (a proper scoring rule) and the bond-length
Wasserstein-1 (:func:`gse_flow.bond_length_w1`, bonds from the topology, averaged over bonds),
mean ± s.e. over seeds; paired differences (baseline − GSE-Flow) with 95% intervals, a t
interval over the seeds' means (with fewer than 3 seeds: over the pooled test windows, or the
bonds for W1). Beside the samples: the noise-free (temperature-0) output and its Euler/Heun step
sweep. The full mode adds the charged N-body sanity check (noise-free flow vs det. GNN),
enhance(EGNN) and learning curves on the first molecule. :class:`Config` holds every size.

Run time is mostly XLA compilation (one per molecule and kind of network). The jobs run on
:class:`icml26_shared.jobs.JobRunner`: each kind in one single-threaded worker process, so
every seed after the first reuses its compiled code (the workers also share a temporary XLA
compilation cache); each job's result is cached under ``OUT/cache`` by the config and
``CODE_VERSION``, so a stopped run resumes, ``--set max_new_jobs=k`` runs at most k new jobs per
call (exit 3: run again) and more seeds or molecules reuse the earlier jobs.
"""

from __future__ import annotations

import functools
import itertools
import os
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from scipy import stats

from icml26_shared.config import config_dict
from icml26_shared.experiment import (
    Experiment,
    ExperimentResult,
    ResultTable,
    require_matplotlib,
    save_figure,
)
from icml26_shared.jobs import Job, JobRunner

from ._baselines import (
    EGNN,
    EquivariantGNN,
    constant_velocity,
    count_parameters,
    fit_noise,
    noisy_samples,
)
from ._data import Windows, nbody_windows
from ._evaluate import bond_length_w1, check_equivariance, window_scores
from ._flow import (
    TEMPERATURES,
    enhance,
    flow_config,
    flow_matching_loss,
    mse_loss,
    out_of_fold,
    sample_from_noise,
    sample_windows,
    select_temperature,
)
from ._layers import make_graph
from ._model import GSEFlow
from ._train import predict, train
from .md import MOLECULES, bond_lengths, md_trajectory, md_windows

__all__ = ["EXPERIMENT", "FULL", "QUICK", "Config", "reproduce"]

EULER_STEPS = (1, 2, 5, 10, 20)
HEUN_STEPS = (5, 10)
K = 5
METRICS = ("min_ade", "min_fde", "energy", "w1")
LABELS = {
    "min_ade": "minADE@5",
    "min_fde": "minFDE@5",
    "energy": "energy score",
    "w1": "bond W1 (mÅ)",
}
# K-matched baselines of the headline tables, in order
BASELINES = (("cv", "constant velocity + noise"), ("det", "det. GNN + noise"))
BASELINES += (("egnn", "EGNN + noise"),)
NAMES = {
    "ethanol": "Ethanol",
    "toluene": "Toluene",
    "naphthalene": "Naphthalene",
    "alanine_dipeptide": "Alanine dipeptide",
}
#: bins (Å) of the bond-length deviation histograms in the figure
DEV_BINS = np.linspace(-0.3, 0.3, 61)
#: the quick and full modes' time limits (s, alone on 2 cores), checked on the call's wall time
TIME_LIMIT = {"quick": 240.0, "full": 3600.0}


#: bumped when a job's result changes for the same config (the cache key's code part)
CODE_VERSION = 9


@dataclass(frozen=True)
class Config:
    """The sizes of the comparison (``--set key=value`` overrides any of them).

    Attributes:
        molecules: shipped trajectories of :data:`gse_flow.md.MOLECULES` in the comparison.
        seeds: network seeds (each: every network's initialisation, batches and sampling keys).
        md_train, md_val, md_test: the most windows per molecule of each block of time (evenly
            spaced within the block).
        md_history, md_future: frames of history and of future per window.
        nbody: run the charged N-body sanity check.
        nbody_train, nbody_test, nbody_history, nbody_future: its windows and frames.
        irreps, n_layers: the GSE network's hidden irreps and its number of layers.
        steps, batch: every network's training budget and batch size.
        enhance: train enhance(EGNN) on 2-fold out-of-fold EGNN predictions.
        select_temperatures: the validation grid that chooses GSE-Flow's temperature (empty:
            T = 1).
        euler_steps: Euler step counts of the noise-free step sweep (must include 10, the
            sampler's default; the step checks need 10 and 20).
        heun: add Heun's method to the noise-free step sweep.
        curve: learning curves of the det. GNN and the flow (first molecule, first seed).
        curve_budgets: their budgets (empty: 150 and 600 below ``steps``, ``steps`` and twice
            ``steps``; the plateau check reads the last two).
        max_new_jobs: run at most this many uncached jobs, then stop (exit 3: run again).
    """

    molecules: tuple[str, ...] = MOLECULES
    seeds: tuple[int, ...] = (0, 1, 2)
    md_train: int = 1000
    md_val: int = 96
    md_test: int = 128
    md_history: int = 10
    md_future: int = 20
    nbody: bool = True
    nbody_train: int = 1000
    nbody_test: int = 96
    nbody_history: int = 10
    nbody_future: int = 20
    irreps: str = "8x0e+4x1o"
    n_layers: int = 2
    steps: int = 600
    batch: int = 16
    enhance: bool = True
    select_temperatures: tuple[float, ...] = TEMPERATURES
    euler_steps: tuple[int, ...] = EULER_STEPS
    heun: bool = True
    curve: bool = False
    curve_budgets: tuple[int, ...] = ()
    max_new_jobs: int | None = None

    def __post_init__(self) -> None:
        if not self.seeds:
            raise ValueError("seeds must name at least one seed")
        if not self.molecules or len(set(self.molecules)) != len(self.molecules):
            raise ValueError(f"molecules must name distinct molecules, got {self.molecules}")
        for m in self.molecules:
            if m not in MOLECULES:
                raise ValueError(f"molecules must be among {', '.join(MOLECULES)}, got {m!r}")
        for name in ("md_train", "md_val", "md_test", "md_future", "n_layers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.md_history < 2:
            raise ValueError(f"md_history must be >= 2, got {self.md_history}")
        for name in ("nbody_train", "nbody_test", "nbody_history", "nbody_future", "steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if 10 not in self.euler_steps or min(self.euler_steps) < 1:
            raise ValueError(f"euler_steps must be >= 1 and include 10, got {self.euler_steps}")
        if self.batch < 1:
            raise ValueError(f"batch must be >= 1, got {self.batch}")
        if any(b < 1 for b in self.curve_budgets) or len(self.curve_budgets) == 1:
            raise ValueError(
                f"curve_budgets must be empty or >= 2 budgets >= 1, got {self.curve_budgets}"
            )
        if self.max_new_jobs is not None and self.max_new_jobs < 1:
            raise ValueError(f"max_new_jobs must be >= 1 or None, got {self.max_new_jobs}")

    def budgets(self) -> tuple[int, ...] | None:
        """The learning curves' budgets (None without curves)."""
        if not self.curve:
            return None
        if self.curve_budgets:
            return tuple(sorted(set(self.curve_budgets)))
        return tuple(
            sorted({b for b in (150, 600) if b < self.steps} | {self.steps, 2 * self.steps})
        )


FULL = Config()
#: one real molecule (ethanol), T = 1; N-body, enhance(EGNN) and the other molecules run in the
#: full mode
QUICK = Config(
    molecules=("ethanol",),
    md_train=300,
    md_val=32,
    md_test=32,
    nbody=False,
    steps=100,
    enhance=False,
    select_temperatures=(),
    euler_steps=(10, 20),
    heun=False,
)


def _job_cfg(config: Config) -> dict:
    """What a job reads of the config: everything but the seed and molecule lists and the run's
    own controls; the first seed (it runs the equivariance check) is part of it."""
    return dict(
        md=dict(
            caps=(config.md_train, config.md_val, config.md_test),
            H=config.md_history,
            F=config.md_future,
        ),
        nbody=dict(
            n_train=config.nbody_train,
            n_test=config.nbody_test,
            H=config.nbody_history,
            F=config.nbody_future,
        ),
        irreps=config.irreps,
        n_layers=config.n_layers,
        steps=config.steps,
        batch=config.batch,
        first_seed=config.seeds[0],
        enhance=config.enhance,
        select_temperatures=tuple(config.select_temperatures),
        euler_steps=tuple(sorted(config.euler_steps)),
        heun=config.heun,
        curve=config.budgets(),
    )


# ----------------------------------------------------------------------------- helpers
@functools.cache
def _lr(steps: int) -> optax.GradientTransformation:
    """Adam, warm-up + cosine schedule, global-norm clipping (every model; cached, so equal
    budgets reuse one compiled train step)."""
    return optax.chain(
        optax.clip_by_global_norm(1.0),
        optax.adam(optax.warmup_cosine_decay_schedule(0.0, 2e-3, max(steps // 20, 1), steps, 1e-5)),
    )


@functools.cache
def _md(molecule: str, H: int, F: int, caps: tuple[int, int, int]) -> dict[str, Windows]:
    """A molecule's windows, once per process (the jobs of one worker share their data)."""
    return md_windows(molecule, n_history=H, n_future=F, caps=caps)[0]


@functools.cache
def _bonds(molecule: str) -> np.ndarray:
    return md_trajectory(molecule)["bonds"]


def _data(cfg: dict, molecule: str) -> dict[str, Windows]:
    c = cfg["md"]
    return _md(molecule, c["H"], c["F"], tuple(c["caps"]))


@functools.cache
def _nbody_windows(n: int, H: int, F: int, seed: int) -> Windows:
    return nbody_windows(n, n_history=H, n_future=F, seed=seed)


def _nbody(cfg: dict, seed: int) -> dict[str, Windows]:
    c = cfg["nbody"]
    make = functools.partial(_nbody_windows, H=c["H"], F=c["F"])
    return {"train": make(c["n_train"], seed=100), "test": make(c["n_test"], seed=300 + seed)}


def _kw(cfg: dict, tr: Windows, cutoff: float) -> dict:
    """GSE-Flow / det. GNN keywords: prior "cv", per-frame σ_p (CV residual RMS), ρ = 1."""
    kw = flow_config(tr, "cv")
    kw.update(irreps_hidden=cfg["irreps"], n_layers=cfg["n_layers"], cutoff=cutoff)
    return kw


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


def _objective(regress: bool) -> jax.tree_util.Partial:
    """Flow matching (GSE-Flow, enhance) or the det. GNN's squared error as one loss whose
    switch is traced: the two networks of equal shapes share one compiled train loop."""
    return jax.tree_util.Partial(flow_matching_loss, regress=jnp.asarray(float(regress)))


def _det_gnn(net: GSEFlow, kw: dict, key) -> EquivariantGNN:
    """The det. GNN around a network trained with ``_objective(True)``."""
    return eqx.tree_at(lambda d: d.net, EquivariantGNN(key=key, **kw), net)


def _cv_mean(w: Windows) -> np.ndarray:
    """The constant-velocity prior mean of ``w``, passed explicitly to GSE-Flow (its
    ``prior="cv"`` gives the same): then GSE-Flow, the det. GNN and enhance (whose prior mean
    is the EGNN's prediction) run the same compiled train loop and sampler."""
    return constant_velocity(w.history, w.future.shape[1]).astype(np.float32)


def _fit(model, windows: Windows, steps: int, batch: int, key, loss_fn=None):
    if isinstance(model, GSEFlow) and windows.prior_mean is None:
        windows = windows._replace(prior_mean=_cv_mean(windows))
    return train(
        model,
        windows,
        _lr(steps),
        steps,
        key=key,
        batch_size=batch,
        loss_fn=_objective(False) if loss_fn is None else loss_fn,
        progress=False,
    ).model


def _flow_samples(
    model, w: Windows, key, *, k=K, temperature=1.0, n_steps=10, solver="euler", prior_mean=None
) -> np.ndarray:
    if prior_mean is None:
        prior_mean = _cv_mean(w)
    return sample_windows(
        model,
        w,
        key,
        k=k,
        n_steps=n_steps,
        solver=solver,
        temperature=temperature,
        prior_mean=prior_mean,
        progress=False,
    )


def _det_scores(pred: np.ndarray, w: Windows) -> dict[str, float]:
    s = window_scores(pred[:, None], w.future)
    return {"ade": float(s["ade"].mean()), "fde": float(s["min_fde"].mean())}


def _scores(samples: np.ndarray, w: Windows, bonds: np.ndarray) -> dict[str, np.ndarray]:
    """Per-window minADE/minFDE/ADE/energy and per-bond W1 (mÅ) of ``samples``."""
    out = {m: v.astype(np.float64) for m, v in window_scores(samples, w.future).items()}
    out["w1"] = 1000.0 * bond_length_w1(samples, w.future, bonds)
    return out


def _deviation_hist(x: np.ndarray, ref: np.ndarray, bonds: np.ndarray) -> np.ndarray:
    """Density over :data:`DEV_BINS` of bond lengths in ``x`` minus each bond's mean length in
    the true futures ``ref`` (pooled over bonds)."""
    mean = bond_lengths(ref, bonds).reshape(-1, len(bonds)).mean(axis=0)
    dev = bond_lengths(x, bonds).reshape(-1, len(bonds)) - mean
    return np.histogram(np.clip(dev, DEV_BINS[0], DEV_BINS[-1]), DEV_BINS, density=True)[0]


def _noisy(
    pred_val, val: Windows, pred_te, te: Windows, key, bonds
) -> tuple[dict, dict, np.ndarray]:
    k1, k2 = jax.random.split(key)
    fit = fit_noise(pred_val, val.future, key=k1, k=K)
    info = {"structure": fit.structure, "multiplier": fit.multiplier}
    s = noisy_samples(pred_te, fit, k2, K)
    return _scores(s, te, bonds), info, _deviation_hist(s, te.future, bonds)


# ----------------------------------------------------------------------------- jobs
def _job_flow(cfg: dict, molecule: str, seed: int) -> dict:
    """GSE-Flow: samples, noise-free step sweep, equivariance (first seed)."""
    d = _data(cfg, molecule)
    tr, va, te = d["train"], d["val"], d["test"]
    bonds = _bonds(molecule)
    k = jax.random.split(jax.random.PRNGKey(seed), 4)
    kw = _kw(cfg, tr, 3.0)
    t0 = time.perf_counter()
    flow = _fit(GSEFlow(key=k[0], prior_noise="walk", **kw), tr, cfg["steps"], cfg["batch"], k[1])
    out: dict = {"train_s": time.perf_counter() - t0, "params": count_parameters(flow)}
    grid = tuple(cfg["select_temperatures"])
    t_best, out["val_energy"] = 1.0, {}
    if grid:  # the sampling temperature, chosen on validation as the baselines' noise
        t_best, out["val_energy"] = select_temperature(
            flow,
            va,
            key=jax.random.fold_in(k[2], 1),
            k=K,
            temperatures=grid,
            prior_mean=_cv_mean(va),
        )
    out["temperature"] = t_best
    if cfg["curve"]:  # the learning curve's point at this budget
        out["val"] = _val_flow(flow, va, k[2], out["val_energy"].get(1.0))
    samples = _flow_samples(flow, te, k[2], temperature=t_best)
    out["scores"] = _scores(samples, te, bonds)
    out["hist"] = {
        "flow": _deviation_hist(samples, te.future, bonds),
        "truth": _deviation_hist(te.future, te.future, bonds),
    }
    sweep = {}
    euler = cfg["euler_steps"]
    for solver, grid in (("euler", euler), ("heun", HEUN_STEPS if cfg["heun"] else ())):
        for n in grid:
            s = _flow_samples(flow, te, k[2], k=1, temperature=0.0, n_steps=n, solver=solver)
            sweep[(solver, n)] = float(window_scores(s, te.future)["ade"].mean())
    out["sweep"] = sweep
    out["ade0"] = sweep[("euler", 10)]  # the noise-free (temperature-0) output, 10 Euler steps
    out["equivariance"] = _equivariance(flow, te, k[3]) if seed == cfg["first_seed"] else None
    return out


def _equivariance(flow: GSEFlow, w: Windows, key) -> dict[str, float]:
    """The trained sampler (10 Euler steps): rotations + translations, and node permutations."""
    h, a = jnp.asarray(w.history[0]), jnp.asarray(w.node_attr[0])
    graph = w.graph
    eps = jax.random.normal(key, (flow.n_future, *h.shape[1:]))
    eps = eps - eps.mean(axis=1, keepdims=True)
    run = jax.jit(lambda hh, ee, aa, gg: sample_from_noise(flow, hh, ee, node_attr=aa, graph=gg))
    rot = check_equivariance(
        lambda hh, ee: run(hh, ee, a, graph), [h], [eps], output="point", key=key, n_trials=10
    )
    perm = np.random.default_rng(0).permutation(h.shape[1])
    g_p = make_graph(np.argsort(perm)[np.asarray(w.edges)], h.shape[1])
    base = np.asarray(run(h, eps, a, graph))
    moved = run(h[:, perm], eps[:, perm], a[perm], g_p)
    p_err = float(np.linalg.norm(np.asarray(moved) - base[:, perm]) / np.linalg.norm(base))
    return {"rotation_translation": rot, "permutation": p_err}


def _job_det(cfg: dict, molecule: str, seed: int) -> dict:
    """Det. GNN (same network, MSE) and constant velocity, each + validation-chosen noise."""
    d = _data(cfg, molecule)
    tr, va, te = d["train"], d["val"], d["test"]
    bonds = _bonds(molecule)
    k = jax.random.split(jax.random.PRNGKey(seed), 4)
    kw = _kw(cfg, tr, 3.0)
    t0 = time.perf_counter()
    net = GSEFlow(key=k[0], prior_noise="walk", **kw)  # the flow's shapes: one compiled loop
    det = _det_gnn(_fit(net, tr, cfg["steps"], cfg["batch"], k[1], _objective(True)), kw, k[0])
    out: dict = {"train_s": time.perf_counter() - t0, "params": count_parameters(det)}
    F = te.future.shape[1]
    p_va, p_te = predict(det, va), predict(det, te)
    out["val"] = _val_det(p_va, va)
    out["det"], out["det_noise"], det_hist = _noisy(p_va, va, p_te, te, k[2], bonds)
    out["det_point"] = _det_scores(p_te, te)
    cv_va, cv_te = constant_velocity(va.history, F), constant_velocity(te.history, F)
    out["cv"], out["cv_noise"], cv_hist = _noisy(cv_va, va, cv_te, te, k[3], bonds)
    out["cv_point"] = _det_scores(cv_te, te)
    out["hist"] = {"det": det_hist, "cv": cv_hist}
    return out


def _job_egnn(cfg: dict, molecule: str, seed: int) -> dict:
    """EGNN + noise, and enhance(EGNN) trained on 2-fold out-of-fold EGNN predictions."""
    d = _data(cfg, molecule)
    tr, va, te = d["train"], d["val"], d["test"]
    bonds = _bonds(molecule)
    k = jax.random.split(jax.random.PRNGKey(seed), 7)
    kw = _kw(cfg, tr, 3.0)
    target = count_parameters(GSEFlow(key=k[0], **kw))
    steps, batch = cfg["steps"], cfg["batch"]

    def fit_egnn(windows: Windows, key):
        egnn = _fit(
            _matched_egnn(target, kw, kw["length_scale"], key), windows, steps, batch, key, mse_loss
        )
        return lambda w: predict(egnn, w)

    t0 = time.perf_counter()
    f_egnn = fit_egnn(tr, k[1])
    out: dict = {"params": count_parameters(_matched_egnn(target, kw, kw["length_scale"], k[1]))}
    p_te = f_egnn(te)
    out["egnn"], out["egnn_noise"], hist = _noisy(f_egnn(va), va, p_te, te, k[2], bonds)
    out["hist"] = {"egnn": hist}
    out["egnn_point"] = _det_scores(p_te, te)
    out["train_s"] = time.perf_counter() - t0
    if not cfg["enhance"]:
        return out
    oof = out_of_fold(lambda w: fit_egnn(w, k[3]), tr, n_folds=2, seed=seed)
    prior_tr, sigma_e = enhance(f_egnn, tr, per_frame=True, train_predictions=oof)
    kw_e = dict(kw, sigma=sigma_e)  # prior: the EGNN's predictions, always passed explicitly
    flow_e = _fit(GSEFlow(key=k[4], prior_noise="walk", **kw_e), prior_tr, steps, batch, k[5])
    out["train_s"] = time.perf_counter() - t0
    out["enhanced"] = _scores(_flow_samples(flow_e, te, k[6], prior_mean=p_te), te, bonds)
    return out


def _job_nbody(cfg: dict, seed: int, which: str) -> dict:
    """N-body sanity check: the flow's noise-free ADE or the det. GNN's, same budget."""
    d = _nbody(cfg, seed)
    tr, te = d["train"], d["test"]
    k = jax.random.split(jax.random.PRNGKey(seed), 3)
    kw = _kw(cfg, tr, 8.0)
    steps, batch = cfg["steps"], cfg["batch"]
    net = GSEFlow(key=k[0], prior_noise="walk", **kw)
    if which == "flow":
        model = _fit(net, tr, steps, batch, k[1])
        pred = _flow_samples(model, te, k[2], k=1, temperature=0.0)[:, 0]
    else:
        model = _det_gnn(_fit(net, tr, steps, batch, k[1], _objective(True)), kw, k[0])
        pred = predict(model, te)
    out = _det_scores(pred, te)
    out["cv"] = _det_scores(constant_velocity(te.history, te.future.shape[1]), te)["ade"]
    return out


def _val_det(p: np.ndarray, va: Windows) -> dict[str, float]:
    """The det. GNN's validation MSE (per node, summed over coordinates) and ADE from its
    predictions ``p``."""
    return {"mse": float(np.mean(np.sum((p - va.future) ** 2, axis=-1))), **_det_scores(p, va)}


def _val_flow(flow: GSEFlow, va: Windows, key, energy: float | None = None) -> dict[str, float]:
    """GSE-Flow's validation energy score at T = 1 (the draw :func:`select_temperature` uses
    with ``fold_in(key, 1)``; pass ``energy`` when it is known) and noise-free ADE."""
    if energy is None:
        _, val = select_temperature(
            flow,
            va,
            key=jax.random.fold_in(key, 1),
            k=K,
            temperatures=(1.0,),
            prior_mean=_cv_mean(va),
        )
        energy = val[1.0]
    s0 = _flow_samples(flow, va, key, k=1, temperature=0.0)
    return {"energy": float(energy), "ade0": float(window_scores(s0, va.future)["ade"].mean())}


def _job_curve(cfg: dict, molecule: str, seed: int, which: str) -> dict:
    """The first molecule's and seed's GSE-Flow or det. GNN trained for each budget of
    ``cfg["curve"]`` other than ``cfg["steps"]`` with the comparison's own recipe (warm-up +
    cosine decay to that budget, that seed's job keys): its validation scores. The point at
    ``cfg["steps"]`` is that job's own model."""
    d = _data(cfg, molecule)
    tr, va = d["train"], d["val"]
    k = jax.random.split(jax.random.PRNGKey(seed), 4)
    kw = _kw(cfg, tr, 3.0)
    out: dict = {}
    for n in cfg["curve"]:
        if n == cfg["steps"]:
            continue
        net = GSEFlow(key=k[0], prior_noise="walk", **kw)
        if which == "flow":
            out[n] = _val_flow(_fit(net, tr, n, cfg["batch"], k[1]), va, k[2])
        else:
            det = _det_gnn(_fit(net, tr, n, cfg["batch"], k[1], _objective(True)), kw, k[0])
            out[n] = _val_det(predict(det, va), va)
    return out


_JOBS = {"flow": _job_flow, "det": _job_det, "egnn": _job_egnn}


def _run_job(kind: str, cfg: dict, molecule: str, seed: int, which: str = "") -> tuple[dict, float]:
    """One job (in a worker): ``(result, wall seconds)``."""
    t0 = time.perf_counter()
    xla_cache = os.environ.get("JAX_COMPILATION_CACHE_DIR")
    if xla_cache:  # jobs of equal shapes share compiled code through this run's cache
        jax.config.update("jax_compilation_cache_dir", xla_cache)
    if kind in _JOBS:
        res = _JOBS[kind](cfg, molecule, seed)
    elif kind == "nbody":
        res = _job_nbody(cfg, seed, which)
    else:
        res = _job_curve(cfg, molecule, seed, which)
    return res, time.perf_counter() - t0


# rough seconds of a job beside another worker, per molecule: (once per process and molecule:
# compilation, per job); an egnn job that also trains enhance(EGNN) costs ENHANCE more
_COST = {"flow": (55, 30), "det": (25, 19), "egnn": (10, 3), "nbody": (30, 25), "curve": (30, 60)}
ENHANCE = 35


def _jobs(config: Config) -> list[Job]:
    """The run's jobs: per molecule and seed GSE-Flow, the det. GNN (+ constant velocity) and
    the EGNN (+ enhance); the N-body pairs; the first molecule's and seed's learning curves. A
    group is a kind (one worker compiles it once per molecule)."""
    cfg = _job_cfg(config)
    specs: list[tuple[str, str, int, str]] = []
    for m in config.molecules:  # the costliest jobs first, so the two workers finish together
        for s in config.seeds:
            specs += [("egnn", m, s, ""), ("flow", m, s, ""), ("det", m, s, "")]
    if config.nbody:
        specs += [("nbody", "", s, w) for s in config.seeds for w in ("flow", "det")]
    if cfg["curve"]:
        specs += [("curve", config.molecules[0], config.seeds[0], w) for w in ("flow", "det")]
    jobs, seen = [], set()
    for kind, mol, seed, which in specs:
        group = f"{kind}-{which}" if kind == "curve" else kind
        first, per = _COST[kind]
        cost = per + (ENHANCE if kind == "egnn" and config.enhance else 0)
        cost += first if (group, mol) not in seen else 0
        seen.add((group, mol))
        name = "-".join(str(v) for v in (kind, mol, seed, which) if v != "")
        jobs.append(Job(name, _run_job, (kind, cfg, mol, seed, which), group=group, cost=cost))
    return jobs


def _runner(config: Config, out_dir: Path, progress: bool | None, env: dict) -> JobRunner:
    """The run's job runner: results cached under ``out_dir/cache`` by the config (all but
    the seeds, the molecules and the run's controls: more of them reuse the earlier jobs) and
    ``CODE_VERSION``."""
    key = config_dict(
        replace(config, seeds=config.seeds[:1], molecules=MOLECULES, max_new_jobs=None)
    )
    return JobRunner(
        Path(out_dir) / "cache",
        {"config": key, "code": CODE_VERSION},
        progress=progress,
        max_new_jobs=config.max_new_jobs,
        env=env,
        desc="gse-flow jobs",
    )


# ----------------------------------------------------------------------------- statistics
def _diff_ci(
    base: list[np.ndarray], flow: list[np.ndarray], unit: str = "windows"
) -> tuple[float, float, float, str]:
    """Mean of ``base − flow`` and its 95% interval: a t interval over the seeds' means with
    ≥ 3 seeds, else over the pooled paired differences (per window, or per ``unit``)."""
    if len(base) >= 3:
        d = np.array([np.mean(b - f) for b, f in zip(base, flow)])
        h = stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
        how = f"t over {len(d)} seeds"
    else:
        d = np.concatenate([b - f for b, f in zip(base, flow)])
        h = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
        how = f"over {len(d)} {unit}"
    m = float(np.mean(d))
    return m, m - h, m + h, how


def _fmt_ci(m: float, lo: float, hi: float) -> str:
    return f"{m:+.4f} [{lo:+.4f}, {hi:+.4f}]"


# ----------------------------------------------------------------------------- reproduce
def _molecule_title(molecule: str, c: dict, n_seeds: int, cfg: dict) -> str:
    meta = md_trajectory(molecule)["metadata"]
    n_atoms = len(_bonds(molecule)) and md_trajectory(molecule)["positions"].shape[1]
    sizes = {s: _data(cfg, molecule)[s].n_windows for s in ("train", "val", "test")}
    return (
        f"{NAMES[molecule]} ({n_atoms} atoms; {meta['level_of_theory'].split(' (')[0]}, "
        f"{meta['temperature_k']:g} K, Langevin, {meta['frame_spacing_fs']:g} fs per frame; "
        f"{sizes['train']} train / {sizes['val']} val / {sizes['test']} test windows of "
        f"{c['H']} + {c['F']} frames, blocks of time; {n_seeds} seed(s), {cfg['steps']} steps "
        f"× batch {cfg['batch']}, K = {K})"
    )


def reproduce(config: Config, out_dir: Path, progress: bool | None) -> ExperimentResult:
    """Run the comparison (see the module docstring)."""
    t_start = time.perf_counter()
    cfg = _job_cfg(config)
    seeds, mols = config.seeds, config.molecules
    with tempfile.TemporaryDirectory() as xla_cache:
        env = {"JAX_COMPILATION_CACHE_DIR": os.environ.get("JAX_COMPILATION_CACHE_DIR", xla_cache)}
        res = _runner(config, out_dir, progress, env).run(_jobs(config))
    R = {key: r for key, (r, _) in res.items()}
    job_s = {key: t for key, (_, t) in res.items()}

    enh = config.enhance
    first = seeds[0]
    src = {
        "flow": ("flow", "scores"),
        "cv": ("det", "cv"),
        "det": ("det", "det"),
        "egnn": ("egnn", "egnn"),
        **({"enhanced": ("egnn", "enhanced")} if enh else {}),
    }
    # arr[mol][metric][method]: one array per seed (per window, or per bond for W1)
    arr = {
        mol: {
            m: {n: [R[f"{src[n][0]}-{mol}-{s}"][src[n][1]][m] for s in seeds] for n in src}
            for m in METRICS
        }
        for mol in mols
    }
    mean_of = lambda mol, n, m: [float(np.mean(v)) for v in arr[mol][m][n]]  # noqa: E731
    avg = lambda mol, n, m: float(np.mean(mean_of(mol, n, m)))  # noqa: E731
    result = ExperimentResult(
        "gse-flow",
        "GSE-Flow vs K-matched baselines on real MD (MD17's molecules under GFN2-xTB, "
        "alanine dipeptide under amber14)",
    )
    c = cfg["md"]
    point = {"cv": ("det", "cv_point"), "det": ("det", "det_point"), "egnn": ("egnn", "egnn_point")}
    cols = [*(LABELS[m] for m in METRICS), "ADE (noise-free)", "noise", "params"]
    t_note = (
        "its sampling temperature T (a factor on the prior noise) chosen on validation by the "
        f"same rule (from {', '.join(f'{t:g}' for t in cfg['select_temperatures'])})"
        if cfg["select_temperatures"]
        else "sampling temperature T = 1 (the full mode chooses T on validation)"
    )
    for mol in mols:
        head = ResultTable(
            _molecule_title(mol, c, len(seeds), cfg),
            cols,
            note="Baselines: the deterministic prediction + Gaussian noise, one scale per future "
            "frame and node, multiplier and structure (white / random walk) chosen on validation "
            f"by the energy score. GSE-Flow: 10 Euler steps, {t_note}; its noise-free ADE is at "
            "T = 0. Bond W1: Wasserstein-1 between the bond-length distributions of the sampled "
            "and the true futures, per topology bond, averaged (mÅ).",
        )
        scores = lambda n, mol=mol: {LABELS[m]: mean_of(mol, n, m) for m in METRICS}  # noqa: E731
        for n, label in BASELINES:
            job0 = R[f"{src[n][0]}-{mol}-{first}"]
            noise = job0[f"{n}_noise"]
            head.add_row(
                n,
                {
                    **scores(n),
                    "ADE (noise-free)": [
                        R[f"{point[n][0]}-{mol}-{s}"][point[n][1]]["ade"] for s in seeds
                    ],
                    "noise": f"{noise['structure']} ×{noise['multiplier']:g} (seed {first})",
                    "params": job0["params"] if n != "cv" else 0,
                },
                label=label,
            )
        f0 = R[f"flow-{mol}-{first}"]
        head.add_row(
            "flow",
            {
                **scores("flow"),
                "ADE (noise-free)": [R[f"flow-{mol}-{s}"]["ade0"] for s in seeds],
                "noise": f"learned, T ×{f0['temperature']:g} (seed {first}; prior: walk)",
                "params": f0["params"],
            },
            label="GSE-Flow (ours, recon.)",
        )
        if enh:
            head.add_row(
                "enhanced",
                {**scores("enhanced"), "noise": "learned (prior: walk)", "params": f0["params"]},
                label="GSE-Flow enhance(EGNN, out-of-fold)",
            )
        result.tables.append(head)

    diffs = ResultTable(
        "Paired differences, baseline − GSE-Flow (> 0: GSE-Flow better), mean [95% interval]",
        [LABELS[m] for m in METRICS] + ["interval"],
    )
    ci: dict = {}
    pairs = [*BASELINES, *([("enhanced", "enhance(EGNN) vs EGNN + noise")] if enh else [])]
    for mol in mols:
        for n, label in pairs:
            cells = {}
            for m in METRICS:
                a = arr[mol][m]
                unit = "bonds" if m == "w1" else "windows"
                if n == "enhanced":
                    v = _diff_ci(a["egnn"], a["enhanced"], unit)
                else:
                    v = _diff_ci(a[n], a["flow"], unit)
                ci[(mol, n, m)] = v
                cells[LABELS[m]] = _fmt_ci(*v[:3])
            how = ci[(mol, n, "energy")][3]
            diffs.add_row(f"{mol}-{n}", {**cells, "interval": how}, label=f"{NAMES[mol]}: {label}")
    result.tables.append(diffs)

    first_runs = {mol: [R[f"flow-{mol}-{s}"] for s in seeds] for mol in mols}
    steps_grid = list(R[f"flow-{mols[0]}-{first}"]["sweep"])
    sweep = ResultTable(
        f"GSE-Flow noise-free (T = 0) ADE vs ODE steps (all test windows, {len(seeds)} seed(s))",
        [f"{sv} {n}" for sv, n in steps_grid],
    )
    for mol in mols:
        sweep.add_row(
            mol,
            {f"{sv} {n}": [r["sweep"][(sv, n)] for r in first_runs[mol]] for sv, n in steps_grid},
            label=NAMES[mol],
        )
    result.tables.append(sweep)

    if cfg["select_temperatures"]:
        tt = ResultTable(
            "GSE-Flow validation energy score by sampling temperature (chooses T)",
            [f"T={t:g}" for t in cfg["select_temperatures"]],
        )
        for mol in mols:
            tt.add_row(
                mol,
                {
                    f"T={t:g}": [r["val_energy"][t] for r in first_runs[mol]]
                    for t in cfg["select_temperatures"]
                },
                label=NAMES[mol],
            )
        result.tables.append(tt)

    nb = cfg["nbody"]
    nbs = seeds if config.nbody else ()
    if nbs:  # the N-body sanity check (full mode)
        nbt = ResultTable(
            f"Charged N-body sanity check (deterministic futures; {nb['n_train']} train / "
            f"{nb['n_test']} test windows, {nb['H']} + {nb['F']} frames, {len(nbs)} seed(s), "
            f"{cfg['steps']} steps × batch {cfg['batch']})",
            ["ADE", "FDE"],
            note="GSE-Flow row: its noise-free (temperature-0) output, 10 Euler steps.",
        )
        nb_runs = {w: [R[f"nbody-{s}-{w}"] for s in nbs] for w in ("flow", "det")}
        nbt.add_row("cv", {"ADE": [r["cv"] for r in nb_runs["det"]]}, label="constant velocity")
        for w, label in (("det", "det. GNN"), ("flow", "GSE-Flow noise-free")):
            nbt.add_row(
                w,
                {"ADE": [r["ade"] for r in nb_runs[w]], "FDE": [r["fde"] for r in nb_runs[w]]},
                label=label,
            )
        result.tables.append(nbt)

    plateau = None
    budgets = cfg["curve"]
    if budgets:
        m0 = mols[0]
        cur = ResultTable(
            f"Learning curves ({NAMES[m0]}, seed {first}, validation windows; each budget "
            "trained with the comparison's schedule, warm-up + cosine decay to that budget; "
            f"{cfg['steps']} steps is the comparison's model)",
            [f"{n} steps" for n in budgets],
        )
        cf = {**R[f"curve-{m0}-{first}-flow"], cfg["steps"]: R[f"flow-{m0}-{first}"]["val"]}
        cd = {**R[f"curve-{m0}-{first}-det"], cfg["steps"]: R[f"det-{m0}-{first}"]["val"]}
        for rid, curve, key, label in (
            ("det-mse", cd, "mse", "det. GNN val MSE"),
            ("det-ade", cd, "ade", "det. GNN val ADE"),
            ("flow-energy", cf, "energy", "GSE-Flow val energy score"),
            ("flow-ade0", cf, "ade0", "GSE-Flow val noise-free ADE"),
        ):
            cur.add_row(rid, {f"{n} steps": curve[n][key] for n in budgets}, label=label)
        result.tables.append(cur)
        last, prev = cd[budgets[-1]]["mse"], cd[budgets[-2]]["mse"]
        plateau = (prev - last) / prev

    # ---------------------------------------------------------------- figure
    plt = require_matplotlib(package="gse-flow")
    fig, axes = plt.subplots(1, 1 + len(mols), figsize=(3.6 * (1 + len(mols)), 3.4))
    ax = axes[0]
    methods = [("cv", "CV + noise"), ("det", "det. GNN + noise"), ("egnn", "EGNN + noise")]
    methods += [("flow", "GSE-Flow")] + ([("enhanced", "enhance(EGNN)")] if enh else [])
    width = 0.8 / len(methods)
    for i, (n, label) in enumerate(methods):
        rel = [avg(mol, n, "energy") / avg(mol, "det", "energy") for mol in mols]
        ax.bar(np.arange(len(mols)) + i * width, rel, width, label=label)
    ax.set_xticks(np.arange(len(mols)) + 0.4 - width / 2, [NAMES[m] for m in mols], fontsize=7)
    ax.set_ylabel("energy score / det. GNN + noise")
    ax.set_ylim(0.5, None)
    ax.set_title("energy score (K = 5, test)")
    ax.legend(fontsize=6)
    centres = 0.5 * (DEV_BINS[1:] + DEV_BINS[:-1])
    for ax, mol in zip(axes[1:], mols):
        fr, dr, er = (R[f"{k}-{mol}-{first}"]["hist"] for k in ("flow", "det", "egnn"))
        ax.fill_between(centres, fr["truth"], color="0.8", label="true futures")
        for h, label in ((fr["flow"], "GSE-Flow"), (dr["det"], "det. GNN + noise")):
            ax.plot(centres, h, label=label)
        ax.plot(centres, er["egnn"], ls="--", label="EGNN + noise")
        ax.set_xlabel("bond length − mean (Å)")
        ax.set_title(f"{NAMES[mol]}: bond lengths (seed {first})", fontsize=9)
        ax.legend(fontsize=6)
    fig.tight_layout()
    path = Path(out_dir) / "gse_flow_md.png"
    save_figure(fig, path, dpi=110)
    result.figures.append(path)

    # ---------------------------------------------------------------- checks
    xtb = [mol for mol in mols if mol != "alanine_dipeptide"]
    # the lower end of the 95% interval of (baseline − GSE-Flow), the worse of the two GNNs
    low = lambda mol, metric: min(ci[(mol, n, metric)][1] for n in ("det", "egnn"))  # noqa: E731
    if xtb:
        wins = [mol for mol in xtb if low(mol, "min_ade") > 0 and low(mol, "energy") > 0]
        need = min(2, len(xtb))
        result.check(
            "a-md17",
            len(wins),
            ">=",
            need,
            f"a. minADE@5 and energy score below det. GNN + noise and EGNN + noise (95% interval "
            f"> 0) on >= {need} of the {len(xtb)} MD17 molecule(s)",
        )
    if "alanine_dipeptide" in mols:
        result.check(
            "b-alanine",
            low("alanine_dipeptide", "energy"),
            ">",
            0.0,
            "b. alanine dipeptide: energy score below det. GNN + noise and EGNN + noise "
            "(95% interval > 0)",
        )
    ratio = max(avg(mol, "flow", "w1") / avg(mol, n, "w1") for mol in mols for n, _ in BASELINES)
    result.check(
        "c-bond-w1",
        ratio,
        "<",
        1.0,
        "c. bond-length W1: GSE-Flow below every baseline on every molecule (largest ratio)",
    )
    if enh:
        beat = [mol for mol in mols if avg(mol, "enhanced", "energy") < avg(mol, "egnn", "energy")]
        need = min(2, len(mols))
        result.check(
            "d-enhance",
            len(beat),
            ">=",
            need,
            f"d. enhance(EGNN): energy score below EGNN + noise on >= {need} molecule(s)",
        )
    eqs = [first_runs[mol][0]["equivariance"] for mol in mols]
    eq_max = max(max(e["rotation_translation"], e["permutation"]) for e in eqs)
    result.check(
        "e-equivariance",
        eq_max,
        "<=",
        1e-5,
        "e. trained sampler equivariant (rotation + translation, permutation) <= 1e-5",
    )
    wall = time.perf_counter() - t_start
    mode = "quick" if replace(config, max_new_jobs=None) == QUICK else "full"
    # wall-clock is reported, never checked: it moves with the machine and its load
    result.notes.append(
        f"e. this {mode} run took {wall:.0f} s (target {TIME_LIMIT[mode]:.0f} s on 2 idle cores; "
        "cached jobs cost nothing)"
    )
    eu = {
        n: np.mean([r["sweep"][("euler", n)] for mol in mols for r in first_runs[mol]])
        for n in cfg["euler_steps"]
    }
    result.check(
        "steps-monotone",
        float(max(b / a for a, b in itertools.pairwise(eu.values()))),
        "<=",
        1.02,
        "noise-free ADE non-increasing in Euler steps (2% slack; mean over molecules)",
    )
    if 20 in eu:
        result.check(
            "steps-10-vs-20",
            float(abs(eu[10] - eu[20]) / eu[20]),
            "<=",
            0.05,
            "noise-free ADE: 10 Euler steps within 5% of 20 (mean over molecules)",
        )
    if nbs:
        nb_flow = np.mean([R[f"nbody-{s}-flow"]["ade"] for s in nbs])
        nb_det = np.mean([R[f"nbody-{s}-det"]["ade"] for s in nbs])
        result.check(
            "nbody-sanity",
            nb_flow / nb_det,
            "<=",
            1.05,
            "N-body sanity check: noise-free flow ADE within 5% of the det. GNN's",
        )
    if plateau is not None:
        result.check(
            "plateau",
            plateau,
            "<",
            0.05,
            "det. GNN validation MSE plateaued (< 5% gain over the last doubling)",
        )
    m0 = mols[0]
    result.headline = (
        f"{NAMES[m0]} (GFN2-xTB MD, K = 5): energy score GSE-Flow {avg(m0, 'flow', 'energy'):.3f}"
        f" vs det. GNN + noise {avg(m0, 'det', 'energy'):.3f}, EGNN + noise "
        f"{avg(m0, 'egnn', 'energy'):.3f}; minADE@5 {avg(m0, 'flow', 'min_ade'):.3f} vs "
        f"{avg(m0, 'det', 'min_ade'):.3f}, {avg(m0, 'egnn', 'min_ade'):.3f}; bond W1 "
        f"{avg(m0, 'flow', 'w1'):.1f} vs {avg(m0, 'det', 'w1'):.1f}, "
        f"{avg(m0, 'egnn', 'w1'):.1f} mÅ"
    )
    if mode == "quick":
        result.notes.append(
            "The quick mode runs one molecule; the other molecules (acceptance a on two MD17 "
            "molecules, b on alanine dipeptide), enhance(EGNN) (d), the temperature choice and "
            "the N-body sanity check run in the full mode"
        )
    result.notes.append(
        "Our reconstruction of GSE-Flow from the abstract; not comparable to the paper's numbers. "
        "The data are MD17's molecules simulated under GFN2-xTB (and alanine dipeptide under "
        "amber14 + GBn2), not MD17's DFT trajectories."
    )
    result.notes.append(
        f"e on each molecule's seed-{first} trained sampler: "
        + ", ".join(
            f"{NAMES[mol]} {e['rotation_translation']:.1e} / {e['permutation']:.1e}"
            for mol, e in zip(mols, eqs)
        )
        + " (rotation + translation / permutation, 10 trials)"
    )
    result.notes.append(
        "job wall times (s, single-threaded workers): "
        + ", ".join(f"{n} {t:.0f}" for n, t in job_s.items())
        + f"; sum {sum(job_s.values()):.0f} s; this call {wall:.0f} s"
    )
    if plateau is not None:
        result.notes.append(f"det. GNN val MSE gain over the last curve step: {plateau:.1%}")
    return result


EXPERIMENT = Experiment(
    "gse-flow",
    "GSE-Flow (our reconstruction) vs K-matched CV, det. GNN and EGNN on real MD "
    "(GFN2-xTB, amber14); N-body check",
    reproduce,
    QUICK,
    FULL,
)
