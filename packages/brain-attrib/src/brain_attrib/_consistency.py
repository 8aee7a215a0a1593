"""The gap between the fitted ridge's predictions and the differentiable pipeline's (spec
acceptance item 3).

For TRs g ∈ G and the pipeline's voxels V, with ``A = ŷ_ridge`` (``EncodingModel.pred_``: the
held-out ridge prediction from the fitted design ``X``) and ``B = ŷ_pipeline``
(``Pipeline.predict``: features from the one LM pass per TR, through the same fold's ridge):

    max_abs = max_{g,v} |B_gv − A_gv|,
    rel_rms = ‖B − A‖_F / ‖A − 1 ā‖_F   (ā the per-voxel mean of A over G),
    corr    = Pearson r between vec(A) and vec(B),
    r_ridge, r_pipeline = mean over v of Pearson r (over G) of A resp. B with the data.

With ``features="per_tr"`` the two are the same function (gap ~1e-12 in float64); with
``features="per_word"`` the ridge was fitted on per-word contexts and the gap is what attribution
through the pipeline changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26_shared.checks import SeedLike, rng_from_seed

from ._encoding import Pipeline
from ._ridge import pearson_cols

__all__ = ["ConsistencyGap", "consistency_gap"]


@dataclass
class ConsistencyGap:
    """Fit-vs-pipeline gap on ``trs`` (see the module docstring); ``features`` is the fit's."""

    features: str
    trs: np.ndarray
    max_abs: float
    rel_rms: float
    corr: float
    r_ridge: float
    r_pipeline: float

    def __str__(self) -> str:
        return (
            f"features={self.features}, {len(self.trs)} TRs: max |Δŷ| {self.max_abs:.3g}, "
            f"rel. RMS {self.rel_rms:.3g}, corr {self.corr:.4f}, r ridge {self.r_ridge:.3f} vs "
            f"pipeline {self.r_pipeline:.3f}"
        )


def consistency_gap(
    pipeline: Pipeline, trs: np.ndarray | None = None, *, n: int = 20, seed: SeedLike = 0
) -> ConsistencyGap:
    """Compare ``pipeline.predict(g)`` with the fitted ridge prediction on ``trs`` (default:
    ``n`` random TRs with a non-empty context, drawn with ``seed``)."""
    if not isinstance(pipeline, Pipeline):
        raise TypeError(f"pipeline must be a Pipeline, got {type(pipeline).__name__}")
    em = pipeline.em
    n_tr = len(em.rd_.data)
    if trs is None:
        cand = [g for g in range(n_tr) if len(em.context_words(g)[0])]
        if n < 2 or n > len(cand):
            raise ValueError(f"n must be in [2, {len(cand)}], got {n}")
        trs = rng_from_seed(seed).choice(cand, size=n, replace=False)
    trs = np.asarray(trs, dtype=int)
    if trs.ndim != 1 or len(trs) < 2 or trs.min() < 0 or trs.max() >= n_tr:
        raise ValueError(f"trs must be ≥ 2 TR indices in [0, {n_tr}), got {trs!r}")
    a = em.pred_[np.ix_(trs, pipeline.voxels)]
    b = np.stack([pipeline.predict(int(g)) for g in trs])
    y = em.rd_.data[np.ix_(trs, pipeline.voxels)]
    den = np.linalg.norm(a - a.mean(0))
    return ConsistencyGap(
        features=em.features,
        trs=trs,
        max_abs=float(np.abs(b - a).max()),
        rel_rms=float(np.linalg.norm(b - a) / den) if den > 0 else float("inf"),
        corr=float(pearson_cols(a.reshape(-1, 1), b.reshape(-1, 1))[0]),
        r_ridge=float(pearson_cols(a, y).mean()),
        r_pipeline=float(pearson_cols(b, y).mean()),
    )
