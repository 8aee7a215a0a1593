"""``python -m metastreet reproduce [--quick]``: MetaStreet vs ablations on the synthetic city.

Rows (weighted F1 etc., mean ± s.e. over seeds, a fresh city per seed): full model, − contrast
(w = 1), − contrast with the full model's selection budget (w = 1, best of 3 restarts on
validation: ``w="auto"`` picks the best of 3 candidates, which alone can raise test F1), − graph (MLP instead of GAT), − text (visual only), − image (text only),
proportion-only image vectors, GCN for GAT, LabelSpreading, logistic regression on fused
features; every row on the normal and on the spatially shuffled city (the falsification); the
adjacency-only city (adjacency-aware vs proportion-only image vectors). Gaps are paired over
seeds (same city, same seed) and reported as mean ± s.e. in weighted-F1 points (x100).
Quick mode: 14x14 grid, 2-5 images per street, narrow network (32-D, 4x16 heads), 60 epochs,
w chosen on validation, hashing text, 2 seeds. Full: the paper's sizes, w chosen on validation,
MiniLM text when installed, 5 seeds, training on CUDA when available.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26_shared.experiment import (
    Experiment,
    ExperimentResult,
    ResultTable,
    progress,
    require_matplotlib,
    save_figure,
)

from ._city import make_city
from ._graph import morans_i
from ._model import MetaStreet, classification_metrics, street_features
from ._text import HashingEncoder, encode_texts
from .baselines import label_spreading, logistic_fused

COLS = ["accuracy", "weighted_f1", "macro_f1", "mrr"]


def _settings(quick: bool) -> dict[str, Any]:
    if quick:
        return {
            "city": {"n_side": 14, "images_per_street": (2, 5)},
            "model": {"hidden": 32, "d": 32, "heads": 4, "head_dim": 16, "epochs": 60, "w": "auto",
                      "n_categories": 12},
            "seeds": [0, 1],
        }  # fmt: skip
    return {
        "city": {"n_side": 32},
        # training on a GPU when one is visible (the full sizes were never run on the CPU)
        "model": {
            "w": "auto",
            "n_categories": 12,
            "device": "cuda" if torch.cuda.is_available() else "cpu",
        },
        "seeds": list(range(5)),
    }


def _encoder(quick: bool) -> Any:
    if quick:
        return HashingEncoder(64)
    try:
        from ._text import MiniLMEncoder

        return MiniLMEncoder()
    except ImportError:
        return HashingEncoder(64)


VARIANTS = {
    "full": {},
    "− contrast (w=1)": {"w": 1.0},
    "− contrast (w=1), best of 3 restarts": {"w": 1.0, "restarts": 3},
    "− graph (MLP)": {"graph": "mlp"},
    "− text (visual only)": {"modalities": "visual"},
    "− image (text only)": {"modalities": "text"},
    "proportion-only images": {"use_adjacency": False},
    "GCN for GAT": {"graph": "gcn"},
}
BASELINES = ("LabelSpreading", "LogReg (fused features)")
KINDS = ("normal", "shuffled")


def reproduce(quick: bool, out_dir: Path, progress_bar: bool) -> ExperimentResult:
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _run(quick, Path(out_dir), progress_bar)
    finally:
        torch.set_num_threads(old)


def _run(quick: bool, out_dir: Path, show: bool) -> ExperimentResult:
    cfg = _settings(quick)
    enc = _encoder(quick)
    scores: dict[str, dict[str, list[float]]] = {}
    morans: dict[str, list[float]] = {"normal": [], "shuffled": []}
    example: dict[str, Any] = {}

    def record(row: str, res: dict[str, float]) -> None:
        for k in COLS:
            scores.setdefault(row, {c: [] for c in COLS})[k].append(res[k])

    jobs = [(k, v) for k in KINDS for v in (*VARIANTS, *BASELINES)]
    jobs += [("adjacency_only", "adjacency-aware images"), ("adjacency_only", "proportion-only")]
    total = len(jobs) * len(cfg["seeds"])
    bar = progress(
        ((s, j) for s in cfg["seeds"] for j in jobs), enabled=show, total=total, desc="fits"
    )
    cities: dict[tuple[str, int], Any] = {}
    for seed, (kind, variant) in bar:
        key = (kind, seed)
        if key not in cities:
            cities[key] = make_city(
                **cfg["city"],
                signal="adjacency_only" if kind == "adjacency_only" else "both",
                shuffle_space=kind == "shuffled",
                seed=seed,
            )
            if kind in morans:
                c = cities[key]
                morans[kind].append(morans_i(c.labels.astype(float), c.edges))
        city = cities[key]
        row = f"{variant} [{kind}]" if kind != "normal" else variant
        test = city.mask("test")
        if variant == "LabelSpreading":
            res = classification_metrics(city.labels[test], label_spreading(city)[test])
        elif variant in BASELINES:
            seq, lengths = street_features(city, cfg["model"]["n_categories"])
            txt = encode_texts(enc, list(city.texts or []))
            scores_lr = logistic_fused(city, seq.numpy(), lengths.numpy(), txt, 4)
            res = classification_metrics(city.labels[test], scores_lr[test])
        else:
            extra = dict(VARIANTS.get(variant, {}))
            if kind == "adjacency_only":
                extra = {"modalities": "visual", "use_adjacency": variant != "proportion-only"}
            model = MetaStreet(4, text_encoder=enc, **{**cfg["model"], **extra})
            model.fit(city, seed=seed)
            res = model.evaluate(city)
            if kind == "normal" and variant == "full" and "pred" not in example:
                example = {"city": city, "pred": model.predict()}
        record(row, res)

    table = ResultTable(
        "Synthetic city, test split (80 %), mean ± s.e. over seeds",
        COLS,
        note=f"{'quick' if quick else 'full'} settings; chance weighted F1 ≈ 0.25",
    )
    for row, vals in scores.items():
        table.add_row(row, **{c: vals[c] for c in COLS})
    f1 = {r: np.asarray(v["weighted_f1"]) for r, v in scores.items()}

    def gap(a: str, b: str) -> np.ndarray:
        return 100 * (f1[a] - f1[b])  # paired: same city and seed

    d_con = gap("full", "− contrast (w=1)")
    d_gra = gap("full", "− graph (MLP)")
    d_shuf = gap("full [shuffled]", "− contrast (w=1) [shuffled]")
    matched = "− contrast (w=1), best of 3 restarts"
    d_adj = gap("adjacency-aware images [adjacency_only]", "proportion-only [adjacency_only]")
    gains = ResultTable(
        "Acceptance gaps (weighted-F1 points x100, paired mean ± s.e. over seeds)",
        ["points", "bar"],
    )
    gains.add_row("full − no-contrast (≥ 3)", points=d_con, bar=3.0)
    gains.add_row("full − no-graph (≥ 3)", points=d_gra, bar=3.0)
    gains.add_row("shuffled: full − no-contrast (≤ 1)", points=d_shuf, bar=1.0)
    gains.add_row("adjacency-only city: adjacency − proportions (≥ 2)", points=d_adj, bar=2.0)
    gains.add_row("matched selection: full − no-contrast (best of 3)", points=gap("full", matched))
    gains.add_row(
        "matched selection, shuffled: full − no-contrast (best of 3)",
        points=gap("full [shuffled]", f"{matched} [shuffled]"),
    )
    gains.add_row(
        "normal city: full − proportion-only images", points=gap("full", "proportion-only images")
    )
    gains.add_row("normal city: full − GCN for GAT", points=gap("full", "GCN for GAT"))
    gains.add_row(
        "shuffled: full − no-graph", points=gap("full [shuffled]", "− graph (MLP) [shuffled]")
    )
    gains.add_row("Moran's I of labels, normal", points=morans["normal"], bar=0.3)
    gains.add_row("Moran's I of labels, shuffled", points=morans["shuffled"])
    result = ExperimentResult("metastreet", "MetaStreet vs ablations on the synthetic city")
    result.tables += [table, gains]
    m_con, m_gra, m_shuf, m_adj = (float(d.mean()) for d in (d_con, d_gra, d_shuf, d_adj))
    result.checks["1a: full beats − contrast by ≥ 3 wF1 points"] = bool(m_con >= 3)
    result.checks["1b: full beats − graph by ≥ 3 wF1 points"] = bool(m_gra >= 3)
    result.checks["2: shuffled-city contrastive gain ≤ 1 point"] = bool(m_shuf <= 1)
    result.checks["3: adjacency beats proportions by ≥ 2 points (adjacency-only city)"] = bool(
        m_adj >= 2
    )
    result.checks["city: Moran's I of labels ≥ 0.3"] = bool(np.mean(morans["normal"]) >= 0.3)
    result.headline = (
        f"full wF1 {f1['full'].mean():.3f}; +{m_con:.1f} pts over − contrast, +{m_gra:.1f} over "
        f"− graph; shuffled contrast gain {m_shuf:.1f}; adjacency gain {m_adj:.1f}"
    )
    try:
        result.figures.append(_plot(example, f1, out_dir))
    except ImportError as exc:
        result.notes.append(str(exc))
    return result


def _plot(example: dict[str, Any], f1: dict[str, np.ndarray], out_dir: Path) -> Path:
    plt = require_matplotlib("plot", "metastreet")
    from matplotlib.collections import LineCollection

    city, pred = example["city"], example["pred"]
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.5))
    cmap = plt.get_cmap("viridis", 4)
    for ax, vals, title in ((axes[0], city.labels, "true class"), (axes[1], pred, "predicted")):
        lc = LineCollection(city.segments, colors=cmap(vals), linewidths=2.5)
        ax.add_collection(lc)
        ax.autoscale()
        ax.set_aspect("equal")
        ax.set_title(title)
        ax.axis("off")
    rows = [r for r in (*VARIANTS, *BASELINES) if r in f1 and f"{r} [shuffled]" in f1]
    normal = [f1[r].mean() for r in rows]
    shuf = [f1[f"{r} [shuffled]"].mean() for r in rows]
    y = np.arange(len(rows))
    axes[2].barh(y - 0.2, normal, 0.4, label="normal city")
    axes[2].barh(y + 0.2, shuf, 0.4, label="shuffled city")
    axes[2].set_yticks(y, rows)
    axes[2].invert_yaxis()
    axes[2].axvline(0.25, color="grey", lw=0.8, ls="--")
    axes[2].set_xlabel("weighted F1 (test); dashed = chance")
    axes[2].legend(loc="lower right")
    fig.tight_layout()
    return save_figure(fig, out_dir / "metastreet_map.png")


EXPERIMENT = Experiment(
    "metastreet",
    "MetaStreet vs − contrast / − graph / − text / − image on a synthetic city",
    reproduce,
)
