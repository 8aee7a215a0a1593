"""Number schemes: how a number is written into, and read out of, a decoder.

Every scheme (BitTokens and the four baselines in :mod:`bittokens.baselines`) has the same
interface, so one trunk (:class:`bittokens.TinyGPT`) trains them all:

* ``vocab``: the tokens the scheme adds to a task vocabulary;
* ``tokens_for(x)``: the token strings a number becomes (one ``<|num|>`` or several digits);
* ``parse(tokens)``: the number written by a token string (multi-token schemes);
* ``embed(emb, values, mask)``: rewrite input embeddings at number tokens;
* ``number_loss(hidden, values, mask)``: summed number loss at positions whose next token is a
  number, and the count it sums over (so data-parallel ranks can divide by a global count);
* ``predict(hidden)``: the value decoded from the hidden state before a ``<|num|>`` token.

References:
    Kreitner, Hager et al., "Efficient numeracy in language models through single-token number
    embeddings" (BitTokens), ICML 2026, arXiv:2510.06824.
"""

from __future__ import annotations

import math
import re

import torch
from torch import nn

from icml26_shared.checks import check_in_interval, check_positive

from ._codec import decode
from ._layers import BitHead, NumberEmbedding, bit_loss

__all__ = ["NUM_TOKEN", "BitTokens", "NumberScheme", "format_number", "parse_number"]

#: the single token that stands for a number in single-token schemes.
NUM_TOKEN = "<|num|>"

_NUMBER_RE = re.compile(r"^-?\d+(\.\d+)?(e-?\d+)?$")


def format_number(x: float) -> str:
    """Shortest round-trip decimal form of ``x``: ``repr`` without a trailing ``.0`` or ``e+``.

    Examples:
        >>> format_number(100.0), format_number(1.5e-06), format_number(1e16)
        ('100', '1.5e-06', '1e16')
    """
    s = repr(float(x))
    if "e" in s:
        mant, exp = s.split("e")
        mant = mant[:-2] if mant.endswith(".0") else mant
        return f"{mant}e{int(exp):+03d}".replace("e+", "e")
    return s[:-2] if s.endswith(".0") else s


def parse_number(text: str) -> float:
    """Parse a number written by :func:`format_number` (NaN when it is malformed, so that a
    model's garbled output scores as a missing answer; text that is not a ``str`` raises)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return float(text) if _NUMBER_RE.match(text) else math.nan


class NumberScheme(nn.Module):
    """Base class of number schemes (see the module docstring for the interface).

    Args:
        d: model width.
    """

    name = "scheme"
    single_token = True

    def __init__(self, d: int) -> None:
        super().__init__()
        self.d = d

    @property
    def vocab(self) -> list[str]:
        """Tokens this scheme adds to a task vocabulary."""
        return [NUM_TOKEN]

    def tokens_for(self, x: float) -> list[str]:
        """Token strings that write ``x``."""
        return [NUM_TOKEN]

    def parse(self, tokens: list[str]) -> float:
        """The number written by ``tokens`` (NaN if malformed)."""
        return parse_number("".join(tokens))

    def embed(self, emb: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Rewrite the ``(B, T, d)`` input embeddings at number positions (identity here)."""
        return emb

    def number_loss(
        self, hidden: torch.Tensor, values: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(sum of per-number losses, number count)``; ``hidden`` is ``(N, d)`` rows predicting
        the numbers ``values`` ``(N,)`` where ``mask`` ``(N,)`` is true."""
        return hidden.sum() * 0.0, mask.sum()

    def predict(self, hidden: torch.Tensor) -> torch.Tensor:
        """float64 values decoded from ``(..., d)`` hidden states."""
        raise NotImplementedError(f"{self.name} writes numbers as several tokens")


class BitTokens(NumberScheme):
    """The BitTokens scheme: one ``<|num|>`` token carrying the IEEE-754 bits of its value.

    Args:
        d: model width (>= 128 for float64 with reciprocal).
        combine: ``"zero_pad"`` (default) or ``"sum"``, see :class:`NumberEmbedding`.
        head_hidden: ``None`` for a linear bit head, else the MLP hidden width.
        loss_weight: ``lambda``, the weight of the bit loss (10).
        slope: bit-weight slope ``s`` (0).
        precision: ``"float64"`` (default), ``"float32"`` or ``"bfloat16"``.
        reciprocal: append the bits of ``1/x`` to the input (default ``True``).
    """

    name = "bittokens"

    def __init__(
        self,
        d: int,
        combine: str = "zero_pad",
        head_hidden: int | None = None,
        loss_weight: float = 10.0,
        slope: float = 0.0,
        precision: str = "float64",
        reciprocal: bool = True,
    ) -> None:
        super().__init__(d)
        self.embedding = NumberEmbedding(d, combine, precision, reciprocal)
        self.head = BitHead(d, head_hidden, precision)
        self.loss_weight = check_positive(loss_weight, "loss_weight", strict=False)
        self.slope = check_in_interval(slope, "slope", -math.inf, math.inf)  # finite
        self.precision = precision

    def embed(self, emb: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.embedding(emb, values, mask)

    def number_loss(
        self, hidden: torch.Tensor, values: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.head(hidden)
        total = bit_loss(
            logits, values, mask, slope=self.slope, precision=self.precision, reduction="sum"
        )
        return self.loss_weight * total, mask.sum()

    def predict(self, hidden: torch.Tensor) -> torch.Tensor:
        return decode(self.head(hidden).detach(), self.precision).to(torch.float64)
