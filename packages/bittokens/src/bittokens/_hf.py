"""Hugging Face integration: a number-aware tokenizer and a BitTokens wrapper for causal LMs.

``NumberTokenizer`` cuts every numeric span (optional ``-``, digits, optional fraction, optional
``e+-dd``) out of the text, writes one ``<|num|>`` token in its place and keeps the value in a
float64 side tensor; the rest of the text goes through the wrapped ``tokenizers`` tokenizer.
``BitTokensForCausalLM`` puts a :class:`bittokens.NumberEmbedding` in front of any
``transformers`` causal LM and a :class:`bittokens.BitHead` behind it; the loss is the LM
cross-entropy plus ``lambda`` times the bit loss at positions whose next token is a number.

Nothing here downloads: models are built from configs or loaded from local folders
(``local_files_only=True``). Needs ``pip install bittokens[hf]``.

References:
    Kreitner, Hager et al., "Efficient numeracy in language models through single-token number
    embeddings" (BitTokens), ICML 2026, arXiv:2510.06824.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from icml26_shared.state import reading

from ._codec import decode
from ._layers import BitHead, NumberEmbedding, bit_loss
from ._schemes import NUM_TOKEN, format_number

__all__ = ["NUMBER_PATTERN", "BitTokensForCausalLM", "BitTokensOutput", "NumberTokenizer"]

#: a numeric span: optional minus, digits, optional fraction, optional exponent.
#: A number in text: optional minus, digits (or 3-digit groups with thousands separators,
#: "1,000,000"), optional fraction, optional exponent.
NUMBER_PATTERN = re.compile(r"-?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_EXACT_INT = 2**53


def _require_tokenizers() -> Any:
    try:
        import tokenizers
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("bittokens.hf needs tokenizers: `pip install bittokens[hf]`") from exc
    return tokenizers


def _require_transformers() -> Any:
    try:
        import transformers
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("bittokens.hf needs transformers: `pip install bittokens[hf]`") from exc
    return transformers


def _backend(tok: Any) -> Any:
    tokenizers = _require_tokenizers()
    if isinstance(tok, tokenizers.Tokenizer):
        return tok
    for attr in ("backend_tokenizer", "_tokenizer"):
        inner = getattr(tok, attr, None)
        if isinstance(inner, tokenizers.Tokenizer):
            return inner
    raise TypeError(
        f"tok must be a tokenizers.Tokenizer or a fast transformers tokenizer, got {type(tok).__name__}"
    )


class NumberTokenizer:
    """Tokenise text with one ``<|num|>`` token per number and a float64 value tensor.

    Args:
        tok: a ``tokenizers.Tokenizer`` or a fast ``transformers`` tokenizer; ``<|num|>`` is added
            as a special token when missing. Use a byte-level tokenizer for exact round trips.
        pad_id: id used for padding (default: the tokenizer's ``<pad>`` if any, else 0).

    Examples:
        ``NumberTokenizer(tok)(["x = 1.5"])`` gives ``input_ids``, ``attention_mask``,
        ``number_values`` (1.5 at the ``<|num|>`` position) and ``number_mask``.
    """

    def __init__(self, tok: Any, pad_id: int | None = None) -> None:
        self.tokenizer = _backend(tok)
        if self.tokenizer.token_to_id(NUM_TOKEN) is None:
            tokenizers = _require_tokenizers()
            self.tokenizer.add_special_tokens([tokenizers.AddedToken(NUM_TOKEN, special=True)])
        self.num_id: int = self.tokenizer.token_to_id(NUM_TOKEN)
        default_pad = self.tokenizer.token_to_id("<pad>")
        self.pad_id = (
            pad_id if pad_id is not None else (default_pad if default_pad is not None else 0)
        )

    @property
    def vocab_size(self) -> int:
        """Vocabulary size including ``<|num|>``."""
        return int(self.tokenizer.get_vocab_size(with_added_tokens=True))

    def split(self, text: str) -> tuple[list[str], list[float]]:
        """Text pieces around the numbers, and the numbers (``len(pieces) = len(numbers) + 1``).

        Thousands separators are read as part of the number ("1,000" is 1000, written back as
        "1000"); numbers that overflow (become ±inf) or underflow (become 0) in float64, and
        integers above 2^53, warn.
        """
        pieces: list[str] = []
        values: list[float] = []
        last = 0
        for m in NUMBER_PATTERN.finditer(text):
            span = m.group().replace(",", "")
            value = float(span)
            if not any(c in span for c in ".eE") and abs(int(span)) > _EXACT_INT:
                warnings.warn(
                    f"integer {m.group()} exceeds 2^53 and rounds to {format_number(value)}",
                    stacklevel=3,
                )
            elif math.isinf(value):
                warnings.warn(
                    f"number {m.group()} overflows float64 and becomes {value}", stacklevel=3
                )
            elif value == 0 and any(c in "123456789" for c in re.split("[eE]", span)[0]):
                warnings.warn(f"number {m.group()} underflows float64 and becomes 0", stacklevel=3)
            pieces.append(text[last : m.start()])
            values.append(value)
            last = m.end()
        pieces.append(text[last:])
        return pieces, values

    def encode(self, text: str) -> tuple[list[int], list[float]]:
        """Token ids and per-token values (0 off numbers) of one text."""
        pieces, values = self.split(text)
        enc = self.tokenizer.encode_batch(pieces, add_special_tokens=False)
        ids: list[int] = []
        vals: list[float] = []
        for i, e in enumerate(enc):
            ids += e.ids
            vals += [0.0] * len(e.ids)
            if i < len(values):
                ids.append(self.num_id)
                vals.append(values[i])
        return ids, vals

    def __call__(self, texts: str | list[str]) -> dict[str, torch.Tensor]:
        """Batch-tokenise, right-padded: ``input_ids, attention_mask, number_values, number_mask``."""
        if isinstance(texts, str):
            texts = [texts]
        rows = [self.encode(t) for t in texts]
        n, t = len(rows), max((len(r[0]) for r in rows), default=0)
        ids = torch.full((n, t), self.pad_id, dtype=torch.long)
        vals = torch.zeros(n, t, dtype=torch.float64)
        attn = torch.zeros(n, t, dtype=torch.long)
        for i, (r_ids, r_vals) in enumerate(rows):
            ids[i, : len(r_ids)] = torch.tensor(r_ids, dtype=torch.long)
            vals[i, : len(r_vals)] = torch.tensor(r_vals, dtype=torch.float64)
            attn[i, : len(r_ids)] = 1
        return {
            "input_ids": ids,
            "attention_mask": attn,
            "number_values": vals,
            "number_mask": (ids == self.num_id) & attn.bool(),
        }

    def decode(self, ids: Any, values: Any, attention_mask: Any = None) -> str | list[str]:
        """Text of token ids, numbers written back in shortest round-trip form.

        Args:
            ids: ``(T,)`` or ``(B, T)`` token ids.
            values: per-token values, same shape.
            attention_mask: optional mask of real tokens (padding dropped).
        """
        ids_t = torch.as_tensor(ids)
        vals_t = torch.as_tensor(values, dtype=torch.float64)
        if tuple(vals_t.shape) != tuple(ids_t.shape):
            raise ValueError(
                f"values must have shape {tuple(ids_t.shape)} like ids, got {tuple(vals_t.shape)}"
            )
        if ids_t.ndim == 2:
            masks = attention_mask if attention_mask is not None else [None] * len(ids_t)
            return [self.decode(i, v, m) for i, v, m in zip(ids_t, vals_t, masks)]
        keep = (
            torch.ones_like(ids_t, dtype=torch.bool)
            if attention_mask is None
            else torch.as_tensor(attention_mask).bool()
        )
        out: list[str] = []
        run: list[int] = []
        for tok_id, v in zip(ids_t[keep].tolist(), vals_t[keep].tolist()):
            if tok_id == self.num_id:
                out.append(self.tokenizer.decode(run, skip_special_tokens=False) if run else "")
                out.append(format_number(v))
                run = []
            else:
                run.append(tok_id)
        if run:
            out.append(self.tokenizer.decode(run, skip_special_tokens=False))
        return "".join(out)


@dataclass
class BitTokensOutput:
    """``loss`` (None without labels), LM ``logits (B, T, V)``, ``number_logits (B, T, 64)``."""

    loss: torch.Tensor | None
    logits: torch.Tensor
    number_logits: torch.Tensor
    lm_loss: torch.Tensor | None = None
    bit_loss: torch.Tensor | None = None


class BitTokensForCausalLM(nn.Module):
    """Give a ``transformers`` causal LM single-token numbers.

    Args:
        model: a ``PreTrainedModel`` with a causal LM head (GPT-2, Llama, ...), width ``d >= 128``.
        num_token_id: the id of ``<|num|>`` (``NumberTokenizer.num_id``); the model's embedding
            table is resized when it is too small.
        combine: ``"zero_pad"`` (default) or ``"sum"``.
        head_hidden: ``None`` for a linear bit head, else the MLP hidden width.
        loss_weight: ``lambda`` (10).
        slope: bit-weight slope ``s`` (0).
    """

    def __init__(
        self,
        model: Any,
        num_token_id: int,
        combine: str = "zero_pad",
        head_hidden: int | None = None,
        loss_weight: float = 10.0,
        slope: float = 0.0,
    ) -> None:
        super().__init__()
        _require_transformers()
        self.model = model
        d = int(model.config.hidden_size)
        if model.get_input_embeddings().num_embeddings <= num_token_id:
            model.resize_token_embeddings(num_token_id + 1)
        self.num_token_id = int(num_token_id)
        self.options = {
            "combine": combine,
            "head_hidden": head_hidden,
            "loss_weight": loss_weight,
            "slope": slope,
        }
        self.number_embedding = NumberEmbedding(d, combine)
        self.bit_head = BitHead(d, head_hidden)
        self.loss_weight = float(loss_weight)
        self.slope = float(slope)

    def _embed(
        self, input_ids: torch.Tensor, values: torch.Tensor | None, mask: torch.Tensor | None
    ) -> torch.Tensor:
        emb = self.model.get_input_embeddings()(input_ids)
        if mask is None:
            mask = input_ids == self.num_token_id
        if values is None:
            values = torch.zeros(input_ids.shape, dtype=torch.float64, device=input_ids.device)
        return self.number_embedding(emb, values, mask.bool())

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        number_values: torch.Tensor | None = None,
        number_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
    ) -> BitTokensOutput:
        """Run the LM with number embeddings.

        Args:
            input_ids: ``(B, T)``.
            attention_mask: ``(B, T)`` (1 = real token).
            number_values: ``(B, T)`` float64 values at ``<|num|>`` tokens.
            number_mask: ``(B, T)`` bool (default: ``input_ids == num_token_id``).
            labels: ``(B, T)`` targets (``-100`` ignored) to compute the loss; the bit loss is
                taken where the next label is ``<|num|>``, against ``number_values`` there.
        """
        for name, t in (
            ("attention_mask", attention_mask),
            ("number_values", number_values),
            ("number_mask", number_mask),
            ("labels", labels),
        ):
            if t is not None and tuple(t.shape) != tuple(input_ids.shape):
                raise ValueError(
                    f"{name} must have shape {tuple(input_ids.shape)} like input_ids, got {tuple(t.shape)}"
                )
        embeds = self._embed(input_ids, number_values, number_mask)
        out = self.model.base_model(inputs_embeds=embeds, attention_mask=attention_mask)
        h = out.last_hidden_state if hasattr(out, "last_hidden_state") else out[0]
        logits = self.model.get_output_embeddings()(h)
        number_logits = self.bit_head(h)
        loss = lm = bl = None
        if labels is not None:
            lm = F.cross_entropy(
                logits[:, :-1].reshape(-1, logits.shape[-1]).float(),
                labels[:, 1:].reshape(-1),
                ignore_index=-100,
            )
            nxt_num = labels[:, 1:] == self.num_token_id
            vals = (
                number_values
                if number_values is not None
                else torch.zeros_like(input_ids, dtype=torch.float64)
            )
            bl = bit_loss(number_logits[:, :-1], vals[:, 1:], nxt_num, slope=self.slope)
            loss = lm + self.loss_weight * bl
        return BitTokensOutput(loss, logits, number_logits, lm, bl)

    @torch.no_grad()
    def generate(
        self,
        input_ids: torch.Tensor,
        number_values: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        max_new_tokens: int = 20,
        eos_token_id: int | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Greedy decoding (no cache); a generated ``<|num|>`` takes its decoded bit value.

        Prompts of unequal length should be left-padded with ``attention_mask``.

        Returns:
            ``(ids, values)`` of the prompt followed by the generated tokens.
        """
        ids = input_ids
        vals = (
            number_values
            if number_values is not None
            else torch.zeros(ids.shape, dtype=torch.float64)
        )
        attn = attention_mask if attention_mask is not None else torch.ones_like(ids)
        done = torch.zeros(ids.shape[0], dtype=torch.bool, device=ids.device)
        for _ in range(max_new_tokens):
            out = self(ids, attn, vals, (ids == self.num_token_id) & attn.bool())
            nxt = out.logits[:, -1].argmax(-1)
            if eos_token_id is not None:
                nxt = torch.where(done, torch.full_like(nxt, eos_token_id), nxt)
            v = torch.where(nxt == self.num_token_id, decode(out.number_logits[:, -1].float()), 0.0)
            ids = torch.cat([ids, nxt[:, None]], 1)
            vals = torch.cat([vals, v.to(vals.dtype)[:, None]], 1)
            attn = torch.cat([attn, torch.ones_like(attn[:, :1])], 1)
            if eos_token_id is not None:
                done |= nxt == eos_token_id
                if bool(done.all()):
                    break
        return ids, vals

    def save_pretrained(self, path: str | Path) -> None:
        """Save the LM (``transformers`` format) and the BitTokens parts into ``path``."""
        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(p / "lm")
        torch.save({"bit_head": self.bit_head.state_dict()}, p / "bittokens.pt")
        (p / "bittokens.json").write_text(
            json.dumps({"num_token_id": self.num_token_id, **self.options})
        )

    @classmethod
    def from_pretrained(cls, path: str | Path, **model_kwargs: Any) -> BitTokensForCausalLM:
        """Load what :meth:`save_pretrained` wrote (local files only, nothing is downloaded)."""
        transformers = _require_transformers()
        p = Path(path)
        if not p.is_dir():
            raise FileNotFoundError(f"{p}: no such folder (from_pretrained reads a local folder)")
        what = "a bittokens save_pretrained folder"
        with reading(p / "bittokens.json", f"the BitTokens options of {what}"):
            cfg = json.loads((p / "bittokens.json").read_text())
            if not isinstance(cfg, dict) or "num_token_id" not in cfg:
                raise ValueError("it holds no num_token_id")
        with reading(p / "lm", f"the transformers model of {what}"):
            try:
                lm = transformers.AutoModelForCausalLM.from_pretrained(
                    p / "lm", local_files_only=True, **model_kwargs
                )
            except Exception as exc:  # safetensors' own error is not an OSError
                if type(exc).__name__ == "SafetensorError":
                    raise ValueError(str(exc)) from exc
                raise
        num_id = cfg.pop("num_token_id")
        obj = cls(lm, num_id, **cfg)
        with reading(p / "bittokens.pt", f"the bit head of {what}"):
            state = torch.load(p / "bittokens.pt", weights_only=True)
            obj.bit_head.load_state_dict(state["bit_head"])
        return obj
