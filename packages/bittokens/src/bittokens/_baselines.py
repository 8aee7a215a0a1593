"""The four baseline number schemes, with the interface of :class:`bittokens.BitTokens`.

* :class:`DigitTokens`: every character of the shortest decimal form (digits, ``.``, ``-``,
  ``e``) is a token.
* :class:`SubwordTokens`: digit runs are cut left to right into groups of at most 3 digits
  (a vocabulary of all 1110 strings of 1-3 digits), plus ``.``, ``-``, ``e``.
* :class:`XVal`: one ``<|num|>`` token whose learned vector is scaled by
  :math:`s(x) = \\mathrm{sign}(x) (\\log_{10} \\mathrm{clip}(|x|, 10^{-15}, 10^{15}) + 15) / 6
  \\in [-5, 5]`; an MLP head ``d -> 4d -> 1`` regresses ``s`` with MSE and decodes by inverting it.
  (Golkar et al., "xVal: A continuous numerical tokenization for scientific language models",
  2023; the signed-log scaling is BitTokens' choice for a wide range.)
* :class:`FoNE`: one ``<|num|>`` token plus :math:`\\mathrm{Linear}([\\cos, \\sin](2\\pi x /
  10^k))_{k}` over a range of places; the head gives one 2-vector per decimal place, scored
  against the 10 digit prototypes :math:`(\\cos 2\\pi j/10, \\sin 2\\pi j/10)` with per-digit
  cross-entropy and argmax decoding; we add the sign logit FoNE lacks.
  (Zhou et al., "FoNE: Precise single-token number embeddings via Fourier features", 2025.)

References:
    Kreitner, Hager et al., "Efficient numeracy in language models through single-token number
    embeddings" (BitTokens), ICML 2026, arXiv:2510.06824.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ._schemes import NumberScheme, format_number

__all__ = ["DigitTokens", "FoNE", "SubwordTokens", "XVal"]

_SYMBOLS = [".", "-", "e"]


class DigitTokens(NumberScheme):
    """Single-digit tokenisation: ``-12.5`` -> ``- 1 2 . 5``.

    Args:
        d: model width (unused: the scheme adds only vocabulary).
    """

    name = "single-digit"
    single_token = False

    @property
    def vocab(self) -> list[str]:
        return [str(i) for i in range(10)] + _SYMBOLS

    def tokens_for(self, x: float) -> list[str]:
        return list(format_number(x))


def _group_digits(text: str, size: int = 3) -> list[str]:
    out: list[str] = []
    run = ""
    for ch in text:
        if ch.isdigit():
            run += ch
            continue
        out += [run[i : i + size] for i in range(0, len(run), size)]
        run = ""
        out.append(ch)
    out += [run[i : i + size] for i in range(0, len(run), size)]
    return out


class SubwordTokens(NumberScheme):
    """Digit runs split left to right into groups of <= 3: ``12345.5`` -> ``123 45 . 5``.

    Args:
        d: model width (unused: the scheme adds only vocabulary).
    """

    name = "subword"
    single_token = False

    @property
    def vocab(self) -> list[str]:
        groups = [str(i) for i in range(10)]
        groups += [f"{i:02d}" for i in range(100)] + [f"{i:03d}" for i in range(1000)]
        return groups + _SYMBOLS

    def tokens_for(self, x: float) -> list[str]:
        return _group_digits(format_number(x))


class _MLP(nn.Sequential):
    def __init__(self, d_in: int, hidden: int, d_out: int) -> None:
        super().__init__(nn.Linear(d_in, hidden), nn.GELU(), nn.Linear(hidden, d_out))


class XVal(NumberScheme):
    """xVal: the ``<|num|>`` vector scaled by a signed-log value, regressed by an MLP head.

    Args:
        d: model width.
        head_hidden: MLP hidden width (default ``4 d``).
        loss_weight: weight of the MSE number loss (default 10, like BitTokens' ``lambda``).
        clamp: ``|x|`` is clamped to ``[1/clamp, clamp]`` (default ``1e15``).
    """

    name = "xval"

    def __init__(
        self, d: int, head_hidden: int | None = None, loss_weight: float = 10.0, clamp: float = 1e15
    ) -> None:
        super().__init__(d)
        self.head = _MLP(d, head_hidden or 4 * d, 1)
        self.loss_weight = float(loss_weight)
        self.log_clamp = math.log10(clamp)

    def scale(self, x: torch.Tensor) -> torch.Tensor:
        """``s(x) = sign(x) (log10 clip(|x|) + L) / (2L/10)`` in [-5, 5], ``L = log10(clamp)``."""
        a = x.abs().clamp(10.0**-self.log_clamp, 10.0**self.log_clamp)
        return torch.sign(x) * (torch.log10(a) + self.log_clamp) * (5.0 / (2 * self.log_clamp))

    def unscale(self, s: torch.Tensor) -> torch.Tensor:
        """Inverse of :meth:`scale` on ``[-5, 5]`` (``s`` is clipped there first)."""
        s = s.clamp(-5.0, 5.0)
        mag = 10.0 ** (s.abs() * (2 * self.log_clamp / 5.0) - self.log_clamp)
        return torch.sign(s) * mag

    def embed(self, emb: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        s = self.scale(values.to(torch.float64)).to(emb.dtype)
        factor = torch.where(mask, s, torch.ones_like(s))
        return emb * factor.unsqueeze(-1)

    def number_loss(
        self, hidden: torch.Tensor, values: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        pred = self.head(hidden[mask]).squeeze(-1)
        target = self.scale(values[mask].to(torch.float64)).to(pred.dtype)
        return self.loss_weight * F.mse_loss(pred, target, reduction="sum"), mask.sum()

    def predict(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.unscale(self.head(hidden).squeeze(-1).detach().to(torch.float64))


class FoNE(NumberScheme):
    """Fourier number embedding with a per-digit classification head (plus a sign logit).

    Args:
        d: model width.
        places: ``(k_min, k_max)``: decimal places ``10^k`` encoded and decoded (default
            ``(-12, 8)``, enough for the quick tasks' products).
        head_hidden: ``None`` for a linear head, else an MLP hidden width.
        loss_weight: weight of the per-digit cross-entropy (mean over digits; default 10).
    """

    name = "fone"

    def __init__(
        self,
        d: int,
        places: tuple[int, int] = (-12, 8),
        head_hidden: int | None = None,
        loss_weight: float = 10.0,
    ) -> None:
        super().__init__(d)
        k_min, k_max = places
        if k_min > k_max:
            raise ValueError(f"places must be (k_min, k_max) with k_min <= k_max, got {places}")
        self.places = (int(k_min), int(k_max))
        self.n_places = k_max - k_min + 1
        self.loss_weight = float(loss_weight)
        periods = torch.tensor([10.0**k for k in range(k_max, k_min - 1, -1)], dtype=torch.float64)
        self.register_buffer("periods", periods, persistent=False)
        self.proj = nn.Linear(2 * self.n_places, d)
        out = 2 * self.n_places + 1
        self.head = nn.Linear(d, out) if head_hidden is None else _MLP(d, head_hidden, out)
        j = torch.arange(10, dtype=torch.float64) * (2 * math.pi / 10)
        self.register_buffer("prototypes", torch.stack([j.cos(), j.sin()], -1), persistent=False)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """``[cos, sin](2 pi x / 10^k)`` for ``k = k_max .. k_min``, shape ``(..., 2 K)``."""
        ang = (
            2
            * math.pi
            * torch.remainder(x.to(torch.float64).unsqueeze(-1), self.periods)
            / self.periods
        )
        return torch.cat([ang.cos(), ang.sin()], -1)

    def embed(self, emb: torch.Tensor, values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        if not bool(mask.any()):
            return emb
        add = self.proj(self.features(values[mask]).to(emb.dtype))
        out = emb.clone()
        out[mask] = emb[mask] + add
        return out

    def digits(self, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Decimal digits ``(N, K)`` of ``|x|`` at places ``k_max .. k_min`` (exact, via
        ``Decimal``; digits beyond the places are rounded half-even) and signs ``(N,)``."""
        k_min = self.places[0]
        vals = values.detach().cpu().to(torch.float64).numpy()
        scale = Decimal(10) ** k_min
        rows = np.zeros((vals.size, self.n_places), dtype=np.int64)
        for i, v in enumerate(vals.tolist()):
            if not math.isfinite(v):
                continue
            n = int((Decimal(repr(abs(v))) / scale).to_integral_value())
            n = min(n, 10**self.n_places - 1)
            text = str(n).zfill(self.n_places)
            rows[i] = np.frombuffer(text.encode(), dtype=np.uint8) - 48
        sign = torch.as_tensor(vals < 0)
        return torch.as_tensor(rows, device=values.device), sign.to(values.device)

    def _logits(self, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.head(hidden)
        vec = out[..., :-1].reshape(*out.shape[:-1], self.n_places, 2)
        digit_logits = vec @ self.prototypes.to(vec.dtype).T
        return digit_logits, out[..., -1]

    def number_loss(
        self, hidden: torch.Tensor, values: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        digit_logits, sign_logit = self._logits(hidden[mask])
        digits, sign = self.digits(values[mask])
        ce = F.cross_entropy(digit_logits.reshape(-1, 10), digits.reshape(-1), reduction="none")
        per_number = ce.reshape(-1, self.n_places).mean(-1)
        per_number = per_number + F.binary_cross_entropy_with_logits(
            sign_logit, sign.to(sign_logit.dtype), reduction="none"
        )
        return self.loss_weight * per_number.sum(), mask.sum()

    def predict(self, hidden: torch.Tensor) -> torch.Tensor:
        digit_logits, sign_logit = self._logits(hidden.detach())
        digits = digit_logits.argmax(-1).cpu().numpy()
        k_min = self.places[0]
        flat = digits.reshape(-1, self.n_places)
        vals = [float(Decimal("".join(map(str, row))).scaleb(k_min)) for row in flat]
        mag = torch.tensor(vals, dtype=torch.float64).reshape(digits.shape[:-1])
        sign = torch.where(sign_logit.detach().cpu() > 0, -1.0, 1.0).to(torch.float64)
        return (sign * mag).to(hidden.device)
