"""A small GPT decoder for the memorisation tasks (pre-LN, learned positions, tied embeddings).

Each block is ``x + Attn(LN(x))`` then ``x + MLP(LN(x))`` with causal multi-head attention and a
GELU MLP of width ``4 d``; dropout is 0. The output logits are ``LN(h) E^T`` with the input token
table ``E`` (tied) or a separate head (``tied=False``). Controls, as in Noroozizadeh et al.
(arXiv:2510.26745): ``freeze_embeddings=True`` keeps a random table with unit-norm rows fixed,
so a graph can only be stored in the blocks' weights (associative lookup); ``attention=False`` replaces attention by a causal running
mean over previous positions (content still flows, no learned routing).
"""

from __future__ import annotations

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn
from torch.nn import functional as F

from icml26_shared.checks import SeedLike, check_choice, check_positive_int, int_from_seed

from ._tasks import SPECIALS

__all__ = ["GPT", "POSITIONS"]


POSITIONS = ("learned", "rotary")


def _rotary(x: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding (Su et al. 2021) of ``(B, H, T, Dh)`` queries or keys."""
    t, dh = x.shape[-2], x.shape[-1]
    half = dh // 2
    freq = 10_000.0 ** (-torch.arange(half, dtype=x.dtype, device=x.device) / half)
    ang = torch.arange(t, dtype=x.dtype, device=x.device)[:, None] * freq[None]
    cos, sin = ang.cos(), ang.sin()
    a, b = x[..., :half], x[..., half : 2 * half]
    return torch.cat([a * cos - b * sin, a * sin + b * cos, x[..., 2 * half :]], dim=-1)


class _Block(nn.Module):
    def __init__(self, d: int, heads: int, attention: bool, rotary: bool = False) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.heads = heads
        self.attention = attention
        self.rotary = rotary

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.ln1(x)
        if self.attention:
            q, k, v = self.qkv(h).split(d, dim=2)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            if self.rotary:
                q, k = _rotary(q), _rotary(k)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            y = y.transpose(1, 2).reshape(b, t, d)
        else:
            v = self.qkv(h)[..., 2 * d :]
            y = v.cumsum(1) / torch.arange(1, t + 1, device=x.device, dtype=x.dtype)[None, :, None]
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """Causal transformer over ``n_nodes`` node tokens plus the task's special tokens.

    Args:
        n_nodes: number of node tokens (graph nodes, or the label pool for in-context tasks).
        dim: width ``d`` (default 128, the CPU default of the spec).
        n_layers: blocks (default 2).
        n_heads: attention heads (default 4; must divide ``dim``).
        max_len: longest sequence.
        tied: tie output head to the input table.
        freeze_embeddings: keep the random token table fixed (the associative control).
        attention: ``False`` replaces attention by a causal running mean.
        positions: ``"learned"`` (the spec's model: a learned table added to the input) or
            ``"rotary"`` (rotary queries and keys, no position table; relative offsets).
        seed: initialisation seed.

    >>> m = GPT(10, dim=16, n_heads=2)
    >>> m.embeddings().shape
    (10, 16)
    """

    def __init__(
        self,
        n_nodes: int,
        dim: int = 128,
        n_layers: int = 2,
        n_heads: int = 4,
        max_len: int = 32,
        *,
        tied: bool = True,
        freeze_embeddings: bool = False,
        attention: bool = True,
        positions: str = "learned",
        seed: SeedLike = 0,
    ) -> None:
        super().__init__()
        seed = int_from_seed(seed, "seed", bits=63)
        self.n_nodes = check_positive_int(n_nodes, "n_nodes", minimum=2)
        dim = check_positive_int(dim, "dim")
        n_layers = check_positive_int(n_layers, "n_layers")
        n_heads = check_positive_int(n_heads, "n_heads")
        if dim % n_heads:
            raise ValueError(f"n_heads must divide dim={dim}, got {n_heads}")
        self.max_len = check_positive_int(max_len, "max_len")
        check_choice(positions, "positions", POSITIONS)
        self.dim = dim
        self.tied = bool(tied)
        self.freeze_embeddings = bool(freeze_embeddings)
        self.config = {
            "n_nodes": self.n_nodes,
            "dim": dim,
            "n_layers": n_layers,
            "n_heads": n_heads,
            "max_len": self.max_len,
            "tied": self.tied,
            "freeze_embeddings": self.freeze_embeddings,
            "attention": bool(attention),
            "positions": positions,
            "seed": int(seed),
        }
        gen = torch.Generator().manual_seed(int(seed))
        self.vocab_size = self.n_nodes + len(SPECIALS)
        self.tok = nn.Embedding(self.vocab_size, dim)
        rot = positions == "rotary"
        self.pos = None if rot else nn.Embedding(self.max_len, dim)
        self.blocks = nn.ModuleList([_Block(dim, n_heads, attention, rot) for _ in range(n_layers)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = None if self.tied else nn.Linear(dim, self.vocab_size, bias=False)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() >= 2:
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.02)
                elif "ln" not in name:
                    p.zero_()
            if self.freeze_embeddings:
                self.tok.weight.copy_(torch.randn(self.tok.weight.shape, generator=gen))
                self.tok.weight.div_(self.tok.weight.norm(dim=1, keepdim=True))
        self.tok.weight.requires_grad_(not self.freeze_embeddings)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """Logits ``(B, T, V)`` for token ids ``(B, T)``."""
        t = ids.shape[1]
        if t > self.max_len:
            raise ValueError(f"ids must have at most max_len={self.max_len} positions, got {t}")
        x = self.tok(ids)
        if self.pos is not None:
            x = x + self.pos.weight[:t][None]
        for blk in self.blocks:
            x = blk(x)
        h = self.ln_f(x)
        w = self.tok.weight if self.head is None else self.head.weight
        return h @ w.T

    @torch.no_grad()
    def generate(self, prompts: torch.Tensor, n_new: int) -> torch.Tensor:
        """Greedy continuation of equal-length ``prompts`` ``(B, P)`` by ``n_new`` tokens."""
        was = self.training
        self.eval()
        ids = prompts
        for _ in range(int(n_new)):
            nxt = self(ids)[:, -1].argmax(-1, keepdim=True)
            ids = torch.cat([ids, nxt], dim=1)
        self.train(was)
        return ids[:, prompts.shape[1] :]

    @torch.no_grad()
    def edge_scores(self) -> NDArray[np.float64]:
        """``S[u, v] = log p(v | [EDGE] u =)`` over node tokens ``v``: how the model scores
        node pairs (used by the edge-recovery probe)."""
        n = self.n_nodes
        ids = torch.tensor([[n + 0, u, n + 2] for u in range(n)])
        logp = self(ids)[:, -1].log_softmax(-1)[:, :n]
        return logp.double().numpy()

    def embeddings(self) -> NDArray[np.float64]:
        """The input embedding rows of the node tokens, ``(n_nodes, dim)`` float64."""
        return self.tok.weight.detach()[: self.n_nodes].double().numpy().copy()
