"""``python -m metastreet reproduce [--quick]``: MetaStreet vs controls on the synthetic city.

What it measures (a fresh city per seed; paired gaps in weighted-F1 points x100, mean ± s.e.
over seeds):

- **Geography** (the paper's claim): the full model against the same model whose contrast
  positive is the mean of as many *random* streets as the anchor has neighbours
  (``contrast_positive="random"``), everything else unchanged.
- **Label efficiency**: full vs no contrast (``w = 1``) at 1, 2, 5 and 10 % labelled streets
  (nested training sets, one validation set of 10 % of the streets, the same 80 % test set).
- **Ablations** on the default split (5 % train, 15 % validation): − contrast, − graph (MLP),
  the authors' directed 5-NN graph for intersection adjacency, LabelSpreading and logistic
  regression on the fused features; ``--set ablations=true`` adds − text, − image,
  proportion-only image vectors and GCN for GAT.
- **Adjacency-only city**: adjacency-aware vs proportion-only image vectors.

As the authors do, ``w`` is fixed for the task: it is chosen once per run, on validation, from
{0.1, 0.5, 0.9} by the full model on seed 0's default split, and every row with the contrast
uses it (a third of the training runs of ``w="auto"`` per row). Independent fits run in
worker processes, one thread each (as many as cores). Quick: 20x20 grid (760 streets), 2-5
images per street, narrow network (32-D, 4x16 heads), 60 epochs, hashing text, 5 seeds. Full:
the paper's sizes (32x32, 5-20 images, 256-D, 8x64 heads, 200 epochs, MiniLM text when
installed), 10 seeds of 15 training runs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch

from icml26_shared.experiment import (
    Experiment,
    ExperimentResult,
    ResultTable,
    cpu_share,
    parallel_map,
    require_matplotlib,
    save_figure,
)
from icml26_shared.threads import single_thread

from ._city import make_city, with_label_rate
from ._graph import morans_i
from ._model import W_GRID, MetaStreet, classification_metrics, street_features
from ._text import HashingEncoder, encode_texts
from .baselines import label_spreading, logistic_fused

COLS = ["accuracy", "weighted_f1", "macro_f1", "mrr"]
RATES = (0.01, 0.02, 0.05, 0.10)


@dataclass(frozen=True)
class Config:
    """The run's sizes; ``None`` leaves a setting at the library's default (``make_city``'s
    5-20 images per street and 5 % / 15 % split, ``MetaStreet``'s 256-D network and 200
    epochs).

    Attributes:
        seeds: one fresh city per seed.
        n_side: the city's grid side (streets ~ 2 n_side²).
        images_per_street, split: ``make_city`` arguments.
        hidden, d, heads, head_dim, epochs, n_categories: ``MetaStreet`` arguments.
        text: the street-name encoder (``"minilm"`` falls back to hashing when
            sentence-transformers is not installed).
        device: ``"auto"`` (CUDA when available), ``"cpu"``, ``"cuda"``, or ``None`` (the
            model's default).
        ablations: add − text, − image, proportion-only images and GCN for GAT.
    """

    seeds: tuple[int, ...] = tuple(range(10))
    n_side: int = 32
    images_per_street: tuple[int, int] | None = None
    split: tuple[float, float] | None = None
    hidden: int | None = None
    d: int | None = None
    heads: int | None = None
    head_dim: int | None = None
    epochs: int | None = None
    n_categories: int = 12
    text: Literal["hashing", "minilm"] = "minilm"
    device: Literal["auto", "cpu", "cuda"] | None = "auto"
    ablations: bool = False

    def __post_init__(self) -> None:
        if not self.seeds:
            raise ValueError("seeds must name at least one seed")
        if self.n_side < 2:
            raise ValueError(f"n_side must be >= 2, got {self.n_side}")


#: the paper's sizes (32 x 32, 5-20 images, 256-D, 8 x 64 heads, 200 epochs), 10 seeds
FULL_CONFIG = Config()
#: 20 x 20 grid, 2-5 images per street, a narrow network, 60 epochs, hashing text, 5 seeds
QUICK = Config(
    seeds=(0, 1, 2, 3, 4),
    n_side=20,
    images_per_street=(2, 5),
    hidden=32,
    d=32,
    heads=4,
    head_dim=16,
    epochs=60,
    text="hashing",
    device=None,
)


def _settings(config: Config) -> dict[str, Any]:
    """The config as ``make_city`` and ``MetaStreet`` keywords (unset ones left out)."""
    city = {"n_side": config.n_side, "images_per_street": config.images_per_street}
    city["split"] = config.split
    model: dict[str, Any] = {
        k: getattr(config, k) for k in ("hidden", "d", "heads", "head_dim", "epochs")
    }
    model["n_categories"] = config.n_categories
    if config.device == "auto":
        model["device"] = "cuda" if torch.cuda.is_available() else "cpu"
    else:
        model["device"] = config.device
    return {
        "city": {k: v for k, v in city.items() if v is not None},
        "model": {k: v for k, v in model.items() if v is not None},
        "seeds": list(config.seeds),
        "ablations": config.ablations,
    }


def _encoder(config: Config) -> Any:
    if config.text == "hashing":
        return HashingEncoder(64)
    try:
        from ._text import MiniLMEncoder

        return MiniLMEncoder()
    except ImportError:
        return HashingEncoder(64)


FULL = "full"
NO_CONTRAST = "− contrast (w=1)"
RANDOM = "random positives (degree-matched)"
VARIANTS = {
    FULL: {},
    NO_CONTRAST: {"w": 1.0},
    RANDOM: {"contrast_positive": "random"},
    "directed 5-NN graph": {"adjacency": "knn", "k_neighbors": 5},
    "− graph (MLP)": {"graph": "mlp"},
}
ABLATIONS = {
    "− text (visual only)": {"modalities": "visual"},
    "− image (text only)": {"modalities": "text"},
    "proportion-only images": {"use_adjacency": False},
    "GCN for GAT": {"graph": "gcn"},
}
BASELINES = ("LabelSpreading", "LogReg (fused features)")
ADJ = ("adjacency-aware images [adjacency_only]", "proportion-only [adjacency_only]")


def _rate_row(variant: str, rate: float) -> str:
    return f"{variant} @ {100 * rate:g}% labels"


@functools.lru_cache(maxsize=4)
def _city(config: Config, kind: str, seed: int) -> Any:
    return make_city(**_settings(config)["city"], signal=kind, seed=seed)


@functools.lru_cache(maxsize=1)
def _cached_encoder(config: Config) -> Any:
    return _encoder(config)


Item = tuple[int, str, float | None, float]


def _job(config: Config, item: Item) -> dict[str, Any]:
    """One fit (or baseline) of the table: ``(seed, row, rate, w)``; returns its metrics."""
    seed, row, rate, w = item
    cfg = _settings(config)
    enc = _cached_encoder(config)
    kind = "adjacency_only" if row in ADJ else "both"
    city = _city(config, kind, seed)
    if rate is not None:
        city = with_label_rate(city, rate, seed)
    test = city.mask("test")
    out: dict[str, Any] = {"seed": seed, "row": row, "rate": rate}
    if row == "LabelSpreading":
        out["metrics"] = classification_metrics(city.labels[test], label_spreading(city)[test])
        return out
    if row in BASELINES:
        seq, lengths = street_features(city, cfg["model"]["n_categories"])
        txt = encode_texts(enc, list(city.texts or []))
        logits = logistic_fused(city, seq.numpy(), lengths.numpy(), txt, 4)
        out["metrics"] = classification_metrics(city.labels[test], logits[test])
        return out
    if row in ADJ:
        extra = {"modalities": "visual", "use_adjacency": row == ADJ[0]}
    else:
        base = row.split(" @ ")[0]
        extra = dict({**VARIANTS, **ABLATIONS}[base])
    model = MetaStreet(4, text_encoder=enc, **{**cfg["model"], "w": w, **extra})
    model.fit(city, seed=seed)
    out["metrics"] = model.evaluate(city)
    out["val_f1"] = model.val_f1_
    if row == FULL and rate is None:
        out["pred"] = model.predict()
        out["config"] = config
        out["moran"] = morans_i(city.labels.astype(float), city.edges)
    return out


def _items(cfg: dict[str, Any], w: float) -> list[Item]:
    """Every fit of the table with the run's ``w`` (seed 0's full model is fitted while
    ``w`` is chosen and is not repeated)."""
    rows = [*VARIANTS, *(ABLATIONS if cfg["ablations"] else {}), *BASELINES, *ADJ]
    items: list[Item] = []
    for seed in cfg["seeds"]:
        items += [(seed, r, None, w) for r in rows if (seed, r) != (cfg["seeds"][0], FULL)]
        items += [(seed, _rate_row(v, r), r, w) for r in RATES for v in (FULL, NO_CONTRAST)]
    return items


def reproduce(config: Config, out_dir: Path, progress: bool | None) -> ExperimentResult:
    """Run the comparison (see the module docstring), one thread here and in every worker."""
    with single_thread():
        return _run(config, Path(out_dir), progress)


def _gap_interval(d: np.ndarray, z: float) -> tuple[float, float]:
    se = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("inf")
    return float(d.mean() - z * se), float(d.mean() + z * se)


def _run(config: Config, out_dir: Path, show: bool | None) -> ExperimentResult:
    cfg = _settings(config)
    workers = cpu_share()
    job = functools.partial(_job, config)
    s0 = cfg["seeds"][0]
    cands = parallel_map(
        job, [(s0, FULL, None, w) for w in W_GRID], workers=workers, progress_bar=show,
        desc="choosing w",
    )  # fmt: skip
    pick = max(range(len(W_GRID)), key=lambda i: cands[i]["val_f1"])  # first of ties
    w = float(W_GRID[pick])
    items = _items(cfg, w)
    recs = [cands[pick], *parallel_map(job, items, workers=workers, progress_bar=show,
                                      desc="fits")]  # fmt: skip
    scores: dict[str, dict[str, list[float]]] = {}
    for rec in sorted(recs, key=lambda r: r["seed"]):
        for k in COLS:
            scores.setdefault(rec["row"], {c: [] for c in COLS})[k].append(rec["metrics"][k])
    example = next(r for r in recs if "pred" in r)
    morans = [r["moran"] for r in sorted(recs, key=lambda r: r["seed"]) if "moran" in r]

    table = ResultTable(
        "Synthetic city, test split (80 %), mean ± s.e. over seeds",
        COLS,
        note=f"{config.n_side}x{config.n_side} city, {len(cfg['seeds'])} seeds; default "
        "split 5 % train / 15 % validation; '@ r% labels': r % of the streets labelled for "
        "training, 10 % for validation; chance weighted F1 ≈ 0.25",
    )
    for row, vals in scores.items():
        table.add_row(row, {c: vals[c] for c in COLS})
    f1 = {r: np.asarray(v["weighted_f1"]) for r, v in scores.items()}

    def gap(a: str, b: str) -> np.ndarray:
        return 100 * (f1[a] - f1[b])  # paired: same city and seed

    d_geo = gap(FULL, RANDOM)
    d_gra = gap(FULL, "− graph (MLP)")
    d_adj = gap(*ADJ)
    d_rate = {r: gap(_rate_row(FULL, r), _rate_row(NO_CONTRAST, r)) for r in RATES}
    gains = ResultTable(
        "Gaps (weighted-F1 points x100, paired over seeds: mean ± s.e.; 95 % interval)",
        ["points", "lower", "upper", "bar"],
    )

    def add(
        id: str, label: str, d: np.ndarray, bar: float | None = None, one_sided: bool = False
    ) -> None:
        lo, hi = _gap_interval(d, 1.645 if one_sided else 1.96)
        cells: dict[str, Any] = {"points": d, "lower": lo, "upper": None if one_sided else hi}
        if bar is not None:
            cells["bar"] = bar
        gains.add_row(id, cells, label=label)

    add(
        "geography",
        "geography: full − random positives (one-sided, > 0)",
        d_geo,
        0.0,
        one_sided=True,
    )
    for r in RATES:
        add(
            f"contrast-{100 * r:g}",
            f"contrast at {100 * r:g}% labels: full − no-contrast",
            d_rate[r],
        )
    add("contrast-default", "default split: full − no-contrast", gap(FULL, NO_CONTRAST))
    add("graph", "full − no-graph (≥ 3)", d_gra, 3.0)
    add(
        "knn",
        "full (intersection graph) − directed 5-NN graph",
        gap(FULL, "directed 5-NN graph"),
    )
    add("adjacency", "adjacency-only city: adjacency − proportions (≥ 2)", d_adj, 2.0)
    gains.add_row("moran", {"points": morans, "bar": 0.3}, label="Moran's I of labels")

    lowest = min(RATES)
    low_gain = float(np.mean([d_rate[r].mean() for r in RATES if r <= 0.02]))
    result = ExperimentResult("metastreet", "MetaStreet vs controls on the synthetic city")
    result.tables += [gains, table]
    geo_lo = _gap_interval(d_geo, 1.645)[0]
    low_lo = _gap_interval(d_rate[lowest], 1.96)[0]
    result.check(
        "a-geography",
        geo_lo,
        ">",
        0.0,
        "a: geographic − random positives > 0 (one-sided 95 % interval, lower end)",
    )
    result.check(
        "b-low-rate",
        low_lo,
        ">",
        0.0,
        f"b: contrast gain > 0 at {100 * lowest:g}% labels (95 % interval, lower end)",
    )
    result.check(
        "b-larger",
        low_gain - float(d_rate[0.10].mean()),
        ">",
        0.0,
        "b: contrast gain larger at 1-2 % labels than at 10 % (difference, points)",
    )
    result.check(
        "c-graph", float(d_gra.mean()), ">=", 3.0, "c: full beats − graph by ≥ 3 wF1 points"
    )
    result.check(
        "c-adjacency",
        float(d_adj.mean()),
        ">=",
        2.0,
        "c: adjacency beats proportions by ≥ 2 points (adjacency-only city)",
    )
    result.check("moran", float(np.mean(morans)), ">=", 0.3, "city: Moran's I of labels ≥ 0.3")
    result.headline = (
        f"full wF1 {f1[FULL].mean():.3f}; geography (vs random positives) "
        f"{d_geo.mean():+.1f} pts; contrast gain {d_rate[lowest].mean():+.1f} pts at "
        f"{100 * lowest:g}% labels, {d_rate[0.10].mean():+.1f} at 10%; "
        f"graph {d_gra.mean():+.1f}; adjacency {d_adj.mean():+.1f}"
    )
    vals = ", ".join(f"{v:g}: {c['val_f1']:.3f}" for v, c in zip(W_GRID, cands, strict=True))
    result.notes.append(
        f"w = {w:g} for every row with the contrast, chosen on seed {s0}'s validation split "
        f"(validation wF1 {vals}); the epoch is chosen on validation in every fit. "
        f"{len(items) + len(W_GRID)} fits in {workers} worker process(es), one thread each."
    )
    try:
        result.figures.append(_plot(example, f1, out_dir))
    except ImportError as exc:
        result.notes.append(str(exc))
    return result


def _plot(example: dict[str, Any], f1: dict[str, np.ndarray], out_dir: Path) -> Path:
    plt = require_matplotlib("plot", "metastreet")
    from matplotlib.collections import LineCollection

    city = _city(example["config"], "both", example["seed"])
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.5))
    cmap = plt.get_cmap("viridis", 4)
    panels = ((axes[0], city.labels, "true class"), (axes[1], example["pred"], "predicted"))
    for ax, vals, title in panels:
        lc = LineCollection(city.segments, colors=cmap(vals), linewidths=2.5)
        ax.add_collection(lc)
        ax.autoscale()
        ax.set_aspect("equal")
        ax.set_title(title)
        ax.axis("off")
    x = 100 * np.asarray(RATES)
    for v, style in ((FULL, "o-"), (NO_CONTRAST, "s--"), (RANDOM, "^:")):
        rows = [_rate_row(v, r) for r in RATES]
        if all(r in f1 for r in rows):
            m = [f1[r].mean() for r in rows]
            se = [f1[r].std(ddof=1) / np.sqrt(f1[r].size) if f1[r].size > 1 else 0 for r in rows]
            axes[2].errorbar(x, m, yerr=se, fmt=style, capsize=3, label=v)
    axes[2].set_xscale("log")
    axes[2].set_xticks(x, [f"{v:g}%" for v in x])
    axes[2].axhline(0.25, color="grey", lw=0.8, ls="--")
    axes[2].set(xlabel="labelled streets", ylabel="weighted F1 (test); dashed = chance")
    axes[2].legend(loc="lower right")
    fig.tight_layout()
    return save_figure(fig, out_dir / "metastreet_map.png")


EXPERIMENT = Experiment(
    "metastreet",
    "MetaStreet: geography-aware contrast vs random positives, label efficiency, ablations",
    reproduce,
    QUICK,
    FULL_CONFIG,
)
