"""Masking check: replace the top-k BA words (same-category random words) vs k random words, and
recompute the held-out BA r with the ridge fixed."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26_shared.checks import SeedLike, rng_from_seed
from icml26_shared.experiment import progress as progress_bar

from ._encoding import Pipeline, _replacement
from ._metrics import top_k
from ._ridge import pearson_cols

__all__ = ["MaskingResult", "masking_test"]


@dataclass
class MaskingResult:
    """Mean r over the pipeline voxels: original, top-k masked, random-k masked; relative drops."""

    r_original: float
    r_top: float
    r_random: float
    drop_top: float
    drop_random: float
    k: int

    @property
    def ratio(self) -> float:
        """``drop_top / drop_random`` (inf when the random drop is ≤ 0 and the top drop > 0)."""
        if self.drop_random > 0:
            return self.drop_top / self.drop_random
        return float("inf") if self.drop_top > 0 else float("nan")


def masking_test(
    pipeline: Pipeline,
    trs: np.ndarray,
    k: int | None = None,
    *,
    method: str = "gxi",
    baseline: str = "category",
    seed: SeedLike = 0,
    progress: bool | None = None,
) -> MaskingResult:
    """Replace the top-``k`` BA words of each TR (by ``|score|`` of ``pipeline.attribute(tr,
    "ba", method, baseline=baseline)``; ``baseline`` is ignored by ``method="erasure"``) by
    random words of their category, and ``k`` random words as the control; drop = 1 − r_masked /
    r_original (mean held-out r over the pipeline voxels, ridge fixed). ``k`` defaults to
    ⌈0.05 L⌉. A faithful attribution's top-k drop is several times the random-k drop
    (``MaskingResult.ratio``)."""
    if method not in ("gxi", "ig", "erasure"):
        raise ValueError(f"method must be 'gxi', 'ig' or 'erasure', got {method!r}")
    em = pipeline.em
    rd = em.rd_
    if rd.categories is None:
        raise ValueError("masking_test needs word categories")
    trs = np.asarray(trs, dtype=int)
    if len(trs) < 3:
        raise ValueError("trs must hold at least 3 TRs")
    k = int(np.ceil(0.05 * em.context)) if k is None else int(k)
    if not 1 <= k <= em.context:
        raise ValueError(f"k must be in [1, context={em.context}], got {k}")
    rng = rng_from_seed(seed)
    y0, yt, yr = [], [], []
    for g in progress_bar(trs, enabled=progress, desc="masking"):
        ctx, _ = em.context_words(int(g))
        if len(ctx) < k:
            raise ValueError(f"k={k} is larger than TR {g}'s context of {len(ctx)} words")
        words = [rd.words[i] for i in ctx]
        cats = [rd.categories[i] for i in ctx]
        kw = {} if method == "erasure" else {"baseline": baseline}
        ws = pipeline.attribute(int(g), "ba", method, seed=seed, **kw)
        top_pos = top_k(ws.scores, k)
        top_idx = {len(words) - 1 - p for p in top_pos}
        rand_idx = set(rng.choice(len(words), size=k, replace=False).tolist())

        def masked(sel: set[int], words=words, cats=cats) -> list[str]:
            return [
                _replacement(rd, cats[i], w, rng) if i in sel else w for i, w in enumerate(words)
            ]

        y0.append(pipeline.predict(int(g)))
        yt.append(pipeline.predict(int(g), masked(top_idx)))
        yr.append(pipeline.predict(int(g), masked(rand_idx)))
    y = rd.data[np.ix_(trs, pipeline.voxels)]
    r0 = float(pearson_cols(np.array(y0), y).mean())
    rt = float(pearson_cols(np.array(yt), y).mean())
    rr = float(pearson_cols(np.array(yr), y).mean())
    return MaskingResult(r0, rt, rr, 1 - rt / r0, 1 - rr / r0, k)
