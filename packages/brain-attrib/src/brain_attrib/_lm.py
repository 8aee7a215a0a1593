"""The tiny causal LM (a ``transformers`` GPT-2 built from a config), trained on the grammar corpus,
and the oracle "LM" of the synthetic fMRI (noun-identity embeddings, no transformer).

With the default hyperparameters the weights ship with the package (``tiny_lm_4x128.npz``: int8
matrices with one float scale per row, float32 vectors; about 0.8 MB) and load without training or
network. Any other setting is trained (deterministic: fixed seeds, one torch thread), announced on
stderr first, and cached in a folder written with ``save_pretrained``; it is read back with
``from_pretrained(folder, local_files_only=True)`` exactly like any user-supplied local causal LM.
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

from icml26_shared.checks import SeedLike, int_from_seed
from icml26_shared.experiment import progress as progress_bar
from icml26_shared.state import reading
from icml26_shared.threads import single_thread

from ._grammar import WordTokenizer, grammar_corpus

__all__ = [
    "DEFAULT_HP",
    "OracleLM",
    "corpus_ids",
    "heldout_ce",
    "oracle_lm",
    "tiny_lm",
    "unigram_ce",
    "write_shipped",
]

SHIPPED = Path(__file__).with_name("tiny_lm_4x128.npz")
DEFAULT_HP = dict(
    n_layer=4,
    n_embd=128,
    n_head=4,
    n_positions=256,
    train_tokens=300_000,
    steps=600,
    batch=16,
    seq=128,
    seed=0,
    v=2,
)


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
    seed: SeedLike = 0,
    progress: bool | None = None,
    shipped: bool = True,
) -> tuple[Any, WordTokenizer, dict[str, Any]]:
    """The tiny GPT-2 of the grammar: ``(lm, tokenizer, info)``.

    Defaults are the spec's model: 4 layers, width 128, 4 heads, 256 positions, 600 steps. With
    these defaults and ``shipped=True`` the weights shipped with the package are loaded (no
    training; ``info["source"] == "shipped"``). Otherwise the model is trained — a message on
    stderr first (unless ``progress=False``), a progress bar when stderr is a terminal
    (``progress=None``) or ``progress=True`` — and cached under ``$BRAIN_ATTRIB_CACHE`` (default
    ``~/.cache/brain_attrib``) in a folder keyed by a hash of every hyperparameter, or in
    ``folder``. ``info`` holds the held-out and unigram cross-entropies (nats/token).
    """
    from transformers import GPT2LMHeadModel

    seed = int_from_seed(seed, "seed", bits=63)
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
    if shipped and folder is None and hp == DEFAULT_HP and SHIPPED.is_file():
        return _load_shipped(SHIPPED), tok, _shipped_info(SHIPPED)
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
                return lm.eval(), WordTokenizer.load(path), {**info, "source": "cached"}
            except Exception as exc:
                warnings.warn(
                    f"cached tiny LM at {path} cannot be loaded ({type(exc).__name__}: {exc}); "
                    "retraining and overwriting it",
                    UserWarning,
                    stacklevel=2,
                )
    if progress is not False:
        print(
            f"brain-attrib: training the tiny LM ({n_layer} layers, width {n_embd}, {steps} steps "
            f"of {batch}x{seq} tokens on one CPU thread; minutes for the spec's size)"
            + (f"; cached at {path} for later calls" if cache else ""),
            file=sys.stderr,
            flush=True,
        )
    train = corpus_ids(int(train_tokens * 0.8), seed + 1, tok)[:train_tokens]
    test = corpus_ids(20_000, seed + 2, tok)
    with single_thread():
        torch.manual_seed(seed)
        lm = _gpt2(hp)
        opt = torch.optim.AdamW(lm.parameters(), lr=3e-3, weight_decay=0.01)
        rng = np.random.default_rng(seed)
        lm.train()
        for step in progress_bar(
            range(steps),
            enabled=progress,
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
    info = {"hp": hp, "heldout_ce": ce, "unigram_ce": unigram_ce(train, test, len(tok))}
    if cache:
        path.mkdir(parents=True, exist_ok=True)
        lm.save_pretrained(path)
        tok.save(path)
        (path / "info.json").write_text(json.dumps(info, allow_nan=False))
        lm = GPT2LMHeadModel.from_pretrained(path, local_files_only=True).eval()
    info = {**info, "source": "trained"}
    return lm, tok, info


def _gpt2(hp: dict[str, Any]) -> Any:
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        vocab_size=len(WordTokenizer()),
        n_positions=hp["n_positions"],
        n_embd=hp["n_embd"],
        n_layer=hp["n_layer"],
        n_head=hp["n_head"],
        bos_token_id=2,
        eos_token_id=2,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    return GPT2LMHeadModel(cfg)


def _quantized(lm: Any) -> dict[str, np.ndarray]:
    """Parameters as int8 rows with one float32 scale each (matrices) or float32 (vectors)."""
    out = {}
    for name, p in lm.named_parameters():
        a = p.detach().float().numpy()
        if a.ndim == 2:
            scale = np.maximum(np.abs(a).max(axis=1, keepdims=True), 1e-12) / 127.0
            out[f"{name}|q"] = np.round(a / scale).astype(np.int8)
            out[f"{name}|s"] = scale.astype(np.float32)
        else:
            out[name] = a.astype(np.float32)
    return out


def _load_shipped(path: Path) -> Any:
    with reading(path, "brain-attrib's tiny LM weights"), np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
        lm = _gpt2(meta["hp"])
        state = {}
        for name, _ in lm.named_parameters():
            if f"{name}|q" in z:
                state[name] = torch.as_tensor(z[f"{name}|q"].astype(np.float32) * z[f"{name}|s"])
            else:
                state[name] = torch.as_tensor(z[name])
    lm.load_state_dict(state, strict=False)  # buffers (causal masks) come from the config
    lm.tie_weights()
    return lm.eval()


def _shipped_info(path: Path) -> dict[str, Any]:
    with reading(path, "brain-attrib's tiny LM weights"), np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta"]))
    return {**meta, "source": "shipped"}


def write_shipped(path: Path | str = SHIPPED, *, progress: bool | None = None) -> dict[str, Any]:
    """Train the default tiny LM (cached), quantise it, measure the quantised model's held-out
    CE and write the shipped file. Returns its ``info``."""
    lm, tok, info = tiny_lm(shipped=False, progress=progress)
    arrays = _quantized(lm)
    meta = {"hp": info["hp"], "unigram_ce": info["unigram_ce"]}
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), **arrays)
    q = _load_shipped(Path(path))
    meta["heldout_ce"] = heldout_ce(q, corpus_ids(20_000, DEFAULT_HP["seed"] + 2, tok), 128)
    meta["heldout_ce_float32"] = info["heldout_ce"]
    np.savez_compressed(path, meta=np.array(json.dumps(meta)), **arrays)
    return meta


class _OracleConfig:
    n_layer = 0
    n_positions = 10**6


class OracleLM(torch.nn.Module):
    """A stand-in "LM" whose layer-0 hidden state of a word is the one-hot identity of its topic
    noun stem (plurals share the stem; every other word is the zero vector). Fitted by
    :class:`~brain_attrib.EncodingModel` at ``layer=0``, it gives the encoding model of the
    synthetic fMRI that knows which words carry signal: the ceiling against which attribution
    faithfulness is measured. It has no LM head (no NWP)."""

    config = _OracleConfig()

    def __init__(self, tokenizer: WordTokenizer | None = None) -> None:
        super().__init__()
        from ._grammar import NOUNS, TOPICS

        tok = tokenizer or WordTokenizer()
        stems = [n for t in TOPICS for n in NOUNS[t]]
        table = torch.zeros(len(tok), len(stems), dtype=torch.float64)
        for k, stem in enumerate(stems):
            for w in (stem, stem + "s"):
                table[tok.encode_word(w)[-1], k] = 1.0
        self.embed = torch.nn.Embedding.from_pretrained(table, freeze=True)

    def get_input_embeddings(self) -> torch.nn.Embedding:
        return self.embed

    def get_output_embeddings(self) -> None:
        return None

    def forward(self, inputs_embeds: torch.Tensor, output_hidden_states: bool = True) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace(hidden_states=(inputs_embeds,), logits=None)


def oracle_lm() -> tuple[OracleLM, WordTokenizer]:
    """The oracle encoder's "LM" and its tokenizer (see :class:`OracleLM`); use ``layer=0``."""
    tok = WordTokenizer()
    return OracleLM(tok), tok


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
