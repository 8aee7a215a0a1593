"""What an LM's (Hugging Face) config says of its size, read the same way for GPT-2-style and
BERT-style names."""

from __future__ import annotations

from typing import Any

__all__ = ["n_layers", "n_positions"]


def n_positions(lm: Any) -> int:
    """The model's maximum number of positions (``n_positions`` or
    ``max_position_embeddings``; unbounded when it states neither)."""
    cfg = lm.config
    for name in ("n_positions", "max_position_embeddings"):
        if getattr(cfg, name, None):
            return int(getattr(cfg, name))
    return 10**9


def n_layers(lm: Any) -> int:
    """The model's number of transformer layers (``n_layer`` or ``num_hidden_layers``)."""
    cfg = lm.config
    for name in ("n_layer", "num_hidden_layers"):
        if getattr(cfg, name, None) is not None:
            return int(getattr(cfg, name))
    raise ValueError("cannot read the number of layers from lm.config")
