"""The tiny causal LM (a ``transformers`` GPT-2 built from a config), trained on the grammar corpus.

Training is deterministic (fixed seeds, one torch thread while training) and cached in a folder
written with ``save_pretrained``; it is read back with ``from_pretrained(folder,
local_files_only=True)`` exactly like any user-supplied local causal LM.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26_shared.experiment import progress as progress_bar

from ._grammar import WordTokenizer, grammar_corpus

__all__ = ["corpus_ids", "heldout_ce", "tiny_lm", "unigram_ce"]


def corpus_ids(n_words: int, seed: int, tok: WordTokenizer) -> np.ndarray:
    """Token ids of a grammar corpus of ``n_words`` words."""
    c = grammar_corpus(n_words, seed=seed)
    return np.asarray([i for w in c.words for i in tok.encode_word(w)], dtype=np.int64)


def _cache_root() -> Path:
    return Path(os.environ.get("BRAIN_ATTRIB_CACHE", Path.home() / ".cache" / "brain_attrib"))


def tiny_lm(
    *,
    cache: bool = True,
    folder: Path | str | None = None,
    n_layer: int = 4,
    n_embd: int = 128,
    n_head: int = 4,
    n_positions: int = 256,
    train_tokens: int = 300_000,
    steps: int = 600,
    batch: int = 16,
    seq: int = 128,
    seed: int = 0,
    progress: bool | None = None,
) -> tuple[Any, WordTokenizer, dict[str, Any]]:
    """Train (or load from cache) the tiny GPT-2 on the grammar; returns ``(lm, tokenizer, info)``.

    Defaults are the spec's model: 4 layers, width 128, 4 heads, 256 positions. The cache folder
    is keyed by a hash of every hyperparameter (``n_layer`` included), so a model cached with
    other settings (e.g. the earlier 2-layer default) is never reused.
    ``info`` holds the held-out cross-entropy and the unigram cross-entropy (nats/token).
    """
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = WordTokenizer()
    hp = dict(
        n_layer=n_layer,
        n_embd=n_embd,
        n_head=n_head,
        n_positions=n_positions,
        train_tokens=train_tokens,
        steps=steps,
        batch=batch,
        seq=seq,
        seed=seed,
        v=2,
    )
    key = hashlib.sha256(json.dumps(hp, sort_keys=True).encode()).hexdigest()[:12]
    path = Path(folder) if folder is not None else _cache_root() / f"tiny_lm-{key}"
    if cache and (path / "info.json").exists():
        try:
            info = json.loads((path / "info.json").read_text())
        except (OSError, ValueError) as exc:
            info = None
            warnings.warn(
                f"cached tiny LM at {path}: info.json is unreadable ({exc}); retraining and "
                "overwriting it",
                UserWarning,
                stacklevel=2,
            )
        if isinstance(info, dict) and info.get("hp") != hp:
            diff = [k for k in hp if info.get("hp", {}).get(k) != hp[k]]
            raise ValueError(f"cached tiny LM at {path} has other hyperparameters: {diff}")
        if isinstance(info, dict):
            try:
                lm = GPT2LMHeadModel.from_pretrained(path, local_files_only=True)
                return lm.eval(), WordTokenizer.load(path), info
            except Exception as exc:
                warnings.warn(
                    f"cached tiny LM at {path} cannot be loaded ({type(exc).__name__}: {exc}); "
                    "retraining and overwriting it",
                    UserWarning,
                    stacklevel=2,
                )
    train = corpus_ids(int(train_tokens * 0.8), seed + 1, tok)[:train_tokens]
    test = corpus_ids(20_000, seed + 2, tok)
    cfg = GPT2Config(
        vocab_size=len(tok),
        n_positions=n_positions,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        bos_token_id=2,
        eos_token_id=2,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        torch.manual_seed(seed)
        lm = GPT2LMHeadModel(cfg)
        opt = torch.optim.AdamW(lm.parameters(), lr=3e-3, weight_decay=0.01)
        rng = np.random.default_rng(seed)
        lm.train()
        for step in progress_bar(
            range(steps),
            enabled=sys.stderr.isatty() if progress is None else progress,
            desc="tiny LM",
        ):
            lr = (
                3e-3
                * min(1.0, (step + 1) / max(1, min(50, steps // 5)))
                * 0.5
                * (1 + math.cos(math.pi * step / steps))
            )
            for g in opt.param_groups:
                g["lr"] = lr
            starts = rng.integers(0, len(train) - seq - 1, size=batch)
            x = torch.as_tensor(np.stack([train[s : s + seq] for s in starts]))
            loss = lm(input_ids=x, labels=x).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
        lm.eval()
        ce = heldout_ce(lm, test, seq)
    finally:
        torch.set_num_threads(old)
    info = {"hp": hp, "heldout_ce": ce, "unigram_ce": unigram_ce(train, test, len(tok))}
    if cache:
        path.mkdir(parents=True, exist_ok=True)
        lm.save_pretrained(path)
        tok.save(path)
        (path / "info.json").write_text(json.dumps(info, allow_nan=False))
        lm = GPT2LMHeadModel.from_pretrained(path, local_files_only=True).eval()
    return lm, tok, info


@torch.no_grad()
def heldout_ce(lm: Any, ids: np.ndarray, seq: int) -> float:
    """Mean next-token cross-entropy (nats) on non-overlapping windows of ``ids``."""
    n = (len(ids) - 1) // seq
    x = torch.as_tensor(ids[: n * seq].reshape(n, seq))
    return float(lm(input_ids=x, labels=x).loss)


def unigram_ce(train: np.ndarray, test: np.ndarray, vocab: int) -> float:
    """Cross-entropy of add-one unigram frequencies from ``train`` on ``test`` (nats)."""
    counts = np.bincount(train, minlength=vocab) + 1.0
    p = counts / counts.sum()
    return float(-np.mean(np.log(p[test])))
