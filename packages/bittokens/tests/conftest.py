"""Shared fixtures: offline Hugging Face, a locally trained byte-level BPE tokenizer."""

from __future__ import annotations

import numpy as np
import pytest

from icml26_shared.threads import single_thread


@pytest.fixture
def hf_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """No network for transformers / huggingface_hub in this test."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def torch_threads():
    """Run with one torch thread (and one BLAS thread), restoring the previous counts."""
    with single_thread():
        yield


@pytest.fixture(scope="session")
def bpe_tokenizer():
    """A byte-level BPE trained here on a few hundred short sentences (no download)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    rng = np.random.default_rng(0)
    words = ["min", "max", "of", "the", "value", "is", "price", "sum", "=", ",", "and", "x", "y"]
    corpus = [
        " ".join(rng.choice(words, 6).tolist()) + f" {rng.normal() * 100:.3f} {rng.integers(0, 99)}"
        for _ in range(400)
    ]
    trainer = trainers.BpeTrainer(
        vocab_size=300,
        special_tokens=["<pad>", "<bos>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    return tok
