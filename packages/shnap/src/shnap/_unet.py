"""A small 3D UNet that predicts the clean volume x0 from a bridge state x_t, its mask and t.

Architecture (spec "The method", Bridge): channels 16-32-64 over three resolutions (two
stride-2 downsamplings, so spatial sizes must be multiples of 4), GroupNorm + SiLU residual
blocks, a sinusoidal embedding of t added to every block, and the edit mask as an input
channel. Input channels: ``[x_t, mask]``; output: x̂0 (one channel). The network is the
denoiser of the System-embedded Diffusion Bridge (SDB, NeurIPS 2025) in its 3-D form used by
S(H)NAP (arXiv 2602.02560).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["UNet3D", "sinusoidal_embedding"]


def sinusoidal_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Transformer-style sinusoidal features of t ∈ [0, 1] (scaled by 1000).

    ``e_k = sin(1000 t ω_k)`` for the first half and ``cos(1000 t ω_k)`` for the second,
    ``ω_k = 10000^(−k / (dim/2 − 1))``.
    """
    half = dim // 2
    freqs = torch.exp(
        -math.log(10000.0)
        * torch.arange(half, dtype=torch.float32, device=t.device)
        / max(half - 1, 1)
    )
    args = 1000.0 * t.float()[:, None] * freqs[None, :]
    return torch.cat([torch.sin(args), torch.cos(args)], dim=1)


def _groups(channels: int) -> int:
    return 8 if channels % 8 == 0 else 1


class _ResBlock(nn.Module):
    """GroupNorm-SiLU-Conv twice, time embedding added after the first conv, residual sum."""

    def __init__(self, c_in: int, c_out: int, t_dim: int) -> None:
        super().__init__()
        self.norm1 = nn.GroupNorm(_groups(c_in), c_in)
        self.conv1 = nn.Conv3d(c_in, c_out, 3, padding=1)
        self.temb = nn.Linear(t_dim, c_out)
        self.norm2 = nn.GroupNorm(_groups(c_out), c_out)
        self.conv2 = nn.Conv3d(c_out, c_out, 3, padding=1)
        self.skip = nn.Identity() if c_in == c_out else nn.Conv3d(c_in, c_out, 1)

    def forward(self, h: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
        out = self.conv1(F.silu(self.norm1(h)))
        out = out + self.temb(temb)[:, :, None, None, None]
        out = self.conv2(F.silu(self.norm2(out)))
        return out + self.skip(h)


class UNet3D(nn.Module):
    """x̂0 = UNet([x_t, mask], t) with channels ``widths`` (default 16-32-64).

    Args:
        widths: channels at the three resolutions.
        t_dim: size of the sinusoidal time embedding.
        cond: two more input channels, ``prior`` (the object to insert, 0 elsewhere) and
            ``prior_mask`` (where it is): the insertion conditioning of the bridge.

    Input ``x_t`` and ``mask`` are (B, 1, D, H, W) with D, H, W multiples of 4; ``t`` is (B,).
    With ``cond``, ``prior`` and ``prior_mask`` are (B, 1, D, H, W) too (zeros when omitted:
    a removal). The output is the predicted clean volume, (B, 1, D, H, W).
    """

    def __init__(
        self, widths: tuple[int, int, int] = (16, 32, 64), t_dim: int = 32, cond: bool = False
    ) -> None:
        super().__init__()
        c1, c2, c3 = widths
        self.widths = tuple(widths)
        self.t_dim = t_dim
        self.cond = bool(cond)
        self.t_mlp = nn.Sequential(
            nn.Linear(t_dim, 4 * t_dim), nn.SiLU(), nn.Linear(4 * t_dim, t_dim)
        )
        self.inc = nn.Conv3d(4 if self.cond else 2, c1, 3, padding=1)
        self.enc1 = _ResBlock(c1, c1, t_dim)
        self.down1 = nn.Conv3d(c1, c2, 3, stride=2, padding=1)
        self.enc2 = _ResBlock(c2, c2, t_dim)
        self.down2 = nn.Conv3d(c2, c3, 3, stride=2, padding=1)
        self.mid = _ResBlock(c3, c3, t_dim)
        self.up2 = nn.ConvTranspose3d(c3, c2, 2, stride=2)
        self.dec2 = _ResBlock(2 * c2, c2, t_dim)
        self.up1 = nn.ConvTranspose3d(c2, c1, 2, stride=2)
        self.dec1 = _ResBlock(2 * c1, c1, t_dim)
        self.out_norm = nn.GroupNorm(_groups(c1), c1)
        self.out = nn.Conv3d(c1, 1, 3, padding=1)

    def forward(
        self,
        x_t: torch.Tensor,
        mask: torch.Tensor,
        t: torch.Tensor,
        prior: torch.Tensor | None = None,
        prior_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        temb = self.t_mlp(sinusoidal_embedding(t, self.t_dim))
        chans = [x_t, mask]
        if self.cond:
            zero = torch.zeros_like(x_t)
            chans += [
                zero if prior is None else prior.to(x_t.dtype),
                zero if prior_mask is None else prior_mask.to(x_t.dtype),
            ]
        h0 = self.inc(torch.cat(chans, dim=1))
        h1 = self.enc1(h0, temb)
        h2 = self.enc2(self.down1(h1), temb)
        h3 = self.mid(self.down2(h2), temb)
        u2 = self.dec2(torch.cat([self.up2(h3), h2], dim=1), temb)
        u1 = self.dec1(torch.cat([self.up1(u2), h1], dim=1), temb)
        # predict a correction to the input, which already holds x0 outside the mask
        return x_t + self.out(F.silu(self.out_norm(u1)))
