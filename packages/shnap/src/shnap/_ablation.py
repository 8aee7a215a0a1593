"""The radial ablation as a 2 × 2 design: padding (zeros, reflect) × placement (flawed, balanced).

Does zero padding make a CNN's risk depend on depth, or do the training data? Issue 23's
ablation changed both at once (a reflect-padded CNN on location-balanced data against a
zero-padded one on flawed data) and compared single trainings, whose cut varied from 11% to
41%; and in the default world even "balanced" data tie depth to nodule size, hence to risk.
Here every CNN trains in the depth-independent world (``make_phantom(depth_independent=True)``)
and the design crosses

* padding: ``"zeros"`` or ``"reflect"``;
* placement: ``"flawed"`` (malignant nodules central in 85% of positives) or ``"balanced"``,

with ``seeds`` CNNs per cell (data and initialisation). Each CNN's SNAP radial slope is the
distance coefficient of the OLS of ψ on depth with nodule-identity terms
(:meth:`SnapMap.radial_regression`, ``by_nodule=True``), all CNNs scored on the same
insertions. Effects, from the cell means ``S[padding, placement]``:

* padding effect ``mean_pl (S[reflect, pl] − S[zeros, pl])``;
* placement effect ``mean_pad (S[pad, flawed] − S[pad, balanced])``;
* interaction ``(S[r, f] − S[z, f]) − (S[r, b] − S[z, b])``;
* reflect cut ``1 − mean_pl S[reflect, pl] / mean_pl S[zeros, pl]``, the share of the
  zero-padded slope that reflect padding removes (meaningful only where the zero-padded slope
  ``mean_pl S[zeros, pl]``, also reported, is clearly positive);

each with a percentile bootstrap interval that resamples the SNAP cases (clustered, the same
draw for every CNN) and the CNN seeds within each cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ._cnn import CNNConfig
from ._snap import SnapMap

__all__ = ["PADDINGS", "PLACEMENTS", "AblationResult", "ablation_configs", "padding_placement"]

PADDINGS = ("zeros", "reflect")
PLACEMENTS = ("flawed", "balanced")


def ablation_configs(n_cases: int, epochs: int, seeds: int) -> dict[str, CNNConfig]:
    """The design's CNNs by name ``abl-<padding>-<placement>-s<seed>`` (depth-independent
    world; seeds 0..seeds-1; the two paddings of one seed and placement share their data)."""
    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    return {
        f"abl-{pad}-{pl}-s{s}": CNNConfig(
            pad,  # type: ignore[arg-type]
            location_balanced=pl == "balanced",
            n_cases=n_cases,
            epochs=epochs,
            seed=s,
            depth_independent=True,
        )
        for pl in PLACEMENTS
        for s in range(seeds)
        for pad in PADDINGS
    }


@dataclass(frozen=True)
class AblationResult:
    """Cell slopes (per seed) and the design's effects with their bootstrap intervals."""

    slopes: dict[tuple[str, str], np.ndarray]
    effects: dict[str, tuple[float, float, float]]  # name -> (estimate, lo, hi)
    n_points: int
    n_cases: int
    level: float

    def cell_mean(self, padding: str, placement: str) -> float:
        return float(self.slopes[(padding, placement)].mean())

    def seed_sd(self) -> float:
        """Pooled within-cell standard deviation of one CNN's slope (NaN with one seed)."""
        dev = [sl - sl.mean() for sl in self.slopes.values()]
        dof = sum(len(d) - 1 for d in dev)
        return float(np.sqrt(sum(float((d**2).sum()) for d in dev) / dof)) if dof else float("nan")

    def seeds_for(self, half_width: float, z: float = 1.96) -> int:
        """CNN seeds per cell for the padding effect's interval to reach ``± half_width``
        from the seed variance alone: the effect (a difference of two-cell means) has
        variance ``sd² / n`` with ``n`` seeds per cell, so ``n = ⌈(z·sd / half_width)²⌉``
        (a lower bound: the SNAP cases add their own variance)."""
        if not half_width > 0:
            raise ValueError(f"half_width must be > 0, got {half_width}")
        return int(np.ceil((z * self.seed_sd() / half_width) ** 2))


def _effects(s: Mapping[tuple[str, str], float]) -> dict[str, float]:
    pad = np.mean([s[("reflect", pl)] - s[("zeros", pl)] for pl in PLACEMENTS])
    place = np.mean([s[(p, "flawed")] - s[(p, "balanced")] for p in PADDINGS])
    inter = (s[("reflect", "flawed")] - s[("zeros", "flawed")]) - (
        s[("reflect", "balanced")] - s[("zeros", "balanced")]
    )
    zeros = np.mean([s[("zeros", pl)] for pl in PLACEMENTS])
    reflect = np.mean([s[("reflect", pl)] for pl in PLACEMENTS])
    cut = 1.0 - reflect / zeros if zeros != 0 else float("nan")
    return {
        "zeros slope (mean over placement)": float(zeros),
        "padding effect (reflect - zeros)": float(pad),
        "placement effect (flawed - balanced)": float(place),
        "interaction": float(inter),
        "reflect cut (share of the zeros slope)": float(cut),
    }


def padding_placement(
    snap: SnapMap,
    psi: Mapping[str, np.ndarray],
    configs: Mapping[str, CNNConfig],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> AblationResult:
    """The 2 × 2 analysis (module docstring).

    Args:
        snap: the insertion points (distance, nodule, case) shared by all CNNs.
        psi: each CNN's insertion effects at those points, by the names of ``configs``.
        configs: :func:`ablation_configs`.
        n_boot: bootstrap replicates; seed: their generator; level: the interval's level.
    """
    missing = [n for n in configs if n not in psi]
    if missing:
        raise ValueError(f"psi lacks the CNNs {missing}")
    cells: dict[tuple[str, str], list[str]] = {(p, pl): [] for p in PADDINGS for pl in PLACEMENTS}
    for name, cfg in configs.items():
        pl = "balanced" if cfg.location_balanced else "flawed"
        cells[(cfg.padding, pl)].append(name)
    empty = [c for c, v in cells.items() if not v]
    if empty:
        raise ValueError(f"configs leave the cells {empty} empty")
    names = [n for v in cells.values() for n in v]
    Y = np.column_stack([np.asarray(psi[n], np.float64) for n in names])
    if Y.shape[0] != len(snap.psi):
        raise ValueError(f"psi must have {len(snap.psi)} points per CNN, got {Y.shape[0]}")
    X, _ = snap.design(by_nodule=True)
    col = {n: j for j, n in enumerate(names)}

    def slopes(rows: np.ndarray) -> np.ndarray:
        b, *_ = np.linalg.lstsq(X[rows], Y[rows], rcond=None)
        return b[1]

    every = np.arange(len(Y))
    full = slopes(every)
    cell_slopes = {c: np.array([full[col[n]] for n in v]) for c, v in cells.items()}
    estimate = _effects({c: float(v.mean()) for c, v in cell_slopes.items()})
    rng = np.random.default_rng(seed)
    cases = np.unique(snap.case)
    rows_of = [np.flatnonzero(snap.case == c) for c in cases]
    draws: dict[str, list[float]] = {k: [] for k in estimate}
    for _ in range(n_boot):
        if len(cases) >= 2:
            rows = np.concatenate([rows_of[i] for i in rng.integers(len(cases), size=len(cases))])
        else:
            rows = every[rng.integers(len(every), size=len(every))]
        sl = slopes(rows)
        means = {}
        for c, v in cells.items():
            pick = rng.integers(len(v), size=len(v))
            means[c] = float(np.mean([sl[col[v[i]]] for i in pick]))
        for k, val in _effects(means).items():
            draws[k].append(val)
    q = (0.5 - level / 2, 0.5 + level / 2)
    effects = {}
    for k, est in estimate.items():
        lo, hi = np.nanquantile(np.asarray(draws[k]), q)
        effects[k] = (est, float(lo), float(hi))
    return AblationResult(cell_slopes, effects, len(Y), len(cases), level)
