"""``python -m shnap reproduce [--quick]``: one audit of the synthetic world per editor.

For every editor (the diffusion bridge, RePaint on the same UNet, zero / global-mean / shell-mean
fills) it measures: oracle recovery (Spearman of SHNAP's main and pairwise terms vs the oracle's
true ``a_i``, ``b_ij``; median LMPI R²; RMSE), the electrode shortcut of the zero-padded CNN on
negative cases (electrode share of ``v(N) - v(empty)``; random lung ROIs' mean phi; the oracle's
electrode phi), the SNAP radial slope (HC3 p, case-clustered bootstrap CI) for the zero-padded
CNN, the oracle and the reflect-padded CNN trained on location-balanced data, realism
(discriminator AUC beside the twin removal's, nodule check, the editor's error on the audited
CNN against the twin removal) and time. With the bridge, the radial ablation's 12 CNNs (2 x 2
padding x placement, 3 seeds, depth-independent world; :mod:`shnap._ablation`) are scored on
the same insertions. The acceptance items of the spec are recorded as
checks. Setting of Sobieski, Grzywaczewski et al. (arXiv 2602.02560); reconstructed, and no
figure here is the paper's.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from icml26_shared.config import config_dict
from icml26_shared.experiment import (
    Experiment,
    ExperimentResult,
    ResultTable,
    require_matplotlib,
    save_figure,
)
from icml26_shared.experiment import (
    progress as progress_bar,
)
from icml26_shared.jobs import Job, JobRunner
from icml26_shared.threads import threads

from ._ablation import AblationResult, ablation_configs, padding_placement
from ._cnn import CNN_WEIGHTS_VERSION, YEARS, CNNConfig, train_risk_cnn
from ._game import attribution_from_game, shnap
from ._oracle import OracleRisk
from ._snap import SnapMap, snap_grid
from ._weights import WEIGHTS_VERSION
from ._world import (
    NoduleSpec,
    make_phantom,
    nodule_library,
    random_lung_rois,
    random_nodule_specs,
)

__all__ = ["EXPERIMENT", "FULL", "QUICK", "Config", "audit_configs", "cnn_configs", "reproduce"]


@dataclass(frozen=True)
class Config:
    """The sizes of the audits (the defaults are the full mode; ``--set key=value``).

    ``cheap`` editors (naive fills) get the plain counts, costly ones (bridge, RePaint) the
    ``*_costly`` counts, RePaint its ``*_peer`` ones (:meth:`counts`).

    Attributes:
        cnn_cases, cnn_epochs: training phantoms and epochs of the two audited CNNs.
        oracle_cases, oracle_cases_costly: cases of the oracle-recovery audit (item 4).
        shortcut_cases, shortcut_cases_costly: oracle-negative cases of the electrode
            shortcut audit (item 5).
        snap_cases, snap_cases_costly: cases of the SNAP radial audit (item 6).
        snap_points, snap_points_costly: SNAP insertion points per case.
        realism_crops: removed crops of the realism study (item 3).
        k: SHNAP's interaction order.
        ablation_cases, ablation_epochs, ablation_seeds: the radial ablation's CNNs (2 x 2
            cells x seeds, depth-independent world).
        heldout_cases: fresh phantoms of each audited CNN's held-out AUC.
        bridge_steps: the bridge sampler's network calls per removal (item 7 is timed at the
            spec's 50 whatever this is).
        insert_steps: the bridge's insertion steps; None: ``round(bridge_steps * tau)`` (15 at
            50 steps).
        oracle_cases_peer, snap_cases_peer, realism_crops_peer: RePaint's oracle cases, SNAP
            cases and realism crops (None: the costly counts). Its 2 resampling jumps make
            each of its audits about twice the bridge's; the peer's row gets fewer cases
            (stated in the tables) so that the full mode fits 45 minutes on 2 cores.
        repaint: audit RePaint too (its shipped weights).
        threads: torch's and the BLAS pools' threads for the whole run.
        max_new_jobs: run at most this many uncached audit jobs (one per editor, then the
            realism study), then stop (exit 3: run again).
    """

    cnn_cases: int = 3000
    cnn_epochs: int = 25
    oracle_cases: int = 50
    oracle_cases_costly: int = 50
    shortcut_cases: int = 20
    shortcut_cases_costly: int = 20
    snap_cases: int = 20
    snap_cases_costly: int = 20
    snap_points: int = 40
    snap_points_costly: int = 40
    realism_crops: int = 500
    k: int = 2
    ablation_cases: int = 1500
    ablation_epochs: int = 25
    ablation_seeds: int = 3
    heldout_cases: int = 200
    bridge_steps: int = 50
    insert_steps: int | None = None
    oracle_cases_peer: int | None = 30
    snap_cases_peer: int | None = 8
    realism_crops_peer: int | None = 250
    repaint: bool = True
    threads: int = 2
    max_new_jobs: int | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, int) and not isinstance(v, bool) and v < 1:
                raise ValueError(f"{f.name} must be >= 1, got {v}")

    def counts(self, editor: str) -> dict[str, int]:
        """The audit sizes of ``editor``: ``oracle``, ``shortcut``, ``snap`` (cases),
        ``points`` (SNAP points per case) and ``realism`` (crops)."""
        costly = editor in COSTLY
        out = {
            "oracle": self.oracle_cases_costly if costly else self.oracle_cases,
            "shortcut": self.shortcut_cases_costly if costly else self.shortcut_cases,
            "snap": self.snap_cases_costly if costly else self.snap_cases,
            "points": self.snap_points_costly if costly else self.snap_points,
            "realism": self.realism_crops,
        }
        if editor == "repaint":
            out["oracle"] = self.oracle_cases_peer or out["oracle"]
            out["snap"] = self.snap_cases_peer or out["snap"]
            out["realism"] = self.realism_crops_peer or out["realism"]
        return out


FULL = Config()
#: quick: fewer cases, 60 + 60 realism crops, 60 held-out phantoms and 10 sampler steps
#: per removal (the same nodule-free share and twin error as 50 steps, measured on 60
#: removals); insertions keep the full mode's 15 steps (at 3 the oracle's SNAP slope moved
#: off 0); RePaint in the full mode only. About 4 minutes on 2 cores on the shipped weights.
QUICK = Config(
    cnn_cases=1500,
    oracle_cases=10,
    oracle_cases_costly=4,
    shortcut_cases=10,
    shortcut_cases_costly=4,
    snap_cases=8,
    snap_cases_costly=4,
    snap_points=20,
    snap_points_costly=15,
    realism_crops=60,
    ablation_cases=600,
    ablation_epochs=15,
    heldout_cases=60,
    bridge_steps=10,
    insert_steps=15,
    oracle_cases_peer=None,
    snap_cases_peer=None,
    realism_crops_peer=None,
    repaint=False,
)
#: item 7's sampler steps (spec)
RUNTIME_STEPS = 50
COSTLY = ("bridge", "repaint")
#: bumped when an audit job's result changes for the same config (the job cache key's code part)
CODE_VERSION = 1
# item 3: the tiny-CNN discriminator trains only where the feature logistic regression's AUC
# is below this (naive fills sit at 0.999-1.0, where the CNN cannot change the verdict)
CNN_BELOW = 0.99


def audit_configs(config: Config) -> dict[str, CNNConfig]:
    """The two audited CNNs: zero padding on flawed data, reflect on location-balanced data."""
    sz = config
    return {
        "cnn-zeros": CNNConfig("zeros", False, sz.cnn_cases, sz.cnn_epochs),
        "cnn-reflect": CNNConfig("reflect", True, sz.cnn_cases, sz.cnn_epochs),
    }


def cnn_configs(config: Config) -> list[CNNConfig]:
    """Every CNN the reproduce trains (the audited two and the ablation's)."""
    sz = config
    abl = ablation_configs(sz.ablation_cases, sz.ablation_epochs, sz.ablation_seeds)
    return [*audit_configs(config).values(), *abl.values()]


def _editors(config: Config, progress: bool | None) -> tuple[dict[str, Any], list[str]]:
    """The editors: the bridge, RePaint (full mode; shipped weights) and the naive fills."""
    from ._bridge import Bridge, BridgeConfig
    from ._fills import GlobalMeanFill, RePaint, ShellMeanFill, ZeroFill

    sz = config
    steps = sz.bridge_steps
    bridge = Bridge.pretrained(config=BridgeConfig(steps=steps, insert_steps=sz.insert_steps))
    eds: dict[str, Any] = {"bridge": bridge}
    notes = [
        f"bridge: {'cached' if bridge.record.get('cached') else 'trained'} weights, "
        f"{bridge.record.get('seconds', float('nan')):.0f} s training; sampler {steps} steps "
        f"per removal, {sz.insert_steps or max(1, round(steps * 0.3))} per insertion"
    ]
    if sz.repaint:
        eds["repaint"] = RePaint.pretrained()
    else:
        notes.append("repaint: full mode only (each of its audits costs about twice the bridge's)")
    eds.update(zero=ZeroFill(), **{"global-mean": GlobalMeanFill(), "shell-mean": ShellMeanFill()})
    return eds, notes


# ---------------------------------------------------------------------------------------------
def _algebra_check() -> dict[str, float]:
    """Acceptance 1 on an exact LMPI game (N = 5) and with a triple term."""
    rng = np.random.default_rng(0)
    n = 5
    a = rng.normal(size=n)
    b = np.triu(rng.normal(size=(n, n)), 1)
    b = b + b.T

    def game(keep: np.ndarray, triple: float = 0.0) -> float:
        z = keep.astype(float)
        return 0.3 + z @ a + 0.5 * z @ b @ z + triple * z[0] * z[1] * z[2]

    att = attribution_from_game(game, n)
    att3 = attribution_from_game(lambda k: game(k, 1.0), n)
    err = max(np.abs(att.phi - a).max(), np.abs(att.phi_pair - b).max())
    return {"max_err": float(err), "eff": att.efficiency_gap(), "r2": att.r2, "r2_triple": att3.r2}


def _oracle_cases(n: int, seed: int) -> list[Any]:
    rng = np.random.default_rng([seed, 4])
    out = []
    for i in range(n):
        specs = random_nodule_specs(int(rng.integers(3, 5)), rng)
        specs = [NoduleSpec(max(s.radius, 2.0), s.kind, s.spiculation) for s in specs]
        ph = make_phantom(32, nodules=specs, electrodes=1, seed=10_000 + seed * 1000 + i)
        if len(ph.nodules) >= 2:
            out.append(ph)
    return out


def _negative_cases(n: int, seed: int) -> list[Any]:
    """Cases negative under the oracle's hazard (no event by year 6), one electrode and two
    nodules each (with two random lung ROIs: N = 5 players, the runtime case of item 7)."""
    rng = np.random.default_rng([seed, 5])
    out = []
    i = 0
    while len(out) < n:
        specs = random_nodule_specs(2, rng)
        ph = make_phantom(32, nodules=specs, electrodes=1, seed=20_000 + seed * 1000 + i)
        i += 1
        logit = OracleRisk.for_phantom(ph).logit(ph.image)
        negative = rng.exponential(1.0 / (CNNConfig().base_rate * np.exp(logit))) > YEARS
        if negative and len(ph.nodules) == 2:
            out.append(ph)
    return out


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.spearmanr(x, y).statistic)


#: the oracle's recovered terms are rounded to this many decimals (logits) before their
#: Spearman: a term that is exactly 0 (a pair that does not interact) comes out of the float
#: arithmetic of SHNAP as a residue of about 1e-16 of either sign, and ranking those residues
#: breaks the truth's ties by rounding error. The true pairwise terms take two values (0 and
#: b), so an estimate that separates them perfectly without ties scores sqrt(3 p (1 - p)) (p:
#: the share of interacting pairs; 0.80 on the full mode's 50 cases); unrounded, the exact
#: removal scores about that
TIE_DECIMALS = 9


def _oracle_recovery(
    editor: Any, cases: list[Any], k: int, show: bool, desc: str
) -> dict[str, Any]:
    """SHNAP of the oracle on ``cases`` against its true terms: Spearman of main effects and
    of pairwise terms (rounded to ``TIE_DECIMALS``; the unrounded pair Spearman beside), median
    LMPI R², RMSE of all terms, seconds per case and locality violations."""
    main, main_t, pair, pair_t, r2s, secs, viol = [], [], [], [], [], [], 0
    for ph in progress_bar(cases, enabled=show, desc=desc):
        oracle = OracleRisk.for_phantom(ph)
        a, b = oracle.truth(ph)
        att = shnap(oracle, ph.image, list(ph.nodule_masks), editor, k=k)
        iu = np.triu_indices(len(a), 1)
        main += list(att.phi)
        main_t += list(a)
        pair += list(att.phi_pair[iu])
        pair_t += list(b[iu])
        r2s.append(att.r2)
        secs.append(att.seconds)
        viol += att.extra["locality_violations"]
    allp = np.r_[main, pair]
    allt = np.r_[main_t, pair_t]
    est_main, est_pair = (np.round(np.array(v), TIE_DECIMALS) for v in (main, pair))
    return {
        "rho_main": _spearman(est_main, np.array(main_t)),
        "rho_pair": _spearman(est_pair, np.array(pair_t)),
        "rho_pair_unrounded": _spearman(np.array(pair), np.array(pair_t)),
        "interacting_share": float(np.mean(np.array(pair_t) != 0)) if pair_t else float("nan"),
        "r2": float(np.median(r2s)),
        "rmse": float(np.sqrt(np.mean((allp - allt) ** 2))),
        "seconds": float(np.mean(secs)),
        "violations": viol,
        "n_terms": len(main),
    }


def _shortcut(
    editor: Any, cases: list[Any], models: dict[str, Any], k: int, show: bool, desc: str
) -> dict[str, Any]:
    phi_e, total, roi, phi_e_oracle, viol, secs = [], [], [], [], 0, []
    for ph in progress_bar(cases, enabled=show, desc=desc):
        rois = random_lung_rois(ph, 2, seed=1)
        players = {"electrode": ph.electrode_masks[0]}
        players.update({f"nodule{i}": m for i, m in enumerate(ph.nodule_masks)})
        players.update({"roi0": rois[0], "roi1": rois[1]})
        mods = {**models, "oracle": OracleRisk.for_phantom(ph)}
        att = shnap(mods, ph.image, players, editor, k=k)
        c = att["cnn-zeros"]
        phi_e.append(c["electrode"])
        total.append(c.total)
        roi += [c["roi0"], c["roi1"]]
        phi_e_oracle.append(att["oracle"]["electrode"])
        viol += c.extra["locality_violations"]
        secs.append(c.seconds)
    return {
        "seconds": secs,
        "electrode_phi": float(np.mean(phi_e)),
        "total": float(np.mean(total)),
        "share": float(np.mean(phi_e) / np.mean(total)) if np.mean(total) != 0 else float("nan"),
        "roi_mean": float(np.mean(roi)),
        "oracle_electrode": float(np.max(np.abs(phi_e_oracle))),
        "violations": viol,
    }


def _radial(
    editor: Any, n_cases: int, points: int, models: dict[str, Any], show: bool, desc: str
) -> tuple[dict[str, Any], dict[str, SnapMap]]:
    lib = nodule_library(2, seed=3)
    per: dict[str, list[SnapMap]] = {m: [] for m in [*models, "oracle"]}
    for case in progress_bar(range(n_cases), enabled=show, desc=desc):
        ph = make_phantom(32, n_nodules=1, seed=30_000 + case)
        mods = {**models, "oracle": OracleRisk.for_phantom(ph)}
        maps = snap_grid(
            mods,
            ph.image,
            ph.lung_mask,
            lib,
            editor,
            avoid=ph.objects() | ph.vessel_mask,
            lobe=ph.lobe,
            case=case,
            max_points=points,
            seed=case,
        )
        for m in per:
            per[m].append(maps[m])
    joined = {m: SnapMap.concat(v) for m, v in per.items()}
    fits = {m: s.radial_regression(by_nodule=True, n_boot=1000) for m, s in joined.items()}
    return {"fits": fits, "violations": joined["oracle"].locality_violations}, joined


# ---------------------------------------------------------------------------------------------
def _figures(out_dir: Path, editors: dict[str, Any], snaps: dict[str, SnapMap]) -> list[Path]:
    plt = require_matplotlib("plot", "shnap")
    figs = []
    ph = make_phantom(32, n_nodules=3, electrodes=1, seed=10_001)
    if ph.nodule_masks:
        from scipy import ndimage

        m = ph.nodule_masks[0]
        fill = ndimage.binary_dilation(m, ndimage.generate_binary_structure(3, 3))
        z = ph.nodules[0].centre[0]
        fig, ax = plt.subplots(1, 1 + len(editors), figsize=(2.6 * (1 + len(editors)), 2.8))
        ax = np.atleast_1d(ax)
        ax[0].imshow(ph.image[z], cmap="gray", vmin=-1, vmax=1)
        ax[0].set_title("case")
        for a, (name, ed) in zip(ax[1:], editors.items()):
            a.imshow(ed.remove(ph.image, fill, 0)[z], cmap="gray", vmin=-1, vmax=1)
            a.set_title(f"{name}: nodule removed", fontsize=8)
        for a in ax:
            a.axis("off")
        figs.append(save_figure(fig, out_dir / "removal.png"))
    if snaps:
        fig, ax = plt.subplots(1, len(snaps), figsize=(3.4 * len(snaps), 3))
        ax = np.atleast_1d(ax)
        for a, (name, s) in zip(ax, snaps.items()):
            fit = s.radial_regression(n_boot=200)
            a.scatter(s.distance, s.psi, s=6, alpha=0.6)
            xs = np.linspace(s.distance.min(), s.distance.max(), 10)
            a.plot(xs, fit.coef[0] + fit.slope * xs, "r-")
            a.set_title(f"{name}: slope {fit.slope:.3f}", fontsize=8)
            a.set_xlabel("distance to lung boundary (voxels)")
        ax[0].set_ylabel("psi (logit change)")
        fig.tight_layout()
        figs.append(save_figure(fig, out_dir / "snap_radial.png"))
    return figs


def _heldout_auc(model: Any, balanced: bool, n: int = 200) -> float:
    """AUC of the year-6 logit vs the event label on ``n`` fresh training-like phantoms."""
    from ._cnn import _auc, training_set

    imgs, years, _ = training_set(CNNConfig(location_balanced=balanced, n_cases=n, seed=777))
    logits = np.concatenate([model(imgs[i : i + 50, None]) for i in range(0, n, 50)])
    return _auc(logits[years > 0], logits[years == 0])


def reproduce(config: Config, out_dir: Path, progress: bool | None) -> ExperimentResult:
    """Run the audits (module docstring) and record the spec's acceptance items as checks, on
    ``config.threads`` threads (torch's and the BLAS pools', restored after)."""
    with threads(config.threads):
        return _reproduce(config, Path(out_dir), progress)


def _reproduce(config: Config, out_dir: Path, progress: bool | None) -> ExperimentResult:
    sz = config
    result = ExperimentResult("shnap", "SHNAP/SNAP audits of a synthetic CT world, per editor")
    t0 = time.perf_counter()
    models, records, _, abl_records = _trained_cnns(config)
    (cnn_z, cnn_r), (rec_z, rec_r) = models.values(), records.values()
    train_tab = ResultTable(
        "Audited CNNs (trained on phantoms, cached)",
        ["cases", "epochs", "train AUC (6 y)", "held-out AUC", "positives", "seconds", "cached"],
        note=f"Held-out AUC: {sz.heldout_cases} fresh phantoms from the same generator "
        "(flaws included).",
    )
    for name, label, rec, model in (
        ("cnn-zeros", "cnn-zeros (flawed data)", rec_z, cnn_z),
        ("cnn-reflect", "cnn-reflect (location-balanced)", rec_r, cnn_r),
    ):
        heldout = _heldout_auc(model, rec["config"]["location_balanced"], sz.heldout_cases)
        cells = {
            "cases": rec["config"]["n_cases"],
            "epochs": rec["config"]["epochs"],
            "train AUC (6 y)": rec["train_auc"],
            "held-out AUC": heldout,
            "positives": rec["positive_rate"],
            "seconds": rec["seconds"],
            "cached": bool(rec["cached"]),
        }
        train_tab.add_row(name, cells, label=label)
    result.tables.append(train_tab)
    alg = _algebra_check()
    result.check("1-phi", alg["max_err"], "<", 1e-10, "1 algebra: phi = (a, b) to 1e-10")
    result.check("1-efficiency", alg["eff"], "<", 1e-10, "1 algebra: efficiency gap")
    result.check("1-r2", abs(alg["r2"] - 1), "<", 1e-10, "1 algebra: |R2 - 1| (exact LMPI)")
    result.check("1-triple", alg["r2_triple"], "<", 1, "1 algebra: R2 with a triple term")
    editors, notes = _editors(config, progress)
    result.notes += notes
    jobs = [Job(f"audit-{name}", _audit, (_job_config(config), name)) for name in editors]
    jobs.append(Job("realism", _realism_job, (_job_config(config),)))
    done = _runner(config, out_dir, progress).run(jobs)
    per: dict[str, dict[str, Any]] = {name: done[f"audit-{name}"] for name in editors}
    abl_cfg = ablation_configs(sz.ablation_cases, sz.ablation_epochs, sz.ablation_seeds)
    table = ResultTable(
        "SHNAP / SNAP audits per editor",
        [
            "oracle rho main",
            "oracle rho pair",
            "LMPI R2 (median)",
            "oracle RMSE",
            "electrode share",
            "ROI mean phi",
            "oracle electrode |phi|",
            "radial slope (cnn-zeros)",
            "discriminator AUC",
            "nodule-free",
            "s / SHNAP case",
            "cases (oracle/shortcut/SNAP)",
        ],
        note="Oracle columns: SHNAP of the oracle vs its true terms (Spearman on terms rounded "
        f"to 1e-{TIE_DECIMALS} logits, so exact zeros tie). Electrode share: mean "
        "phi_electrode / mean (v(N) - v(empty)) of the zero-padded CNN on oracle-negative cases. "
        "Radial slope: SNAP psi per voxel of depth, HC3, with the case-clustered bootstrap CI.",
    )
    radial_tab = ResultTable(
        "SNAP radial regression (psi ~ distance to lung boundary + nodule x distance)",
        ["slope", "95% CI (case bootstrap)", "p (HC3)", "points", "cases"],
    )
    snaps_for_fig: dict[str, SnapMap] = {}
    for name, p in per.items():
        rad, joined = p["radial"], p.pop("snaps")
        for m, fit in rad["fits"].items():
            if m in abl_cfg:
                continue
            lo, hi = fit.ci()
            radial_tab.add_row(
                f"{name}/{m}",
                {
                    "slope": fit.slope,
                    "95% CI (case bootstrap)": f"[{lo:.3f}, {hi:.3f}]",
                    "p (HC3)": fit.p,
                    "points": fit.n,
                    "cases": fit.n_cases,
                },
                label=f"{name} / {m}",
            )
        if name == "bridge" or not snaps_for_fig:
            snaps_for_fig = joined
    for name, real in done["realism"].items():
        per[name]["realism"] = real
    for name, p in per.items():
        rec, sc, real = p["oracle"], p["shortcut"], p["realism"]
        fz = p["radial"]["fits"]["cnn-zeros"]
        table.add_row(
            name,
            {
                "oracle rho main": rec["rho_main"],
                "oracle rho pair": rec["rho_pair"],
                "LMPI R2 (median)": rec["r2"],
                "oracle RMSE": rec["rmse"],
                "electrode share": sc["share"],
                "ROI mean phi": sc["roi_mean"],
                "oracle electrode |phi|": sc["oracle_electrode"],
                "radial slope (cnn-zeros)": f"{fz.slope:.3f} [{fz.ci()[0]:.3f}, {fz.ci()[1]:.3f}]",
                "discriminator AUC": real.get("auc"),
                "nodule-free": real.get("nodule_free"),
                "s / SHNAP case": rec["seconds"],
                "cases (oracle/shortcut/SNAP)": p["cases"],
            },
        )
    result.tables += [table, radial_tab, _realism_table(per)]
    if "bridge" in per:
        result.tables += _ablation_tables(per["bridge"]["ablation"], abl_records)
    _record_checks(result, per)
    result.figures += _figures(out_dir, editors, snaps_for_fig)
    result.notes.append(
        f"CNNs: {rec_z['config']['n_cases']} training phantoms, {rec_z['config']['epochs']} epochs; "
        f"{config.threads} thread(s); total {time.perf_counter() - t0:.0f} s."
    )
    result.notes.append(
        "Reconstructed method (the paper's code is not released); no figure is the paper's."
    )
    b = per.get("bridge")
    if b:
        o, share = b["oracle"], b["oracle"]["interacting_share"]
        result.notes.append(
            f"bridge: oracle pairwise Spearman {o['rho_pair']:.3f} on terms rounded to "
            f"1e-{TIE_DECIMALS} logits, {o['rho_pair_unrounded']:.3f} unrounded; the true "
            f"pairwise terms are 0 or b ({share:.0%} of pairs interact), and an estimate that "
            "separates the two perfectly but has no ties (float residues in place of the exact "
            f"zeros) scores sqrt(3 p (1 - p)) = {np.sqrt(3 * share * (1 - share)):.3f}"
        )
        result.headline = (
            f"bridge: oracle rho {b['oracle']['rho_main']:.2f}/{b['oracle']['rho_pair']:.2f}, "
            f"electrode share {b['shortcut']['share']:.2f}, "
            f"radial slope {b['radial']['fits']['cnn-zeros'].slope:.3f}"
        )
    return result


def _trained_cnns(
    config: Config,
) -> tuple[dict[str, Any], dict[str, dict], dict[str, Any], dict[str, dict]]:
    """The audited CNNs and the ablation's, each with its training record (trained once, then
    read from the weights cache or the shipped weights)."""
    models, records, abl_models, abl_records = {}, {}, {}, {}
    for name, cfg in audit_configs(config).items():
        models[name], records[name] = train_risk_cnn(cfg)
    abl = ablation_configs(config.ablation_cases, config.ablation_epochs, config.ablation_seeds)
    for name, cfg in abl.items():
        abl_models[name], abl_records[name] = train_risk_cnn(cfg)
    return models, records, abl_models, abl_records


def _job_config(config: Config) -> Config:
    """What a job sees and the cache key holds: the config less the run's controls."""
    return replace(config, max_new_jobs=None)


def _runner(config: Config, out_dir: Path, progress: bool | None) -> JobRunner:
    """The audits' runner: in this process (its threads), one job at a time, results cached
    under ``out_dir/cache`` by the config, :data:`CODE_VERSION` and the weights' versions."""
    key = {
        "config": config_dict(_job_config(config)),
        "code": CODE_VERSION,
        "weights": [WEIGHTS_VERSION, CNN_WEIGHTS_VERSION],
    }
    return JobRunner(
        out_dir / "cache",
        key,
        workers=1,
        progress=progress,
        max_new_jobs=config.max_new_jobs,
        desc="shnap audits",
    )


def _audit(config: Config, name: str) -> dict[str, Any]:
    """Job: editor ``name``'s oracle, shortcut and SNAP audits (the bridge's also item 7's run
    time and the radial ablation), and its SNAP maps of the audited models (``"snaps"``)."""
    sz = config
    with threads(config.threads):
        models, _, abl_models, _ = _trained_cnns(config)
        ed = _editors(config, False)[0][name]
        abl_cfg = ablation_configs(sz.ablation_cases, sz.ablation_epochs, sz.ablation_seeds)
        n = sz.counts(name)
        oc = _oracle_cases(max(sz.oracle_cases, sz.oracle_cases_costly), 0)[: n["oracle"]]
        nc = _negative_cases(max(sz.shortcut_cases, sz.shortcut_cases_costly), 0)[: n["shortcut"]]
        cnn_z = models["cnn-zeros"]
        rec = _oracle_recovery(ed, oc, sz.k, False, f"{name}: oracle")
        sc = _shortcut(ed, nc, {"cnn-zeros": cnn_z}, sz.k, False, f"{name}: shortcut")
        scored = {**models, **abl_models} if name == "bridge" else models
        rad, joined = _radial(ed, n["snap"], n["points"], scored, False, f"{name}: SNAP")
        out: dict[str, Any] = {"oracle": rec, "shortcut": sc, "radial": rad}
        out["cases"] = f"{len(oc)}/{len(nc)}/{n['snap']}"
        if name == "bridge":
            out["runtime"] = _runtime(ed, nc[0], cnn_z, sz.k, sc["seconds"])
            psi = {m: joined[m].psi for m in abl_cfg}
            out["ablation"] = padding_placement(joined["oracle"], psi, abl_cfg)
        out["snaps"] = {m: v for m, v in joined.items() if m not in abl_cfg}
    return out


def _realism_job(config: Config) -> dict[str, dict[str, Any]]:
    """Job: item 3 for every editor at once (the discriminators' trainings run side by
    side)."""
    with threads(config.threads):
        models, *_ = _trained_cnns(config)
        editors = _editors(config, False)[0]
        crops = {name: config.counts(name)["realism"] for name in editors}
        return _realism(editors, crops, models["cnn-zeros"])


def _runtime(
    bridge: Any, case: Any, model: Any, k: int, audit_seconds: list[float]
) -> dict[str, Any]:
    """Item 7: seconds of the bridge SHNAP of one shortcut case (N = 5, K = ``k``) at the
    spec's sampler steps: the shortcut audit's median when it ran at those steps, else its
    first case re-timed at them (quick mode samples with fewer steps)."""
    from dataclasses import replace

    from ._bridge import Bridge

    if bridge.config.steps == RUNTIME_STEPS:
        return {
            "seconds": float(np.median(audit_seconds)),
            "steps": RUNTIME_STEPS,
            "cases": len(audit_seconds),
        }
    full = Bridge(
        bridge.unet, replace(bridge.config, steps=RUNTIME_STEPS), insert_unet=bridge.insert_unet
    )
    sc = _shortcut(full, [case], {"cnn-zeros": model}, k, False, "")
    return {"seconds": sc["seconds"][0], "steps": RUNTIME_STEPS, "cases": 1}


def _realism(
    editors: dict[str, Any], n_crops: dict[str, int], model: Any
) -> dict[str, dict[str, Any]]:
    """Item 3 per editor: discriminator AUC (larger of logistic and tiny-CNN 5-fold AUCs),
    the nodule-free fraction of removed regions and, on ``model``, the editor's error against
    the twin removal ``|f(edit) - f(twin)|`` beside the nodule effect ``|f(case) - f(twin)|``;
    for the bridge also the twin removal's own AUC (the discriminator's floor). The
    discriminators of all editors train side by side (:func:`realism_reports`)."""
    from ._realism import realism_reports, removal_study

    studies = {
        name: removal_study(ed, n_crops[name], seed=0, model=model) for name, ed in editors.items()
    }
    pairs, keys = [], []
    for name, d in studies.items():
        pairs.append((d["real"], d["filled"], d["real_masks"], d["filled_masks"], d["nodule_free"]))
        keys.append((name, "edit"))
        if name == "bridge":
            pairs.append((d["real"], d["twin"], d["real_masks"], d["twin_masks"], None))
            keys.append((name, "twin"))
    reports = dict(zip(keys, realism_reports(pairs, cnn_below=CNN_BELOW)))
    out: dict[str, dict[str, Any]] = {}
    for name, d in studies.items():
        rep = reports[(name, "edit")]
        err = np.abs(d["f_edit"] - d["f_twin"])
        effect = np.abs(d["f_case"] - d["f_twin"])
        out[name] = {
            "auc": rep.auc,
            "auc_logistic": rep.auc_logistic,
            "auc_cnn": rep.auc_cnn,
            "nodule_free": rep.nodule_free,
            "crops": f"{rep.n_real} + {rep.n_filled}",
            "report": str(rep),
            "f_err_median": float(np.median(err)),
            "f_err_mean": float(np.mean(err)),
            "effect_median": float(np.median(effect)),
        }
        if (name, "twin") in reports:
            ref = reports[(name, "twin")]
            out[name]["twin"] = {
                "auc": ref.auc,
                "auc_logistic": ref.auc_logistic,
                "auc_cnn": ref.auc_cnn,
            }
    return out


def _realism_table(per: dict[str, dict[str, Any]]) -> ResultTable:
    tab = ResultTable(
        "Realism of removals beside its references (discriminator) and on the audited CNN",
        [
            "discriminator AUC",
            "AUC logistic",
            "AUC CNN",
            "nodule-free",
            "median |f(edit) - f(twin)|",
            "median |nodule effect|",
            "ratio",
            "crops (real + edited)",
        ],
        note="Twin: the perfect removal (the nodule-free twin phantom's voxels), the "
        "discriminator's floor. AUC = max(logistic, CNN); the CNN is trained only where the "
        f"logistic AUC is below {CNN_BELOW} (a fill the features already expose). f: the "
        "zero-padded CNN's year-6 logit; nodule effect "
        "|f(case) - f(twin)|; ratio = median error / median nodule effect (bar <= 0.1).",
    )
    b = per.get("bridge", {}).get("realism", {})
    if "twin" in b:
        t = b["twin"]
        tab.add_row(
            "twin",
            {
                "discriminator AUC": t["auc"],
                "AUC logistic": t["auc_logistic"],
                "AUC CNN": t["auc_cnn"],
                "nodule-free": 1.0,
                "median |f(edit) - f(twin)|": 0.0,
                "median |nodule effect|": b["effect_median"],
                "ratio": 0.0,
                "crops (real + edited)": b["crops"],
            },
            label="twin (perfect removal)",
        )
    for name, p in per.items():
        r = p["realism"]
        if "auc_logistic" not in r:
            continue
        tab.add_row(
            name,
            {
                "discriminator AUC": r["auc"],
                "AUC logistic": r["auc_logistic"],
                "AUC CNN": r["auc_cnn"],
                "nodule-free": r["nodule_free"],
                "median |f(edit) - f(twin)|": r["f_err_median"],
                "median |nodule effect|": r["effect_median"],
                "ratio": r["f_err_median"] / r["effect_median"],
                "crops (real + edited)": r["crops"],
            },
        )
    return tab


def _ablation_tables(abl: AblationResult, records: dict[str, dict[str, Any]]) -> list[ResultTable]:
    cells = ResultTable(
        "Radial ablation, depth-independent world: SNAP slope per cell (padding x placement)",
        ["mean slope", "per-seed slopes", "CNNs", "train AUC (mean)", "cached"],
        note="Each CNN's slope: psi on distance to the lung boundary with nodule-identity "
        "terms, bridge insertions, the same points for every CNN. Placement flawed: "
        "malignant nodules central in 85% of positives; balanced: uniform.",
    )
    for (pad, pl), sl in abl.slopes.items():
        names = [
            n
            for n, r in records.items()
            if r["config"]["padding"] == pad
            and r["config"]["location_balanced"] == (pl == "balanced")
        ]
        cells.add_row(
            f"{pad}-{pl}",
            {
                "mean slope": float(sl.mean()),
                "per-seed slopes": ", ".join(f"{v:.3f}" for v in sl),
                "CNNs": len(sl),
                "train AUC (mean)": float(np.mean([records[n]["train_auc"] for n in names])),
                "cached": all(records[n].get("cached") for n in names),
            },
            label=f"{pad} / {pl}",
        )
    zeros = abl.effects["zeros slope (mean over placement)"][0]
    note = ""
    if zeros > 0 and all(len(sl) > 1 for sl in abl.slopes.values()):
        note = (
            f"One CNN's slope varies with its seed by {abl.seed_sd():.3f} (pooled within-cell "
            f"s.d.); an interval of +- half the zeros slope, which tells a 50% cut from none, "
            f"needs about {abl.seeds_for(zeros / 2)} CNN seeds per cell from that variance alone "
            f"(this run: {len(next(iter(abl.slopes.values())))})."
        )
    eff = ResultTable(
        "Radial ablation effects (2 x 2, bootstrap over SNAP cases and CNN seeds)",
        ["estimate", f"{abl.level:.0%} interval", "points", "cases"],
        note=note,
    )
    for k, (est, lo, hi) in abl.effects.items():
        eff.add_row(
            _slug(k),
            {
                "estimate": est,
                f"{abl.level:.0%} interval": f"[{lo:.3f}, {hi:.3f}]",
                "points": abl.n_points,
                "cases": abl.n_cases,
            },
            label=k,
        )
    return [cells, eff]


def _slug(label: str) -> str:
    """A row id from a display label: lower-case words joined by ``-``."""
    return "-".join(re.findall(r"[a-z0-9]+", label.lower()))


def _record_checks(result: ExperimentResult, per: dict[str, dict[str, Any]]) -> None:
    viol = sum(
        p["oracle"]["violations"] + p["shortcut"]["violations"] + p["radial"]["violations"]
        for p in per.values()
    )
    if per:
        result.check(
            "2-locality",
            viol,
            "==",
            0,
            "2 locality: no voxel outside a mask changed (all editors, all edits)",
        )
    b = per.get("bridge")
    if b is None:
        return
    real = b["realism"]
    if real.get("auc") is not None:
        naive = [per[n]["realism"].get("auc") for n in ("zero", "global-mean") if n in per]
        result.check("3-auc", real["auc"], "<=", 0.65, "3 realism: bridge discriminator AUC")
        if naive:  # a missing AUC (None) fails, as NaN
            worst = min(np.nan if a is None else a for a in naive)
            result.check("3-naive-auc", worst, ">=", 0.9, "3 realism: zero/global-mean AUC")
        nodule_free = real.get("nodule_free") or 0
        result.check("3-nodule-free", nodule_free, ">=", 0.95, "3 realism: bridge nodule-free")
    if "f_err_median" in real:
        result.check(
            "3b-function",
            real["f_err_median"],
            "<=",
            0.1 * real["effect_median"],
            "3b function: median |f(bridge removal) - f(twin)| <= 10% of median |nodule effect|",
        )
    o = b["oracle"]
    result.check("4-rho-main", o["rho_main"], ">=", 0.9, "4 oracle: rho main")
    result.check("4-rho-pair", o["rho_pair"], ">=", 0.8, "4 oracle: rho pair")
    result.check("4-r2", o["r2"], ">=", 0.95, "4 oracle: median LMPI R2")
    naive_rmse = [per[n]["oracle"]["rmse"] for n in ("zero", "global-mean") if n in per]
    if naive_rmse:
        result.check(
            "4-naive-rmse",
            float(np.min(naive_rmse)),
            ">=",
            2 * o["rmse"],
            "4 oracle: zero/global-mean RMSE >= 2x the bridge's",
        )
    s = b["shortcut"]
    result.check("5-share", s["share"], ">=", 0.25, "5 shortcut: electrode share")
    result.check("5-roi", abs(s["roi_mean"]), "<", 0.05, "5 shortcut: |ROI mean phi|")
    result.check(
        "5-oracle-electrode",
        s["oracle_electrode"],
        "<=",
        0.01,
        "5 shortcut: oracle electrode |phi|",
    )
    f = b["radial"]["fits"]
    lo, hi = f["oracle"].ci()
    result.check("6-slope", f["cnn-zeros"].slope, ">", 0, "6 radial: cnn-zeros slope")
    result.check("6-p", f["cnn-zeros"].p, "<", 0.01, "6 radial: cnn-zeros slope p (HC3)")
    result.check("6-oracle-lo", lo, "<=", 0, "6 radial: oracle CI low end (the CI has 0)")
    result.check("6-oracle-hi", hi, ">=", 0, "6 radial: oracle CI high end (the CI has 0)")
    abl = b.get("ablation")
    if abl is not None:
        cut = abl.effects["reflect cut (share of the zeros slope)"][0]
        zeros_lo = abl.effects["zeros slope (mean over placement)"][1]
        # a cut of a slope whose interval holds 0 is noise over noise: no pass
        result.check(
            "6b-zeros-lo",
            zeros_lo,
            ">",
            0,
            "6b radial 2x2 (depth-independent world): zeros slope 95% interval low end",
        )
        result.check(
            "6b-cut",
            cut,
            ">=",
            0.5,
            "6b radial 2x2 (depth-independent world): share of the zeros slope reflect removes",
        )
    # 7: one 32^3 case, N = 5 players (electrode, two nodules, two ROIs), K = 2, 50 steps: the
    # shortcut audit's SHNAP call with the bridge (two CNN-sized models scored per edit),
    # re-timed at 50 steps on its first case when the audit ran fewer (quick)
    secs = b["shortcut"]["seconds"]
    rt = b["runtime"]
    load = os.getloadavg()[0]
    result.notes.append(
        f"item 7: bridge SHNAP of one 32^3 case, N=5, K=2, {rt['steps']} steps: "
        f"{rt['seconds']:.1f} s ({'median over ' if rt['cases'] > 1 else ''}{rt['cases']} "
        f"case(s); the shortcut audit: {np.median(secs):.1f} s median over {len(secs)} cases; "
        f"load {load:.2f} at the end)"
    )
    # the bar (<= 90 s on 2 cores) is a time: stated in the note above and measured by the
    # benchmarks, never a pass/fail check (machine load moves it)


EXPERIMENT = Experiment(
    "shnap",
    "SHNAP / SNAP audits with a diffusion-bridge editor vs RePaint and naive fills",
    reproduce,
    QUICK,
    FULL,
)
