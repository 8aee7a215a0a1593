"""Per-word features (``EncodingModel(..., features="per_word")``), as the paper fits them.

Word i of a run gets its **own** forward pass over the ``L = context`` words of its run ending
with word i; its feature ``f_i`` is the layer-ℓ hidden state of its last sub-token (``pool="last"``)
or the mean over its sub-tokens (``pool="mean"``). For target TR j of that run,

    F_{j−d} = mean_{i : ⌊o_i / Δ⌋ = j − d} f_i   (zeros if TR j − d holds no word or j − d < 0),
    X_j = [F_{j−d}]_{d ∈ delays}.

The default ``features="per_tr"`` instead takes every word's feature from the one pass of TR j
(the function the differentiable pipeline uses); ``consistency_gap`` measures the difference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from icml26_shared.experiment import progress as progress_bar

from ._lmconfig import n_positions

if TYPE_CHECKING:
    from ._encoding import EncodingModel
    from ._fmri import RunData

__all__ = ["per_word_design", "word_features"]


def word_features(
    em: EncodingModel,
    run_data: RunData,
    words: np.ndarray,
    *,
    batch: int = 32,
    progress: bool | None = None,
) -> np.ndarray:
    """``f_i`` (len(words) × H, float64) for global word indices ``words``, one pass each."""
    n_pos = n_positions(em.lm)
    pos_in_run = np.zeros(len(run_data.words), dtype=int)
    for idx in em._run_words.values():
        pos_in_run[idx] = np.arange(len(idx))
    out = []
    with torch.no_grad():
        for a in progress_bar(
            range(0, len(words), batch),
            enabled=progress,
            total=(len(words) + batch - 1) // batch,
            desc=f"per-word features L{em.layer}",
        ):
            items: list[tuple[list[int], np.ndarray, list[int], None]] = []
            for i in words[a : a + batch]:
                idx = em._run_words[int(run_data.word_run[i])]
                n = pos_in_run[i]
                ids = [
                    t
                    for k in idx[max(0, n - em.context + 1) : n + 1]
                    for t in em._word_ids(run_data.words[k])
                ]
                if len(ids) > n_pos:
                    raise ValueError(
                        f"context of word {int(i)} is {len(ids)} tokens, longer than the model's "
                        f"{n_pos} positions; lower context"
                    )
                m = len(em._word_ids(run_data.words[i]))
                pool = np.zeros(len(ids))
                if em.pool == "last":
                    pool[-1] = 1.0
                else:
                    pool[-m:] = 1.0 / m
                items.append((ids, pool[None], [], None))
            ids_t, p_t = em._pad(items)  # right padding: causal, no effect
            f, _ = em._features(em.lm.get_input_embeddings()(ids_t), p_t)  # the per-TR LM call
            out.append(f[:, 0].double().numpy())
    return np.concatenate(out) if out else np.zeros((0, 0))


def per_word_design(
    em: EncodingModel, run_data: RunData, *, batch: int = 32, progress: bool | None = None
) -> np.ndarray:
    """Design ``X`` (TRs × |delays|·H) from per-word features (see the module docstring)."""
    rd = run_data
    bucket = np.floor(rd.onsets / rd.tr).astype(int)
    n_tr = {r: int(np.sum(rd.tr_run == r)) for r in em._run_words}
    need = np.array(
        [
            i
            for r, idx in em._run_words.items()
            for i in idx
            if bucket[i] + min(em.delays) < n_tr[r]
        ],
        dtype=int,
    )
    f = word_features(em, rd, need, batch=batch, progress=progress)
    h = f.shape[1] if len(need) else _hidden_size(em)
    feat = np.zeros((len(rd.words), h))
    feat[need] = f
    x = np.zeros((len(rd.data), len(em.delays), h))
    for r, idx in em._run_words.items():
        sums = np.zeros((n_tr[r], h))
        counts = np.zeros(n_tr[r])
        np.add.at(sums, bucket[idx], feat[idx])
        np.add.at(counts, bucket[idx], 1.0)
        per_tr = sums / np.maximum(counts, 1.0)[:, None]  # F_b; zero rows where no word
        rows = np.flatnonzero(rd.tr_run == r)
        for di, d in enumerate(em.delays):
            src = rd.tr_local[rows] - d
            ok = src >= 0
            x[rows[ok], di] = per_tr[src[ok]]
    return x.reshape(len(rd.data), -1)


def _hidden_size(em: EncodingModel) -> int:
    return int(em.lm.get_input_embeddings().embedding_dim)
