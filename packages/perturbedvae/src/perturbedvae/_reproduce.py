"""``python -m perturbedvae reproduce [--quick]``: unseen doubles, probes and the ablation, 3 seeds.

Three benchmarks, each fit on controls + singles and scored on held-out doubles, at least half of
which interact (their true effect is not the sum of their singles'):

* ``syn``: the synthetic screen (known z_ι, z_ν, noise-free means);
* ``semi``: planted gene programs on real PBMC backgrounds;
* ``shift``: the synthetic screen where perturbations also move the background input, where the
  alignment term has something to remove (perturbation probe from ẑ_ι, background R²).

Doubles: pseudobulk RMSE (all genes, top-20 DE genes), Pearson of Δ-from-control, energy
distance on 20 PCs, reported for interacting and additive pairs apart. Probes never read u:
μ_ν(x, u = 0), and R² of ẑ_ν against the true z_ν after removing each condition's mean. The
training settings in :data:`SETTINGS` were chosen on validation cells of the singles
(:func:`validate`), never on the doubles.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray

from icml26_shared.config import config_dict
from icml26_shared.experiment import (
    Estimate,
    Experiment,
    ExperimentResult,
    ResultTable,
    require_matplotlib,
    save_figure,
)
from icml26_shared.jobs import Job, JobRunner
from icml26_shared.threads import single_thread

from ._baselines import Additive, ControlMean, CPALike, NoSeparationVAE, Ridge
from ._data import CONTROL, Screen, Split, read_screen, semisynthetic_pbmc, simulate_screen
from ._metrics import background_r2, energy_distance, pearson_delta, probe_accuracy, rmse
from ._perturbedvae import PerturbedVAE, scm_kl

__all__ = [
    "EXPERIMENT", "FULL", "PARTS", "QUICK", "SETTINGS", "Config", "assemble", "reproduce",
    "run_part", "validate",
]  # fmt: skip

OURS, NO_ALIGN, NO_SEP, CPA = "PerturbedVAE", "PerturbedVAE α=0", "no separation", "CPA-like"
ADD, RIDGE, CTRL = "additive", "ridge", "control mean"
DOUBLE_COLS = ["RMSE", "RMSE top-20 DE", "Pearson Δ", "Pearson Δ top-20 DE", "energy distance"]
HEAD_COLS = ["RMSE", "RMSE top-20 DE", "Pearson Δ"]
PARTS = ("syn", "semi", "shift")

#: Training settings of PerturbedVAE (and of the same-size peers where they apply), chosen by
#: :func:`validate` on validation cells of the singles (``docs/validation.json``).
SETTINGS: dict[str, float] = {
    "alpha": 3.0,
    "delta_init": 0.5,
    "omega_init": 0.1,
    "semi_delta_init": 1.0,  # the semi-synthetic screen's own validation choice
}


@dataclass(frozen=True)
class Config:
    """Sizes of one reproduce run (epochs are training settings chosen on validation singles)."""

    seeds: tuple[int, ...]
    epochs: int
    lr: float
    syn_cells: int
    syn_controls: int
    semi_cells: int
    semi_controls: int
    semi_epochs: int
    pred_cells: int = 1000
    semi_d_bg: int = 16
    semi_d_pert: int = 10
    bg_shift: float = 1.5
    cpa: bool = True
    semi_peers: bool = True
    umap: bool = False
    settings: dict[str, float] = field(default_factory=lambda: dict(SETTINGS))
    #: run at most this many uncached (benchmark, seed) parts, then stop (exit 3: run again)
    max_new_jobs: int | None = None


QUICK = Config(
    seeds=(0, 1, 2),
    epochs=60,
    lr=1e-3,
    syn_cells=100,
    syn_controls=800,
    semi_cells=80,
    semi_controls=320,
    semi_epochs=60,
    pred_cells=500,
    cpa=False,
    semi_peers=False,
)
FULL = Config(
    seeds=(0, 1, 2),
    epochs=120,
    lr=1e-3,
    syn_cells=200,
    syn_controls=2000,
    semi_cells=200,
    semi_controls=700,
    semi_epochs=100,
    umap=True,
)


# ------------------------------------------------------------------------------ data and fits
def _data(cfg: Config, part: str, seed: int) -> tuple[Split, tuple[int, int]]:
    if part == "semi":
        split = semisynthetic_pbmc(cfg.semi_cells, cfg.semi_controls, seed=seed)
        return split, (cfg.semi_d_bg, cfg.semi_d_pert)
    shift = cfg.bg_shift if part == "shift" else 0.0
    return simulate_screen(cfg.syn_cells, cfg.syn_controls, bg_shift=shift, seed=seed), (8, 6)


def _delta_init(cfg: Config, part: str) -> float:
    return cfg.settings["semi_delta_init" if part == "semi" else "delta_init"]


def _ours(G: int, P: int, dims: tuple[int, int], cfg: Config, alpha: float,
          part: str) -> PerturbedVAE:  # fmt: skip
    return PerturbedVAE(G, P, *dims, alpha=alpha, delta_init=_delta_init(cfg, part),
                        omega_init=cfg.settings["omega_init"])  # fmt: skip


def _fit_models(split: Split, cfg: Config, part: str, seed: int, dims: tuple[int, int],
                show: bool) -> dict[str, Any]:  # fmt: skip
    train = split.train
    G, P = train.n_genes, len(train.perturbations)
    epochs = cfg.semi_epochs if part == "semi" else cfg.epochs
    kw = {"epochs": epochs, "seed": seed, "lr": cfg.lr, "progress": show}
    alpha = cfg.settings["alpha"]
    models: dict[str, Any] = {OURS: _ours(G, P, dims, cfg, alpha, part).fit(train, **kw)}
    if part == "shift":  # the alignment comparison only
        models[NO_ALIGN] = _ours(G, P, dims, cfg, 0.0, part).fit(train, **kw)
        return models
    peers = part == "syn" or cfg.semi_peers
    if peers:
        models[NO_ALIGN] = _ours(G, P, dims, cfg, 0.0, part).fit(train, **kw)
    models[NO_SEP] = NoSeparationVAE(G, P, sum(dims), delta_init=_delta_init(cfg, part))
    models[NO_SEP].fit(train, **kw)
    if peers and cfg.cpa:
        models[CPA] = CPALike(G, P, sum(dims)).fit(train, **kw)
    models[ADD] = Additive().fit(train)
    models[RIDGE] = Ridge().fit(train)
    models[CTRL] = ControlMean().fit(train)
    return models


# ------------------------------------------------------------------------------ scoring
def _pcs(train: Screen, k: int = 20) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    mu = train.X.mean(0)
    _, _, vt = np.linalg.svd(train.X - mu, full_matrices=False)
    return mu, vt[:k].T


def _score_doubles(models: dict[str, Any], split: Split, cfg: Config, seed: int) -> dict:
    """Per method and group (all / interacting / additive doubles): metric → mean over doubles."""
    test = split.test
    mu, proj = _pcs(split.train)
    true_ctrl = test.true_mean(CONTROL)
    groups = {"all": split.doubles, "interacting": split.interacting, "additive": split.additive}
    out: dict[str, dict[str, dict[str, float]]] = {g: {} for g in groups}
    deltas: dict[str, dict[str, tuple[NDArray, NDArray]]] = {}
    for name, model in models.items():
        pred = model.predict([CONTROL, *split.doubles], n_cells=cfg.pred_cells, seed=seed)
        per: dict[str, dict[str, float]] = {}
        deltas[name] = {}
        for k, d in enumerate(split.doubles, start=1):
            truth = test.true_mean(d)
            t_delta = truth - true_ctrl
            p_delta = pred.mean[k] - pred.mean[0]
            top = np.argsort(-np.abs(t_delta))[:20]
            cells = test.X[test.conditions == d]
            per[d] = {
                "RMSE": rmse(pred.mean[k], truth),
                "RMSE top-20 DE": rmse(pred.mean[k][top], truth[top]),
                "Pearson Δ": pearson_delta(p_delta, t_delta),
                "Pearson Δ top-20 DE": pearson_delta(p_delta, t_delta, top=20),
                "energy distance": energy_distance(
                    (pred.cells[k] - mu) @ proj, (cells - mu) @ proj, seed=seed
                ),
            }
            deltas[name][d] = (p_delta, t_delta)
        for g, members in groups.items():
            if members:
                out[g][name] = {
                    c: float(np.mean([per[d][c] for d in members])) for c in DOUBLE_COLS
                }
    return {"metrics": out, "deltas": deltas}


def _singles(split: Split) -> Screen:
    test = split.test
    return test.subset(~np.isin(test.conditions, split.doubles) & ~test.is_control)


def _within_r2(z_hat: NDArray, z: NDArray, conditions: NDArray, seed: int) -> float:
    """R² of ẑ → z after removing each condition's mean from both (u carries nothing then)."""
    zh, zt = z_hat.copy(), z.copy()
    for c in np.unique(conditions):
        sel = conditions == c
        zh[sel] -= zh[sel].mean(0)
        zt[sel] -= zt[sel].mean(0)
    return background_r2(zh, zt, seed=seed)


def _synthetic_probes(models: dict[str, Any], split: Split, seed: int) -> dict[str, dict]:
    test, singles = split.test, _singles(split)
    labels = singles.conditions
    rep: dict[str, dict[str, float]] = {}
    for name in (OURS, NO_ALIGN):
        m = models[name]
        rep[name] = {
            "background R²": background_r2(m.background(test), test.truth["z_bg"], seed=seed),
            "probe from ẑ_ι": probe_accuracy(m.background(singles), labels, seed=seed)[0],
            "probe from μ_ν(x, u=0)": probe_accuracy(
                m.perturbation_latent(singles, use_u=False), labels, seed=seed
            )[0],
            "R²(ẑ_ν → z_ν), condition means removed": _within_r2(
                m.perturbation_latent(test), test.truth["z_pert"], test.conditions, seed
            ),
            "R²(ẑ_ν → z_ι)": background_r2(m.perturbation_latent(test), test.truth["z_bg"], seed=seed),
        }  # fmt: skip
    if NO_SEP in models:
        z = models[NO_SEP].latent(singles, use_u=False)
        rep[NO_SEP] = {
            "background R²": background_r2(
                models[NO_SEP].latent(test, use_u=False), test.truth["z_bg"], seed=seed
            ),
            "probe from μ_ν(x, u=0)": probe_accuracy(z, labels, seed=seed)[0],
        }
    if CPA in models:
        cpa = models[CPA]
        rep[CPA] = {
            "background R²": background_r2(cpa.background(test.X), test.truth["z_bg"], seed=seed),
            "probe from ẑ_ι": probe_accuracy(cpa.background(singles.X), labels, seed=seed)[0],
        }
    acc_true, chance = probe_accuracy(singles.truth["z_pert"], labels, seed=seed)
    rep["true latents"] = {
        "background R²": 1.0,
        "probe from ẑ_ι": probe_accuracy(singles.truth["z_bg"], labels, seed=seed)[0],
        "probe from μ_ν(x, u=0)": acc_true,
    }
    rep["chance"] = {"probe from ẑ_ι": chance, "probe from μ_ν(x, u=0)": chance}
    return rep


def _shift_probes(models: dict[str, Any], split: Split, seed: int) -> dict[str, dict]:
    test, singles = split.test, _singles(split)
    labels = singles.conditions
    rep = {}
    for name in (NO_ALIGN, OURS):
        m = models[name]
        rep[name] = {
            "probe from ẑ_ι": probe_accuracy(m.background(singles), labels, seed=seed)[0],
            "background R²": background_r2(m.background(test), test.truth["z_bg"], seed=seed),
        }
    chance = probe_accuracy(singles.truth["z_pert"], labels, seed=seed)[1]
    rep["true latents"] = {
        "probe from ẑ_ι": probe_accuracy(singles.truth["z_bg"], labels, seed=seed)[0],
        "background R²": 1.0,
    }
    rep["chance"] = {"probe from ẑ_ι": chance}
    return rep


def _semi_probes(models: dict[str, Any], split: Split, seed: int) -> dict[str, dict]:
    from sklearn.decomposition import PCA

    test = split.test
    held = test.subset(~np.isin(test.conditions, split.doubles))
    singles = _singles(split)
    ct, lab = held.truth["cell_type"], singles.conditions
    n_pc = min(50, held.n_cells // 2 - 1, held.n_genes)
    pca_held = PCA(n_pc, random_state=seed).fit_transform(held.X)
    pca_singles = PCA(n_pc, random_state=seed).fit_transform(singles.X)
    rep = {}
    for name in (OURS, NO_ALIGN):
        if name in models:
            m = models[name]
            rep[name] = {
                "cell-type probe from ẑ_ι": probe_accuracy(m.background(held), ct, seed=seed)[0],
                "perturbation probe from μ_ν(x, u=0)": probe_accuracy(
                    m.perturbation_latent(singles, use_u=False), lab, seed=seed
                )[0],
                "perturbation probe from ẑ_ι": probe_accuracy(
                    m.background(singles), lab, seed=seed
                )[0],
            }
    if CPA in models:
        cpa = models[CPA].background(held.X)
        rep[CPA] = {"cell-type probe from ẑ_ι": probe_accuracy(cpa, ct, seed=seed)[0]}
    rep["PCA(50) on expression"] = {
        "cell-type probe from ẑ_ι": probe_accuracy(pca_held, ct, seed=seed)[0],
        "perturbation probe from μ_ν(x, u=0)": probe_accuracy(pca_singles, lab, seed=seed)[0],
    }
    return rep


# ------------------------------------------------------------------------------ validation
def validate(
    cfg: Config, part: str, seed: int, grid: dict[str, list[float]], *, every: int = 20
) -> list[dict[str, Any]]:
    """Score training settings on validation cells of the singles (the doubles are not used).

    The training split's singles and controls lose 20% of their cells to a validation set; for
    each combination of ``grid`` (keys among ``alpha``, ``delta_init``, ``omega_init``; the rest
    from ``cfg.settings``) PerturbedVAE is fit on the rest and scored every ``every`` epochs:
    RMSE and Pearson Δ of the predicted single pseudobulks against the validation cells', the
    perturbation probe from ẑ_ι on the validation singles (with its chance rate) and, where the
    generator kept z_ι, the background R² on the validation cells.
    """
    from itertools import product

    split, dims = _data(cfg, part, seed)
    train = split.train
    rng = np.random.default_rng([seed, 7])
    val = np.zeros(train.n_cells, dtype=bool)
    for c in np.unique(train.conditions):
        idx = np.flatnonzero(train.conditions == c)
        val[rng.choice(idx, size=max(2, round(0.2 * idx.size)), replace=False)] = True
    fit_on, held = train.subset(~val), train.subset(val)
    singles = [c for c in held.condition_names() if c != CONTROL]
    v_ctrl = held.pseudobulk(CONTROL)
    v_sing = held.subset(~held.is_control)
    epochs = cfg.semi_epochs if part == "semi" else cfg.epochs
    keys = sorted(grid)
    rows = []
    for values in product(*(grid[k] for k in keys)):
        st = {**cfg.settings, "delta_init": _delta_init(cfg, part), **dict(zip(keys, values))}
        G, P = train.n_genes, len(train.perturbations)
        model = PerturbedVAE(G, P, *dims, alpha=st["alpha"], delta_init=st["delta_init"],
                             omega_init=st["omega_init"])  # fmt: skip

        def score(epoch: int, m: PerturbedVAE, st: dict = st) -> None:
            if epoch % every:
                return
            pred = m.predict([CONTROL, *singles], n_cells=cfg.pred_cells, seed=seed)
            err = [rmse(pred.mean[k], held.pseudobulk(c)) for k, c in enumerate(singles, 1)]
            r = [pearson_delta(pred.mean[k] - pred.mean[0], held.pseudobulk(c) - v_ctrl)
                 for k, c in enumerate(singles, 1)]  # fmt: skip
            acc, chance = probe_accuracy(m.background(v_sing), v_sing.conditions, seed=seed)
            row = {"part": part, "seed": seed, **st, "epochs": epoch,
                   "val RMSE": float(np.mean(err)), "val Pearson Δ": float(np.mean(r)),
                   "val probe from ẑ_ι": acc, "chance": chance}  # fmt: skip
            if "z_bg" in held.truth:
                row["val background R²"] = background_r2(
                    m.background(held), held.truth["z_bg"], seed=seed
                )
            rows.append(row)

        model.fit(fit_on, epochs=epochs, seed=seed, lr=cfg.lr, callback=score)
    return rows


# ------------------------------------------------------------------------------ unit checks
def _unit_checks(model: PerturbedVAE, split: Split) -> dict[str, bool]:
    """Acceptance item 5, re-measured on the trained seed-0 model."""
    A = model.A
    tri = bool(np.all(A[np.triu_indices_from(A)] == 0.0))
    bg = model.background(split.test.X[:64])
    net = model.net
    assert net is not None
    no_u_input = net.enc_bg[0].in_features == model.n_genes
    two_hot = model.predict(split.doubles[:1], n_cells=8).mean.shape == (1, model.n_genes)
    g = torch.Generator().manual_seed(0)
    d, b = model.d_pert, model.d_bg
    mu_n, lv_n = torch.randn(1, d, generator=g), 0.3 * torch.randn(1, d, generator=g)
    mu_b, lv_b = torch.randn(1, b, generator=g), 0.3 * torch.randn(1, b, generator=g)
    with torch.no_grad():
        A_t, C_t = net.A.double(), net.C.double()
        shift = torch.randn(1, d, generator=g, dtype=torch.float64)
        lo = net.log_omega2.double()[None]
        args = (mu_n.double(), lv_n.double(), mu_b.double(), lv_b.double(), A_t, C_t, shift, lo)
        kl = float(scm_kl(*args))
        mc = _kl_monte_carlo(*args)
    import anndata

    adata = anndata.AnnData(
        np.abs(np.random.default_rng(0).normal(size=(4, 3))),
        obs={"condition": ["ctrl", "A+ctrl", "A+B", "B"]},
    )
    gears = read_screen(adata)
    adata.obs["condition"] = ["ctrl", "A", "A_B", "B"]
    norman = read_screen(adata, sep="_")
    parse = list(gears.conditions) == list(norman.conditions) == ["ctrl", "A", "A+B", "B"]
    return {
        "5 A exactly zero on and above the diagonal after training": tri,
        "5 background encoder has no u input": no_u_input and bool(np.isfinite(bg).all()),
        "5 a two-hot u decodes with no retraining": two_hot,
        "5 closed-form KL = 1e5-sample Monte Carlo within 1%": abs(kl - mc) <= 0.01 * abs(mc),
        "5 read_screen parses GEARS- and Norman-style labels": parse,
    }


def _kl_monte_carlo(mu_n, lv_n, mu_b, lv_b, A, C, shift, log_omega2, n: int = 100_000) -> float:
    """E_{z_ι} KL(q(z_ν) ‖ p(z_ν | z_ι, u)) by sampling z_ι and z_ν (full covariance prior)."""
    g = torch.Generator().manual_seed(1)
    d = mu_n.shape[-1]
    z_b = mu_b + torch.exp(0.5 * lv_b) * torch.randn(
        n, mu_b.shape[-1], generator=g, dtype=torch.float64
    )
    z_n = mu_n + torch.exp(0.5 * lv_n) * torch.randn(n, d, generator=g, dtype=torch.float64)
    Minv = torch.linalg.inv(torch.eye(d, dtype=torch.float64) - A)
    cov = Minv @ torch.diag(torch.exp(log_omega2[0])) @ Minv.T
    mean = (z_b @ C.T + shift) @ Minv.T
    p = torch.distributions.MultivariateNormal(mean, covariance_matrix=cov)
    q = torch.distributions.Normal(mu_n, torch.exp(0.5 * lv_n))
    return float((q.log_prob(z_n).sum(-1) - p.log_prob(z_n)).mean())


# ------------------------------------------------------------------------------ figures
def _seed_figures(res: dict, split: Split, out_dir: Path, cfg: Config) -> list[Path]:
    """Figures of one synthetic seed: Δ scatter for two interacting doubles, PCA (UMAP) of ẑ_ι."""
    plt = require_matplotlib(package="perturbedvae")
    figs = []
    shown = (split.interacting + split.additive)[:2]
    fig, axes = plt.subplots(2, 2, figsize=(8, 7))
    for col, d in enumerate(shown):
        for row, name in enumerate((OURS, ADD)):
            p, t = res["deltas"][name][d]
            ax = axes[row, col]
            ax.scatter(t, p, s=8, alpha=0.6)
            lim = float(np.abs(np.concatenate([p, t])).max())
            ax.plot([-lim, lim], [-lim, lim], "k--", lw=0.8)
            kind = "interacting" if d in split.interacting else "additive"
            ax.set_title(f"{name}: {d} ({kind})", fontsize=9)
            ax.set_xlabel("true Δ")
            ax.set_ylabel("predicted Δ")
    fig.tight_layout()
    figs.append(save_figure(fig, out_dir / "delta_scatter.png"))
    test = split.test
    kinds = np.where(
        test.is_control, "control", np.where(np.isin(test.conditions, split.doubles), "double", "single")
    )  # fmt: skip
    embeds = {name: res["models"][name].background(test) for name in (OURS, NO_ALIGN)}
    methods = [("PCA", _pca2)]
    if cfg.umap and importlib.util.find_spec("umap") is not None:
        methods.append(("UMAP", _umap2))
    for label, fn in methods:
        fig, axes = plt.subplots(1, 2, figsize=(9, 4))
        for ax, (name, z) in zip(axes, embeds.items()):
            e = fn(z)
            for kind in ("control", "single", "double"):
                sel = kinds == kind
                ax.scatter(e[sel, 0], e[sel, 1], s=3, alpha=0.5, label=kind)
            ax.set_title(f"{label} of ẑ_ι, {name}", fontsize=9)
        axes[0].legend(markerscale=4)
        fig.tight_layout()
        figs.append(save_figure(fig, out_dir / f"{label.lower()}_background.png"))
    return figs


def _r2_figure(syn: list[dict], shift: list[dict], out_dir: Path) -> Path:
    """Background R² and the ẑ_ι perturbation probe, with and without alignment, both screens."""
    plt = require_matplotlib(package="perturbedvae")
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.5))
    for ax, col in zip(axes, ("background R²", "probe from ẑ_ι")):
        bars, means, ses = [], [], []
        for tag, runs in (("", syn), ("shift, ", shift)):
            for m, lab in ((OURS, "aligned"), (NO_ALIGN, "α=0")):
                v = [r["rep"][m][col] for r in runs]
                bars.append(f"{tag}{lab}")
                means.append(np.mean(v))
                ses.append(Estimate.of(v).se)
        ax.bar(bars, means, yerr=ses, capsize=4)
        if col == "probe from ẑ_ι":
            ax.axhline(np.mean([r["rep"]["chance"][col] for r in syn]), color="k", ls="--", lw=0.8)
        ax.set_ylabel(col)
        ax.tick_params(axis="x", labelsize=8)
    fig.tight_layout()
    return save_figure(fig, out_dir / "background_r2.png")


def _pca2(z: NDArray[np.float64]) -> NDArray[np.float64]:
    zc = z - z.mean(0)
    _, _, vt = np.linalg.svd(zc, full_matrices=False)
    return zc @ vt[:2].T


def _umap2(z: NDArray[np.float64]) -> NDArray[np.float64]:
    import umap

    return umap.UMAP(n_components=2, random_state=0).fit_transform(z)


# ------------------------------------------------------------------------------ runs
#: bumped when a part's record changes for the same config (the job cache's code key)
CODE_VERSION = 1


def reproduce(config: Config, out_dir: Path, progress: bool | None) -> ExperimentResult:
    """The three benchmarks over the seeds; tables, figures and checks. The (benchmark, seed)
    parts run on :class:`icml26_shared.jobs.JobRunner`, one thread each: cached under
    ``out_dir/cache``, so a stopped run resumes (``--set max_new_jobs=k`` runs it k parts at a
    time)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with single_thread():  # small models: one thread is fastest on a shared 2-core machine
        return _run(config, out_dir, progress)


def run_part(cfg: Config, part: str, seed: int, out_dir: Path, show: bool) -> dict[str, Any]:
    """One seed of one benchmark (``"syn"``, ``"semi"`` or ``"shift"``) as a JSON-able record.

    The first seed's synthetic part also makes the per-seed figures and re-measures the unit
    checks (acceptance item 5) on its trained model.
    """
    import time

    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    t0, c0 = time.perf_counter(), time.process_time()
    split, dims = _data(cfg, part, seed)
    models = _fit_models(split, cfg, part, seed, dims, show)
    rec: dict[str, Any] = {"part": part, "seed": seed, "n_interacting": len(split.interacting)}
    if part != "shift":
        res = _score_doubles(models, split, cfg, seed)
        rec["metrics"] = res["metrics"]
    probes = {"syn": _synthetic_probes, "semi": _semi_probes, "shift": _shift_probes}[part]
    rec["rep"] = probes(models, split, seed)
    if part == "syn" and seed == cfg.seeds[0]:
        rec["unit_checks"] = _unit_checks(models[OURS], split)
        res["models"] = models
        rec["figures"] = [str(f) for f in _seed_figures(res, split, out_dir, cfg)]
    rec["wall_s"] = round(time.perf_counter() - t0, 1)
    rec["cpu_s"] = round(time.process_time() - c0, 1)
    return rec


def _part(cfg: Config, out_dir: str, part: str, seed: int) -> dict[str, Any]:
    """One part in a worker, on one thread."""
    with single_thread():
        return run_part(cfg, part, seed, Path(out_dir), False)


def _run(cfg: Config, out_dir: Path, progress: bool | None) -> ExperimentResult:
    # the parts are independent: one single-threaded worker per core of the thread share
    # (cpu_share); with one thread they run here, one after another
    job_cfg = replace(cfg, max_new_jobs=None)  # a run control, not part of a result
    jobs = [
        Job(f"{part}-{seed}", _part, (job_cfg, str(out_dir), part, seed))
        for seed in cfg.seeds
        for part in PARTS
    ]
    runner = JobRunner(
        out_dir / "cache",
        {"config": config_dict(job_cfg), "code": CODE_VERSION},
        progress=progress,
        max_new_jobs=cfg.max_new_jobs,
        desc="seeds × benchmarks",
    )
    recs = runner.run(jobs)
    by = {p: [recs[f"{p}-{seed}"] for seed in cfg.seeds] for p in PARTS}
    return assemble(cfg, by["syn"], by["semi"], by["shift"], out_dir)


# ------------------------------------------------------------------------------ assembly
def _table(title: str, runs: list[dict], path: tuple[str, ...], columns: list[str],
           note: str = "", prefix: str = "") -> ResultTable:  # fmt: skip
    table = ResultTable(title, [prefix + c for c in columns], note=note)
    for method in _dig(runs[0], path):
        cells = {
            prefix + c: [_dig(r, path)[method][c] for r in runs]
            for c in columns
            if c in _dig(runs[0], path)[method]
        }
        table.add_row(method, cells)
    return table


def _dig(rec: dict, path: tuple[str, ...]) -> dict:
    for key in path:
        rec = rec[key]
    return rec


def _two_screens(
    title: str, syn: list[dict], semi: list[dict], group: str, note: str
) -> ResultTable:
    cols = [f"{tag} {c}" for tag in ("syn", "semi") for c in HEAD_COLS]
    table = ResultTable(title, cols, note=note)
    methods = list(syn[0]["metrics"][group])
    methods += [m for m in semi[0]["metrics"][group] if m not in methods]
    for m in methods:
        cells = {}
        for tag, runs in (("syn", syn), ("semi", semi)):
            if m in runs[0]["metrics"][group]:
                for c in HEAD_COLS:
                    cells[f"{tag} {c}"] = [r["metrics"][group][m][c] for r in runs]
        table.add_row(m, cells)
    return table


def _est(runs: list[dict], path: tuple[str, ...], method: str, col: str) -> Estimate:
    return Estimate.of([_dig(r, path)[method][col] for r in runs])


def _margin(runs: list[dict], col: str, lower: bool) -> float:
    """How far ours is ahead of the better of additive and ridge on the interacting doubles
    (> 0: ahead of both; ``lower``: smaller is better)."""
    m = {k: _est(runs, ("metrics", "interacting"), k, col).mean for k in (OURS, ADD, RIDGE)}
    if lower:
        return min(m[ADD], m[RIDGE]) - m[OURS]
    return m[OURS] - max(m[ADD], m[RIDGE])


def assemble(cfg: Config, syn: list[dict], semi: list[dict], shift: list[dict],
             out_dir: Path) -> ExperimentResult:  # fmt: skip
    """Tables, acceptance checks and the R² figure from the per-seed records of :func:`run_part`."""
    result = ExperimentResult(
        "perturbedvae", "unseen interacting doubles, u-free probes and the alignment term"
    )
    first = [r for r in syn if "unit_checks" in r]
    if not first:
        raise ValueError(f"the synthetic record of seed {cfg.seeds[0]} is missing")
    n = len(syn)
    n_int = [r["n_interacting"] for r in syn], [r["n_interacting"] for r in semi]
    note = (
        f"mean ± s.e. over {n} seeds; 20 held-out doubles per seed, of which "
        f"{'/'.join(map(str, n_int[0]))} (synthetic) and {'/'.join(map(str, n_int[1]))} "
        "(semi-synthetic) interact; lower is better except Pearson"
    )
    t_int = _two_screens("Interacting held-out doubles: synthetic (syn) and semi-synthetic PBMC "
                         "(semi)", syn, semi, "interacting", note)  # fmt: skip
    t_add = _two_screens("Additive held-out doubles", syn, semi, "additive", note)
    t_all = _table("Synthetic screen: all held-out doubles", syn, ("metrics", "all"), DOUBLE_COLS)
    rep_cols = ["background R²", "probe from ẑ_ι", "probe from μ_ν(x, u=0)",
                "R²(ẑ_ν → z_ν), condition means removed", "R²(ẑ_ν → z_ι)"]  # fmt: skip
    t_rep = _table(
        "Synthetic screen: background R² and u-free probes (held-out cells)", syn, ("rep",),
        rep_cols, "probes on held-out cells of the singles; μ_ν(x, u=0) asks the perturbation "
        "encoder from x alone; the within-condition R² removes what u could carry",
    )  # fmt: skip
    t_shift = _table(
        f"Perturbations that also shift the background (synthetic, |b_p| = {cfg.bg_shift})",
        shift,
        ("rep",),
        ["probe from ẑ_ι", "background R²"],
    )
    t_semi = _table("Semi-synthetic PBMC: all held-out doubles", semi, ("metrics", "all"),
                    DOUBLE_COLS)  # fmt: skip
    semi_cols = ["cell-type probe from ẑ_ι", "perturbation probe from μ_ν(x, u=0)",
                 "perturbation probe from ẑ_ι"]  # fmt: skip
    t_semi_rep = _table("Semi-synthetic PBMC: probes (held-out pool cells)", semi, ("rep",),
                        semi_cols)  # fmt: skip
    result.tables += [t_int, t_add, t_all, t_rep, t_shift, t_semi, t_semi_rep]

    rep = ("rep",)
    chance = _est(syn, rep, "chance", "probe from ẑ_ι").mean
    s_chance = _est(shift, rep, "chance", "probe from ẑ_ι").mean
    s_a0, s_ours = (_est(shift, rep, m, "probe from ẑ_ι").mean for m in (NO_ALIGN, OURS))
    s_r2 = {m: _est(shift, rep, m, "background R²") for m in (NO_ALIGN, OURS)}
    r2 = _est(syn, rep, OURS, "background R²").mean
    rm_all = ("metrics", "all")
    diff = Estimate.of([r["metrics"]["all"][OURS]["RMSE"] - r["metrics"]["all"][NO_ALIGN]["RMSE"]
                        for r in syn])  # fmt: skip
    semi_rep_ours = _est(semi, rep, OURS, "perturbation probe from μ_ν(x, u=0)").mean
    c = result.check
    for tag, runs, what in (("syn", syn, "synthetic"), ("semi", semi, "semi-synthetic")):
        for col, lower, key in (
            ("RMSE", True, "rmse"),
            ("RMSE top-20 DE", True, "rmse20"),
            ("Pearson Δ", False, "pearson"),
        ):
            side = "below" if lower else "above"
            c(
                f"a-{tag}-{key}",
                _margin(runs, col, lower),
                ">",
                0.0,
                f"a {what} interacting doubles: {col} {side} additive and ridge",
            )
    c(
        "b-shift-a0",
        s_a0 - s_chance,
        ">=",
        0.10,
        "b background shift: α=0's ẑ_ι probe >= chance + 10 points",
    )
    c(
        "b-shift-aligned",
        s_ours - s_chance,
        "<=",
        0.05,
        "b background shift: with alignment the ẑ_ι probe <= chance + 5 points",
    )
    c(
        "b-shift-r2",
        s_r2[OURS].mean - s_r2[NO_ALIGN].mean,
        ">=",
        -max(s_r2[NO_ALIGN].se, s_r2[OURS].se),
        "b background shift: alignment does not lower background R² (within one s.e.)",
    )
    c("c-r2", r2, ">=", 0.90, "c background R² >= 0.90")
    c("c-leak", _est(syn, rep, OURS, "R²(ẑ_ν → z_ι)").mean, "<=", 0.10, "c R²(ẑ_ν → z_ι) <= 0.10")
    c("d-rmse", diff.mean, "<=", diff.se, "d doubles RMSE within one s.e. of α=0's or below")
    c(
        "2-pearson",
        _est(syn, rm_all, OURS, "Pearson Δ").mean,
        ">=",
        0.8,
        "2 Pearson Δ >= 0.8 (all synthetic doubles)",
    )
    c(
        "2-energy",
        _est(syn, rm_all, OURS, "energy distance").mean
        - _est(syn, rm_all, ADD, "energy distance").mean,
        "<",
        0.0,
        "2 energy distance below additive's",
    )
    c(
        "3-probe",
        _est(syn, rep, OURS, "probe from ẑ_ι").mean - chance,
        "<=",
        0.10,
        "3 probe from ẑ_ι <= chance + 10 points",
    )
    c(
        "3-ufree",
        _est(syn, rep, OURS, "probe from μ_ν(x, u=0)").mean
        - _est(syn, rep, "true latents", "probe from μ_ν(x, u=0)").mean,
        ">=",
        -0.05,
        "3 u-free probe from μ_ν(x, u=0) >= true z_ν's - 5 points",
    )
    pca = "PCA(50) on expression"
    c(
        "4-ufree",
        semi_rep_ours - _est(semi, rep, pca, "perturbation probe from μ_ν(x, u=0)").mean,
        ">=",
        0.0,
        "4 u-free perturbation probe from μ_ν(x, u=0) >= PCA(50)'s",
    )
    c(
        "4-celltype",
        _est(semi, rep, OURS, "cell-type probe from ẑ_ι").mean
        / _est(semi, rep, pca, "cell-type probe from ẑ_ι").mean,
        ">=",
        0.9,
        "4 cell-type probe from ẑ_ι >= 0.9 × PCA(50)'s",
    )
    c(
        "4-pearson20",
        _est(semi, rm_all, OURS, "Pearson Δ top-20 DE").mean,
        ">=",
        0.7,
        "4 semi-synthetic Pearson Δ top-20 DE >= 0.7",
    )
    hi = ("metrics", "interacting")
    c(
        "6-nosep",
        max(_est(r, hi, OURS, "RMSE").mean - _est(r, hi, NO_SEP, "RMSE").mean for r in (syn, semi)),
        "<",
        0.0,
        "6 interacting doubles RMSE below the no-separation ablation (both screens)",
    )
    result.checks.update(first[0]["unit_checks"])
    result.figures = [Path(f) for f in first[0]["figures"]] + [_r2_figure(syn, shift, out_dir)]
    fmt = {
        tag: ", ".join(f"{m} {_est(runs, hi, m, 'RMSE').mean:.3f}" for m in (OURS, ADD, RIDGE))
        for tag, runs in (("synthetic", syn), ("semi-synthetic", semi))
    }
    result.headline = (
        f"interacting held-out doubles RMSE: synthetic {fmt['synthetic']}; semi-synthetic "
        f"{fmt['semi-synthetic']}; background shift ẑ_ι probe {s_ours:.3f} aligned vs "
        f"{s_a0:.3f} α=0 (chance {s_chance:.3f})"
    )
    st = cfg.settings
    result.notes += [
        f"epochs {cfg.epochs} (semi-synthetic {cfg.semi_epochs}), lr {cfg.lr}, batch 64, hidden 256; "
        f"align 'mean', α {st['alpha']}, delta_init {st['delta_init']} (semi-synthetic "
        f"{st['semi_delta_init']}), omega_init {st['omega_init']}, chosen on validation cells of "
        "the singles (docs/validation.json)",
        f"sizes: synthetic {cfg.syn_cells} cells per condition, {cfg.syn_controls} controls; "
        f"semi-synthetic {cfg.semi_cells} / {cfg.semi_controls}; every check is measured at "
        "these sizes",
        f"chance for the synthetic label probe: {chance:.3f} (12 singles)",
        "reconstructed from the paper's description; the Gaussian SCM parametrisation is ours",
        "seeds "
        + ", ".join(
            f"{r['part']} {r['seed']}: {r['wall_s']} s wall / {r['cpu_s']} s CPU"
            for r in syn + semi + shift
        ),
    ]
    return result


EXPERIMENT = Experiment(
    "perturbedvae",
    "PerturbedVAE vs additive, ridge, α=0, the no-separation ablation and CPA-like on unseen "
    "interacting doubles; u-free probes; alignment where perturbations shift the background",
    reproduce,
    QUICK,
    FULL,
)
