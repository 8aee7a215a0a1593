"""``python -m brain_attrib reproduce [--quick]``: planted-word recovery, BA vs NWP profiles,
masking drops, on the tiny grammar LM and the synthetic fMRI (spec acceptance items 1–6).

Torch and BLAS run with one thread inside ``reproduce`` (restored afterwards).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr, wilcoxon

from icml26_shared.experiment import (
    Estimate,
    Experiment,
    ExperimentResult,
    ResultTable,
    require_matplotlib,
    save_figure,
)
from icml26_shared.experiment import progress as progress_bar

from ._encoding import EncodingModel, Pipeline
from ._fmri import fmri, planted_words
from ._lm import tiny_lm
from ._masking import masking_test
from ._metrics import bh, category_shares, center_of_mass, importance, iou, iou_curve, top_k

__all__ = ["EXPERIMENT", "FULL", "QUICK", "Config", "reproduce"]


@dataclass(frozen=True)
class Config:
    """Sizes of one reproduce run (``layers``: the spec's table rows 1, 2, 4 of the 4-layer LM)."""

    context: int = 32
    layers: tuple[int, ...] = (1, 2, 4)
    n_attr: int = 40
    n_erasure: int = 15
    n_mask: int = 40


QUICK = Config()
FULL = Config(n_attr=200, n_erasure=60, n_mask=200)


def reproduce(quick: bool, out_dir: Path, progress: bool) -> ExperimentResult:
    """Run the experiment (see the module docstring)."""
    from threadpoolctl import threadpool_limits

    cfg = QUICK if quick else FULL
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            return _run(cfg, Path(out_dir), progress)
    finally:
        torch.set_num_threads(old)


def _run(cfg: Config, out: Path, progress: bool) -> ExperimentResult:
    res = ExperimentResult("brain-attrib", "Brain alignment vs next-word prediction attributions")
    lm, tok, info = tiny_lm(progress=progress)
    lm = lm.double()
    ce_ratio = info["heldout_ce"] / info["unigram_ce"]
    res.checks["1_lm_ce_le_0.7_unigram"] = ce_ratio <= 0.7
    rd = fmri(seed=0)
    sig, noise = rd.extras["signal_voxels"], rd.extras["noise_voxels"]
    rng = np.random.default_rng(0)
    table = ResultTable(
        "Per layer (tiny LM, synthetic fMRI)",
        [
            "BA r signal",
            "r noise",
            "IoU t=10%",
            "IoU t=50%",
            "IoU t=90%",
            "CoM BA",
            "CoM NWP",
            "IoU BA-NWP top-P_j",
            "recovery GxI",
            "recovery IG",
            "recovery erasure",
            "NWP top5 in last5",
            "GxI-IG rho",
            "mask drop top",
            "mask drop random",
            "recovery GxI cat",
            "recovery IG cat",
            "GxI-IG rho cat",
            "mask drop top cat",
        ],
    )
    curves: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    mass: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    summary: dict[int, dict[str, float]] = {}
    cats = ("det", "adj", "noun", "verb", "func", "punct")
    cat_table = ResultTable(
        "Category shares of S_50% (GxI): share of each category among the words of S_t", [*cats]
    )
    pvals: dict[str, float] = {}
    for layer in cfg.layers:
        em = EncodingModel(lm, tok, layer=layer, context=cfg.context).fit(rd, progress=progress)
        r = em.score()
        pl = Pipeline(em, voxels=sig)
        cand = [
            g
            for g in range(len(rd.data))
            if len(em.context_words(g)[0]) == cfg.context
            and em.context_words(g)[1] is not None
            and planted_words(rd, g)
        ]
        trs = rng.choice(cand, size=min(cfg.n_attr, len(cand)), replace=False)
        rec = {"gxi": [], "ig": [], "erasure": [], "gxi_cat": [], "ig_cat": []}
        ious, com_ba, com_nwp, last5, rho, ba_nwp, rho_cat = [], [], [], [], [], [], []
        mass_ba, mass_nwp = np.zeros(cfg.context), np.zeros(cfg.context)
        shares: dict[tuple[str, float], list[dict[str, float]]] = {}
        for n, g in enumerate(progress_bar(trs, enabled=progress, desc=f"attribute L{layer}")):
            ba = pl.attribute(int(g), "ba", "gxi")
            nwp = pl.attribute(int(g), "nwp", "gxi")
            ig = pl.attribute(int(g), "ba", "ig")
            pos = {int(np.flatnonzero(ba.word_index == i)[0]) for i in planted_words(rd, int(g))}
            rec["gxi"].append(iou(top_k(ba.scores, len(pos)), pos))
            rec["ig"].append(iou(top_k(ig.scores, len(pos)), pos))
            bac = pl.attribute(int(g), "ba", "gxi", baseline="category")
            igc = pl.attribute(int(g), "ba", "ig", baseline="category")
            rec["gxi_cat"].append(iou(top_k(bac.scores, len(pos)), pos))
            rec["ig_cat"].append(iou(top_k(igc.scores, len(pos)), pos))
            rho_cat.append(spearmanr(bac.scores, igc.scores).statistic)
            if n < cfg.n_erasure:
                er = pl.attribute(int(g), "ba", "erasure")
                rec["erasure"].append(iou(top_k(er.scores, len(pos)), pos))
            ba_nwp.append(iou(top_k(ba.scores, len(pos)), top_k(nwp.scores, len(pos))))
            ious.append(iou_curve(ba.scores, nwp.scores))
            com_ba.append(center_of_mass(ba.scores))
            com_nwp.append(center_of_mass(nwp.scores))
            last5.append(np.mean([p < 5 for p in top_k(nwp.scores, 5)]))
            rho.append(spearmanr(ba.scores, ig.scores).statistic)
            mass_ba += importance(ba.scores)
            mass_nwp += importance(nwp.scores)
            for obj, ws in (("BA", ba), ("NWP", nwp)):
                for t in (0.1, 0.5, 0.9):
                    shares.setdefault((obj, t), []).append(
                        category_shares(ws.scores, ws.categories, t)
                    )
        for obj in ("BA", "NWP"):
            cat_table.add_row(
                f"layer {layer} {obj}",
                **{c: Estimate.of([d.get(c, 0.0) for d in shares[(obj, 0.5)]]) for c in cats},
            )
        for t in (0.1, 0.5, 0.9):  # paired across TRs: noun share of S_t, BA vs NWP
            a, b = ([d.get("noun", 0.0) for d in shares[(o, t)]] for o in ("BA", "NWP"))
            p = wilcoxon(a, b, zero_method="zsplit").pvalue if np.any(np.subtract(a, b)) else 1.0
            pvals[f"layer {layer} t={t:.0%}"] = float(p) if np.isfinite(p) else 1.0
        mtrs = rng.choice(cand, size=min(cfg.n_mask, len(cand)), replace=False)
        mt = masking_test(pl, mtrs, progress=progress)
        mtc = masking_test(pl, mtrs, baseline="category", progress=progress)
        cur = np.mean(ious, axis=0)
        curves[layer] = (np.arange(1, 99) / 100, cur)
        mass[layer] = (mass_ba / len(trs), mass_nwp / len(trs))
        s = {
            "r_sig": float(r[sig].mean()),
            "r_noise": float(r[noise].mean()),
            "rec_gxi": float(np.mean(rec["gxi"])),
            "rec_ig": float(np.mean(rec["ig"])),
            "rec_er": float(np.mean(rec["erasure"])),
            "last5": float(np.mean(last5)),
            "com_ba": float(np.mean(com_ba)),
            "com_nwp": float(np.mean(com_nwp)),
            "ba_nwp": float(np.mean(ba_nwp)),
            "rho": float(np.median(rho)),
            "drop_top": mt.drop_top,
            "drop_rand": mt.drop_random,
        }
        summary[layer] = s
        table.add_row(
            f"layer {layer}",
            **{
                "BA r signal": s["r_sig"],
                "r noise": s["r_noise"],
                "IoU t=10%": float(cur[9]),
                "IoU t=50%": float(cur[49]),
                "IoU t=90%": float(cur[89]),
                "CoM BA": Estimate.of(com_ba),
                "CoM NWP": Estimate.of(com_nwp),
                "IoU BA-NWP top-P_j": Estimate.of(ba_nwp),
                "recovery GxI": Estimate.of(rec["gxi"]),
                "recovery IG": Estimate.of(rec["ig"]),
                "recovery erasure": Estimate.of(rec["erasure"]),
                "NWP top5 in last5": Estimate.of(last5),
                "GxI-IG rho": s["rho"],
                "mask drop top": mt.drop_top,
                "mask drop random": mt.drop_random,
                "recovery GxI cat": Estimate.of(rec["gxi_cat"]),
                "recovery IG cat": Estimate.of(rec["ig_cat"]),
                "GxI-IG rho cat": float(np.median(rho_cat)),
                "mask drop top cat": mtc.drop_top,
            },
        )
    res.tables.append(table)
    rej, adj = bh(np.array(list(pvals.values())))
    cat_table.note = (
        "Noun share of S_t, BA vs NWP (paired Wilcoxon over TRs, BH over layers × t): "
        + "; ".join(
            f"{k}: p_BH {a:.3g}{' *' if r else ''}" for k, a, r in zip(pvals, adj, rej, strict=True)
        )
    )
    res.tables.append(cat_table)
    best = max(summary, key=lambda k: summary[k]["r_sig"])
    b = summary[best]
    res.checks["2_encoding_r_signal_ge_0.3"] = b["r_sig"] >= 0.3
    res.checks["2_encoding_abs_r_noise_le_0.05"] = abs(b["r_noise"]) <= 0.05
    res.checks["4_recovery_iou_ge_0.6"] = b["rec_gxi"] >= 0.6
    res.checks["4_nwp_top5_last5_ge_0.6"] = b["last5"] >= 0.6
    res.checks["4_com_nwp_lt_com_ba"] = b["com_nwp"] < b["com_ba"]
    res.checks["4_iou_ba_nwp_le_0.3"] = b["ba_nwp"] <= 0.3
    res.checks["5_gxi_ig_rho_ge_0.7"] = b["rho"] >= 0.7
    res.checks["6_mask_top_drop_ge_0.5"] = b["drop_top"] >= 0.5
    res.checks["6_mask_random_drop_le_0.1"] = b["drop_rand"] <= 0.1
    res.notes.append(
        f"tiny LM held-out CE {info['heldout_ce']:.3f} vs unigram "
        f"{info['unigram_ce']:.3f} nats (ratio {ce_ratio:.3f}); checks use layer {best}"
    )
    res.headline = (
        f"layer {best}: BA r {b['r_sig']:.2f} (noise {b['r_noise']:.2f}); recovery "
        f"IoU GxI {b['rec_gxi']:.2f} / erasure {b['rec_er']:.2f}; CoM BA "
        f"{b['com_ba']:.2f} vs NWP {b['com_nwp']:.2f}; masking drop top "
        f"{b['drop_top']:.2f} vs random {b['drop_rand']:.2f}"
    )
    plt = require_matplotlib(package="brain-attrib")
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for layer, (t, c) in curves.items():
        ax[0].plot(t, c, label=f"layer {layer}")
        ax[1].plot(mass[layer][0], label=f"BA L{layer}")
        ax[1].plot(mass[layer][1], "--", label=f"NWP L{layer}")
    ax[0].set(xlabel="t (cumulative importance)", ylabel="IoU(S_t BA, S_t NWP)")
    ax[1].set(xlabel="position (0 = most recent)", ylabel="mean importance")
    ax[0].legend()
    ax[1].legend()
    res.figures.append(save_figure(fig, out / "iou_and_mass.png"))
    return res


EXPERIMENT = Experiment("brain-attrib", "BA vs NWP word attributions (synthetic)", reproduce)
