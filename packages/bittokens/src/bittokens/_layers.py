"""BitTokens layers: the number embedding, the bit head and the weighted bit loss.

Input side. Every number becomes one ``<|num|>`` token whose value ``x`` is kept in a float64
side tensor. Its 128 signs :math:`e = 2b - 1` (64 bits of ``x`` then 64 of ``1/x``) enter the model
in one of two ways (width :math:`d \\ge 128`):

* ``zero_pad`` (released configs): :math:`v = [e \\sqrt{d/128}, 0, \\dots, 0]`, replacing the
  learned vector (RMS over ``d`` is exactly 1);
* ``sum`` (paper text): :math:`v = E[\\mathrm{num}] + [e, 0, \\dots, 0]`.

Output side. A head maps the last hidden state at the position whose next token is ``<|num|>``
to 64 logits (bits of ``x`` only). The loss is

.. math::

    \\lambda \\, \\frac{1}{64} \\sum_{k=0}^{63} w_k \\, \\mathrm{BCE}(\\ell_k, b_k), \\qquad
    w_k \\propto 1 + 64 |s| \\, \\tfrac{k}{63} \\;(\\text{reversed for } s < 0), \\quad
    \\tfrac{1}{64}\\textstyle\\sum_k w_k = 1,

added to the vocabulary cross-entropy (``lambda = 10``). Decoding thresholds logits at 0.

References:
    Kreitner, Hager et al., "Efficient numeracy in language models through single-token number
    embeddings" (BitTokens), ICML 2026, arXiv:2510.06824.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from icml26_shared.checks import check_choice, check_in_interval, check_positive_int

from ._codec import PRECISIONS, encode, encode_pm1

__all__ = ["BitHead", "NumberEmbedding", "bit_loss", "bit_weights"]

COMBINES = ("zero_pad", "sum")


def _check_like(name: str, t: torch.Tensor, shape: torch.Size) -> None:
    if tuple(t.shape) != tuple(shape):
        raise ValueError(
            f"{name} must have shape {tuple(shape)} like input_ids, got {tuple(t.shape)}"
        )


class NumberEmbedding(nn.Module):
    """Write each number's IEEE-754 signs into its ``<|num|>`` input vector.

    Args:
        d: model width, at least the bit count (128 for float64 with reciprocal).
        combine: ``"zero_pad"`` (default, replaces the vector) or ``"sum"`` (adds to it).
        precision: ``"float64"`` (default), ``"float32"`` or ``"bfloat16"``.
        reciprocal: append the bits of ``1/x`` (default ``True``).

    The module has no parameters; it is a pure function of ``(token_embeddings, values, mask)``.
    """

    def __init__(
        self,
        d: int,
        combine: str = "zero_pad",
        precision: str = "float64",
        reciprocal: bool = True,
    ) -> None:
        super().__init__()
        self.combine = check_choice(combine, "combine", COMBINES)
        self.precision = check_choice(precision, "precision", PRECISIONS)
        self.reciprocal = bool(reciprocal)
        self.n_bits = PRECISIONS[precision][0] * (2 if reciprocal else 1)
        if isinstance(d, bool) or not isinstance(d, int) or d < self.n_bits:
            raise ValueError(f"d must be an integer >= {self.n_bits} (the bit count), got {d!r}")
        self.d = d

    def signs(self, values: torch.Tensor) -> torch.Tensor:
        """The ``(..., n_bits)`` sign vector ``2b - 1`` of ``values`` (float64 side tensor)."""
        return encode_pm1(values.to(torch.float64), self.precision, self.reciprocal)

    def forward(
        self, embeddings: torch.Tensor, values: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """Return ``embeddings`` with the number positions (``mask``) rewritten.

        Args:
            embeddings: ``(B, T, d)`` token embeddings (the learned ``<|num|>`` vector at numbers).
            values: ``(B, T)`` float64 values (ignored where ``mask`` is false).
            mask: ``(B, T)`` bool, true at ``<|num|>`` positions.

        Returns:
            ``(B, T, d)`` tensor of ``embeddings``' dtype; positions outside ``mask`` are the
            very same values.
        """
        if embeddings.shape[-1] != self.d:
            raise ValueError(
                f"embeddings must have last dimension {self.d}, got {embeddings.shape[-1]}"
            )
        _check_like("values", values, embeddings.shape[:-1])
        _check_like("mask", mask, embeddings.shape[:-1])
        mask = mask.to(torch.bool)
        if not bool(mask.any()):
            return embeddings
        e = self.signs(values[mask])
        pad = embeddings.new_zeros(e.shape[0], self.d)
        if self.combine == "zero_pad":
            pad[:, : self.n_bits] = (e.to(torch.float64) * math.sqrt(self.d / self.n_bits)).to(
                pad.dtype
            )
            new = pad
        else:
            pad[:, : self.n_bits] = e.to(pad.dtype)
            new = embeddings[mask] + pad
        out = embeddings.clone()
        out[mask] = new
        return out

    def extra_repr(self) -> str:
        return f"d={self.d}, combine={self.combine!r}, precision={self.precision!r}, n_bits={self.n_bits}"


class BitHead(nn.Module):
    """Map hidden states to the bit logits of the next number.

    Args:
        d: hidden width.
        hidden: ``None`` for ``Linear(d, w)``, else an MLP ``d -> hidden -> w`` with ReLU (the
            paper's option uses ``hidden = d // 2``).
        precision: the precision whose ``w`` bits are predicted (64 for float64).
    """

    def __init__(self, d: int, hidden: int | None = None, precision: str = "float64") -> None:
        super().__init__()
        self.precision = check_choice(precision, "precision", PRECISIONS)
        width = PRECISIONS[precision][0]
        d = check_positive_int(d, "d")
        if hidden is not None:
            hidden = check_positive_int(hidden, "hidden")
        if hidden is None:
            self.net: nn.Module = nn.Linear(d, width)
        else:
            self.net = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, width))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        """``(..., d) -> (..., w)`` bit logits."""
        return self.net(hidden)


def bit_weights(
    n: int = 64, slope: float = 0.0, device: torch.device | None = None
) -> torch.Tensor:
    """Per-bit loss weights, linear in the bit index from 1 to ``1 + 64|slope|``, mean 1.

    ``slope > 0`` puts the larger weights on the low (late) bits, ``slope < 0`` on the high bits.
    """
    n = check_positive_int(n, "n")
    slope = check_in_interval(slope, "slope", -math.inf, math.inf)  # finite
    k = torch.arange(n, dtype=torch.float64, device=device) / max(n - 1, 1)
    if slope < 0:
        k = k.flip(0)
    w = 1.0 + 64.0 * abs(slope) * k
    return w / w.mean()


def bit_loss(
    logits: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor | None = None,
    *,
    slope: float = 0.0,
    precision: str = "float64",
    reduction: str = "mean",
) -> torch.Tensor:
    """Weighted binary cross-entropy between bit logits and the bits of the target values.

    Args:
        logits: ``(..., w)`` bit logits.
        values: ``(...)`` target values (float64).
        mask: ``(...)`` bool, the positions that carry a number (``None``: all). Unmasked
            positions are not read, so they add exactly zero gradient.
        slope: bit-weight slope ``s`` (see :func:`bit_weights`); 0 gives uniform weights.
        precision: the precision of the target bits.
        reduction: ``"mean"`` over numbers (0 when there are none) or ``"sum"``.

    Returns:
        Scalar tensor: per number ``mean_k w_k BCEWithLogits(logit_k, b_k)``, reduced.
    """
    check_choice(reduction, "reduction", ("mean", "sum"))
    width = PRECISIONS[check_choice(precision, "precision", PRECISIONS)][0]
    if logits.shape[-1] != width:
        raise ValueError(f"logits must have last dimension {width}, got {logits.shape[-1]}")
    _check_like("values", values, logits.shape[:-1])
    if mask is None:
        sel_logits, sel_values = logits.reshape(-1, width), values.reshape(-1)
    else:
        _check_like("mask", mask, logits.shape[:-1])
        mask = mask.to(torch.bool)
        sel_logits, sel_values = logits[mask], values[mask]
    if sel_values.numel() == 0:
        return logits.sum() * 0.0
    target = encode(sel_values.to(torch.float64), precision, reciprocal=False).to(sel_logits.dtype)
    w = bit_weights(width, slope, sel_logits.device).to(sel_logits.dtype)
    per_bit = F.binary_cross_entropy_with_logits(sel_logits, target, reduction="none")
    per_number = (per_bit * w).mean(-1)
    return per_number.mean() if reduction == "mean" else per_number.sum()
