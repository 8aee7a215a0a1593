"""``python -m brain_attrib reproduce [--quick]``: planted-word recovery (oracle and LM encoders),
BA vs NWP profiles, masking drops, on the tiny grammar LM and the synthetic fMRI (3 seeds).

The checks are the restated acceptance items a–f on layer 1 (means over the fMRI seeds), with
items 1–2 and the issue-22 items that were met (f). Quick and full mode compute the same checks;
quick mode uses fewer TRs per seed (``QUICK``) and tabulates layer 1 only. Torch and BLAS run with
one thread inside ``reproduce`` (:func:`icml26_shared.threads.single_thread`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
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
from icml26_shared.threads import single_thread

from ._encoding import EncodingModel, Pipeline
from ._fmri import RunData, fmri, planted_words
from ._lm import oracle_lm, tiny_lm
from ._masking import masking_test
from ._metrics import (
    bh,
    category_shares,
    center_of_mass,
    importance,
    iou,
    iou_curve,
    recency_mass,
    recovery,
    recovery_chance,
    top_k,
    top_k_share,
)

__all__ = ["EXPERIMENT", "FULL", "QUICK", "Config", "reproduce"]


@dataclass(frozen=True)
class Config:
    """Sizes of one reproduce run. ``seeds``: synthetic fMRI seeds of the acceptance (layer 1);
    ``layers``: LM layers tabulated for the first seed; per seed and layer ``n_attr`` TRs for
    the gradient methods and the flips, ``n_erasure`` of them for erasure, ``n_mask`` masking
    TRs, ``n_oracle`` oracle-encoder TRs."""

    context: int = 32
    seeds: tuple[int, ...] = (0, 1, 2)
    layers: tuple[int, ...] = (1,)
    n_attr: int = 24
    n_erasure: int = 12
    n_mask: int = 30
    n_oracle: int = 40


QUICK = Config()
FULL = Config(layers=(1, 2, 4), n_attr=120, n_erasure=60, n_mask=150, n_oracle=150)

COLUMNS = [
    "BA r signal",
    "r noise",
    "nouns in top-|P| GxI",
    "nouns in top-|P| IG",
    "noun recovery GxI",
    "noun recovery IG",
    "noun recovery erasure",
    "noun recovery chance",
    "recovery GxI",
    "recovery IG",
    "recovery erasure",
    "rho GxI-IG",
    "rho GxI-IG zero",
    "NWP mass last5 flip",
    "BA mass last5 flip",
    "NWP mass last5 GxI",
    "BA mass last5 GxI",
    "CoM BA",
    "CoM NWP",
    "CoM BA zero",
    "CoM NWP zero",
    "CoM BA flip",
    "CoM NWP flip",
    "IoU BA-NWP top-|P|",
    "mask top GxI",
    "mask random GxI",
    "mask top erasure",
    "mask random erasure",
    "oracle r signal",
    "oracle recovery erasure",
    "oracle recovery IG",
    "oracle recovery GxI",
]
CATS = ("det", "adj", "noun", "verb", "func", "punct")


def reproduce(config: Config, out_dir: Path, progress: bool | None) -> ExperimentResult:
    """Run the experiment (see the module docstring) on one thread."""
    with single_thread():
        return _run(config, Path(out_dir), progress)


def _candidates(em: EncodingModel, rd: RunData, context: int) -> list[int]:
    """TRs with a full context, a next word and a non-empty planted set."""
    out = []
    for g in range(len(rd.data)):
        ctx, nxt = em.context_words(g)
        if len(ctx) == context and nxt is not None and planted_words(rd, g):
            out.append(g)
    return out


def _positions(ws: Any, rd: RunData, g: int) -> set[int]:
    return {int(np.flatnonzero(ws.word_index == i)[0]) for i in planted_words(rd, g)}


def _measure_lm(
    pl: Pipeline, rd: RunData, trs: np.ndarray, cfg: Config, progress: bool, desc: str
) -> dict[str, Any]:
    """Per-TR figures of one fitted LM encoder (lists, one entry per TR)."""
    m: dict[str, Any] = {c: [] for c in COLUMNS}
    m["iou_curve"], m["mass_ba"], m["mass_nwp"], m["shares"] = [], [], [], {}
    for n, g in enumerate(progress_bar(trs, enabled=progress, desc=desc)):
        g = int(g)
        gx = pl.attribute(g, "ba", "gxi")
        ig = pl.attribute(g, "ba", "ig")
        gx0 = pl.attribute(g, "ba", "gxi", baseline="zero")
        ig0 = pl.attribute(g, "ba", "ig", baseline="zero")
        nwp = pl.attribute(g, "nwp", "gxi")
        nwp0 = pl.attribute(g, "nwp", "gxi", baseline="zero")
        nwp_flip = pl.attribute(g, "nwp", "flip")
        ba_flip = pl.attribute(g, "ba", "flip")
        pos = _positions(gx, rd, g)
        nouns = np.array([c.startswith("noun") for c in gx.categories])
        m["nouns in top-|P| GxI"].append(top_k_share(gx.scores, nouns, len(pos)))
        m["nouns in top-|P| IG"].append(top_k_share(ig.scores, nouns, len(pos)))
        m["noun recovery GxI"].append(recovery(gx.scores, pos, within=nouns))
        m["noun recovery IG"].append(recovery(ig.scores, pos, within=nouns))
        m["noun recovery chance"].append(recovery_chance(int(nouns.sum()), len(pos)))
        m["recovery GxI"].append(recovery(gx.scores, pos))
        m["recovery IG"].append(recovery(ig.scores, pos))
        if n < cfg.n_erasure:
            er = pl.attribute(g, "ba", "erasure")
            m["noun recovery erasure"].append(recovery(er.scores, pos, within=nouns))
            m["recovery erasure"].append(recovery(er.scores, pos))
        m["rho GxI-IG"].append(spearmanr(gx.scores, ig.scores).statistic)
        m["rho GxI-IG zero"].append(spearmanr(gx0.scores, ig0.scores).statistic)
        m["NWP mass last5 flip"].append(recency_mass(nwp_flip.scores))
        m["BA mass last5 flip"].append(recency_mass(ba_flip.scores))
        m["NWP mass last5 GxI"].append(recency_mass(nwp.scores))
        m["BA mass last5 GxI"].append(recency_mass(gx.scores))
        m["CoM BA"].append(center_of_mass(gx.scores))
        m["CoM NWP"].append(center_of_mass(nwp.scores))
        m["CoM BA zero"].append(center_of_mass(gx0.scores))
        m["CoM NWP zero"].append(center_of_mass(nwp0.scores))
        m["CoM BA flip"].append(center_of_mass(ba_flip.scores))
        m["CoM NWP flip"].append(center_of_mass(nwp_flip.scores))
        m["IoU BA-NWP top-|P|"].append(iou(top_k(gx.scores, len(pos)), top_k(nwp.scores, len(pos))))
        m["iou_curve"].append(iou_curve(gx.scores, nwp.scores))
        m["mass_ba"].append(importance(gx.scores))
        m["mass_nwp"].append(importance(nwp.scores))
        for obj, ws in (("BA", gx), ("NWP", nwp)):
            for t in (0.1, 0.5, 0.9):
                m["shares"].setdefault((obj, t), []).append(
                    category_shares(ws.scores, ws.categories, t)
                )
    return m


def _measure_oracle(rd: RunData, cfg: Config, rng: np.random.Generator, progress: bool):
    """The oracle encoder (noun-identity features): held-out r and recovery per TR."""
    lm, tok = oracle_lm()
    em = EncodingModel(lm, tok, layer=0, context=cfg.context).fit(rd, progress=False)
    sig = rd.extras["signal_voxels"]
    pl = Pipeline(em, voxels=sig)
    cand = [g for g in _candidates(em, rd, cfg.context)]
    trs = rng.choice(cand, size=min(cfg.n_oracle, len(cand)), replace=False)
    out: dict[str, list[float]] = {"erasure": [], "ig": [], "gxi": []}
    for g in progress_bar(trs, enabled=progress, desc="oracle"):
        g = int(g)
        for method in out:
            ws = pl.attribute(g, "ba", method)
            out[method].append(recovery(ws.scores, _positions(ws, rd, g)))
    return float(em.score()[sig].mean()), out


def _run(cfg: Config, out: Path, progress: bool | None) -> ExperimentResult:
    res = ExperimentResult("brain-attrib", "Brain alignment vs next-word prediction attributions")
    lm, tok, info = tiny_lm(progress=progress)
    lm = lm.double()
    ce_ratio = info["heldout_ce"] / info["unigram_ce"]
    table = ResultTable(
        "Per fMRI seed and layer (tiny LM, synthetic fMRI; default = category baseline)",
        COLUMNS,
    )
    cat_table = ResultTable(
        f"Category shares of S_50% (GxI, seed {cfg.seeds[0]}): share of each category among the "
        "words of S_t",
        [*CATS],
    )
    per_seed: list[dict[str, float]] = []
    curves: dict[int, np.ndarray] = {}
    mass: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    pvals: dict[str, float] = {}
    for si, seed in enumerate(cfg.seeds):
        rd = fmri(seed=seed)
        sig, noise = rd.extras["signal_voxels"], rd.extras["noise_voxels"]
        rng = np.random.default_rng(seed)
        oracle_r, oracle = _measure_oracle(rd, cfg, rng, progress)
        for layer in cfg.layers if si == 0 else (1,):
            em = EncodingModel(lm, tok, layer=layer, context=cfg.context)
            em.fit(rd, progress=progress)
            r = em.score()
            pl = Pipeline(em, voxels=sig)
            cand = _candidates(em, rd, cfg.context)
            trs = rng.choice(cand, size=min(cfg.n_attr, len(cand)), replace=False)
            m = _measure_lm(pl, rd, trs, cfg, progress, f"seed {seed} L{layer}")
            mtrs = rng.choice(cand, size=min(cfg.n_mask, len(cand)), replace=False)
            mg = masking_test(pl, mtrs, seed=seed, progress=progress)
            me = masking_test(pl, mtrs, method="erasure", seed=seed, progress=progress)
            row: dict[str, Any] = {k: Estimate.of(v) for k, v in m.items() if k in COLUMNS and v}
            row.update(
                {
                    "BA r signal": float(r[sig].mean()),
                    "r noise": float(r[noise].mean()),
                    "rho GxI-IG": float(np.median(m["rho GxI-IG"])),
                    "rho GxI-IG zero": float(np.median(m["rho GxI-IG zero"])),
                    "mask top GxI": mg.drop_top,
                    "mask random GxI": mg.drop_random,
                    "mask top erasure": me.drop_top,
                    "mask random erasure": me.drop_random,
                }
            )
            if layer == 1:
                row.update(
                    {
                        "oracle r signal": oracle_r,
                        "oracle recovery erasure": Estimate.of(oracle["erasure"]),
                        "oracle recovery IG": Estimate.of(oracle["ig"]),
                        "oracle recovery GxI": Estimate.of(oracle["gxi"]),
                    }
                )
                per_seed.append(
                    {k: (v.mean if isinstance(v, Estimate) else v) for k, v in row.items()}
                )
            table.add_row(f"seed{seed}-L{layer}", row, label=f"seed {seed} layer {layer}")
            if si == 0:
                curves[layer] = np.mean(m["iou_curve"], axis=0)
                mass[layer] = (np.mean(m["mass_ba"], axis=0), np.mean(m["mass_nwp"], axis=0))
                for obj in ("BA", "NWP"):
                    cat_table.add_row(
                        f"L{layer}-{obj}",
                        {
                            c: Estimate.of([d.get(c, 0.0) for d in m["shares"][(obj, 0.5)]])
                            for c in CATS
                        },
                        label=f"layer {layer} {obj}",
                    )
                for t in (0.1, 0.5, 0.9):  # paired across TRs: noun share of S_t, BA vs NWP
                    a, b = (
                        [d.get("noun", 0.0) for d in m["shares"][(o, t)]] for o in ("BA", "NWP")
                    )
                    diff = np.any(np.subtract(a, b))
                    p = wilcoxon(a, b, zero_method="zsplit").pvalue if diff else 1.0
                    pvals[f"layer {layer} t={t:.0%}"] = float(p) if np.isfinite(p) else 1.0
    agg = {k: Estimate.of([s[k] for s in per_seed]) for k in per_seed[0]}
    table.add_row("L1-mean", agg, label=f"layer 1, mean ± s.e. over {len(per_seed)} seeds")
    table.note = (
        "Within-noun recovery ranks only the context's nouns; chance = expected IoU of a random "
        "pick. 'mass last5' = importance mass of the 5 most recent words; 'flip' = number-flip "
        "erasure. CoM: default GxI, zero-baseline GxI ('zero'), number flips ('flip'). "
        "Masking: relative drop of held-out r, top-k (k = 2) vs random-k words."
    )
    res.tables.append(_summary(agg, ce_ratio))
    res.tables.append(table)
    rej, adj = bh(np.array(list(pvals.values())))
    cat_table.note = (
        "Noun share of S_t, BA vs NWP (paired Wilcoxon over TRs, BH over layers × t): "
        + "; ".join(
            f"{k}: p_BH {a:.3g}{' *' if r else ''}" for k, a, r in zip(pvals, adj, rej, strict=True)
        )
    )
    res.tables.append(cat_table)
    _checks(res, {k: v.mean for k, v in agg.items()}, ce_ratio)
    res.notes.append(
        f"tiny LM ({info.get('source', 'trained')}) held-out CE {info['heldout_ce']:.3f} vs "
        f"unigram {info['unigram_ce']:.3f} nats (ratio {ce_ratio:.3f}); checks: layer 1, means "
        f"over fMRI seeds {list(cfg.seeds)}; per seed {cfg.n_attr} attribution TRs "
        f"({cfg.n_erasure} with erasure), {cfg.n_mask} masking TRs, {cfg.n_oracle} oracle TRs"
    )
    a = {k: v.mean for k, v in agg.items()}
    res.headline = (
        f"layer 1, {len(per_seed)} seeds: BA r {a['BA r signal']:.2f}; oracle recovery erasure "
        f"{a['oracle recovery erasure']:.2f} / IG {a['oracle recovery IG']:.2f}; nouns in top-|P| "
        f"{a['nouns in top-|P| GxI']:.2f}; noun recovery GxI {a['noun recovery GxI']:.2f} vs "
        f"chance {a['noun recovery chance']:.2f}; rho {a['rho GxI-IG']:.2f}; NWP flip mass last5 "
        f"{a['NWP mass last5 flip']:.2f}; masking top/random GxI {a['mask top GxI']:.2f} / "
        f"{a['mask random GxI']:.2f}"
    )
    _figure(res, out, curves, mass)
    return res


#: the summary's rows: (label, the per-seed quantities it shows, the bar)
SUMMARY = (
    ("BA r, signal / noise voxels", ("BA r signal", "r noise"), "≥ 0.3 / |r| ≤ 0.05"),
    ("oracle encoder r (signal voxels)", ("oracle r signal",), "–"),
    (
        "a. oracle recovery: erasure / IG / GxI",
        ("oracle recovery erasure", "oracle recovery IG", "oracle recovery GxI"),
        "≥ 0.6",
    ),
    (
        "b. nouns in the top-|P| words: GxI / IG",
        ("nouns in top-|P| GxI", "nouns in top-|P| IG"),
        "≥ 0.6",
    ),
    (
        "b. within-noun recovery: GxI / IG / erasure / chance",
        ("noun recovery GxI", "noun recovery IG", "noun recovery erasure", "noun recovery chance"),
        "≥ 1.5 × chance",
    ),
    (
        "c. ρ(GxI, IG), median over TRs: category / zero",
        ("rho GxI-IG", "rho GxI-IG zero"),
        "≥ 0.7 (default)",
    ),
    (
        "d. mass in the last 5 words, number flips: NWP / BA",
        ("NWP mass last5 flip", "BA mass last5 flip"),
        "NWP ≥ 0.6, BA below",
    ),
    (
        "e. masking drop, top-2 / random-2: GxI",
        ("mask top GxI", "mask random GxI"),
        "top ≥ 3 × random",
    ),
    (
        "e. masking drop, top-2 / random-2: erasure",
        ("mask top erasure", "mask random erasure"),
        "top ≥ 3 × random",
    ),
    ("CoM BA / NWP: default GxI", ("CoM BA", "CoM NWP"), "NWP < BA"),
    ("CoM BA / NWP: zero-baseline GxI", ("CoM BA zero", "CoM NWP zero"), "NWP < BA"),
    ("CoM BA / NWP: number flips", ("CoM BA flip", "CoM NWP flip"), "NWP < BA"),
    ("IoU of the BA and NWP top-|P| sets", ("IoU BA-NWP top-|P|",), "≤ 0.3"),
)


def _summary(agg: dict[str, Estimate], ce_ratio: float) -> ResultTable:
    """The acceptance quantities of layer 1, mean ± s.e. over the fMRI seeds, with their bars."""
    t = ResultTable(
        "Layer 1, mean ± s.e. over fMRI seeds (default = category baseline)",
        ["value", "bar"],
        note=f"tiny LM held-out cross-entropy / unigram's: {ce_ratio:.3f} (bar ≤ 0.7)",
    )
    for label, keys, bar in SUMMARY:
        cells = [agg[k] for k in keys if k in agg]
        t.add_row(label, {"value": " / ".join(c.format() for c in cells), "bar": bar})
    return t


def _checks(res: ExperimentResult, a: dict[str, float], ce_ratio: float) -> None:
    """The acceptance checks on layer 1's means over the seeds, each with its value and bar."""
    res.check("1-ce", ce_ratio, "<=", 0.7, "1 tiny LM cross-entropy ≤ 0.7 × unigram's")
    res.check("2-r-signal", a["BA r signal"], ">=", 0.3, "2 encoding r on signal voxels ≥ 0.3")
    res.check("2-r-noise", abs(a["r noise"]), "<=", 0.05, "2 encoding |r| on noise voxels ≤ 0.05")
    for m, key in (("erasure", "erasure"), ("ig", "IG")):
        res.check(
            f"a-oracle-{m}",
            a[f"oracle recovery {key}"],
            ">=",
            0.6,
            f"a oracle-encoder recovery ({key}) ≥ 0.6",
        )
    for m in ("GxI", "IG"):
        res.check(
            f"b-nouns-{m.lower()}",
            a[f"nouns in top-|P| {m}"],
            ">=",
            0.6,
            f"b nouns in the top-|P| words ({m}) ≥ 0.6",
        )
        res.check(
            f"b-noun-recovery-{m.lower()}",
            a[f"noun recovery {m}"] - 1.5 * a["noun recovery chance"],
            ">=",
            0.0,
            f"b noun recovery ({m}) ≥ 1.5 × chance (recovery − 1.5 × chance)",
        )
    res.check("c-rho", a["rho GxI-IG"], ">=", 0.7, "c Spearman ρ of GxI and IG ≥ 0.7")
    res.check(
        "d-nwp-last5",
        a["NWP mass last5 flip"],
        ">=",
        0.6,
        "d NWP importance mass on the last 5 words (flips) ≥ 0.6",
    )
    res.check(
        "d-ba-below-nwp",
        a["BA mass last5 flip"] - a["NWP mass last5 flip"],
        "<",
        0.0,
        "d BA mass on the last 5 words below NWP's (flips; BA − NWP)",
    )
    for m in ("GxI", "erasure"):
        top, rnd = a[f"mask top {m}"], a[f"mask random {m}"]
        # top > 0 and top ≥ 3 × random, as one margin: the smaller of the two gaps
        res.check(
            f"e-mask-{m.lower()}",
            min(top, top - 3 * rnd),
            ">=",
            0.0,
            f"e masking the top words ({m}) drops r ≥ 3 × random words (top − 3 × random)",
        )
    for v, what in (("", "default GxI"), (" zero", "zero-baseline GxI"), (" flip", "flips")):
        res.check(
            f"f-com{v.replace(' ', '-')}",
            a[f"CoM NWP{v}"] - a[f"CoM BA{v}"],
            "<",
            0.0,
            f"f NWP's centre of mass more recent than BA's ({what}; NWP − BA)",
        )
    res.check("f-iou", a["IoU BA-NWP top-|P|"], "<=", 0.3, "f IoU of the BA and NWP top-|P| ≤ 0.3")
    res.check(
        "f-mask-random", a["mask random GxI"], "<=", 0.1, "f masking random words drops r ≤ 0.1"
    )


def _figure(res: ExperimentResult, out: Path, curves: dict, mass: dict) -> None:
    plt = require_matplotlib(package="brain-attrib")
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for layer, c in curves.items():
        ax[0].plot(np.arange(1, 99) / 100, c, label=f"layer {layer}")
        ax[1].plot(mass[layer][0], label=f"BA L{layer}")
        ax[1].plot(mass[layer][1], "--", label=f"NWP L{layer}")
    ax[0].set(xlabel="t (cumulative importance)", ylabel="IoU(S_t BA, S_t NWP)")
    ax[1].set(xlabel="position (0 = most recent)", ylabel="mean importance (GxI)")
    ax[0].legend()
    ax[1].legend()
    res.figures.append(save_figure(fig, out / "iou_and_mass.png"))


EXPERIMENT = Experiment(
    "brain-attrib", "BA vs NWP word attributions (synthetic)", reproduce, QUICK, FULL
)
