"""A small GPT trunk that takes any number scheme, with tokenisation and greedy generation.

``TinyGPT(scheme)`` is a pre-LayerNorm causal transformer (learned positions, GELU MLP, tied
input/output embeddings) over the task words plus the scheme's tokens. The scheme rewrites the
input embeddings at number tokens and supplies the number loss and decoder, so BitTokens and the
baselines share every other weight shape and line of code.

The training objective (summed here, normalised by the trainer with global counts) is

.. math::

    \\mathcal L = \\frac{1}{N_{tok}} \\sum_{t \\in \\text{answer}} \\mathrm{CE}(z_t, y_{t+1})
    + \\frac{1}{N_{num}} \\sum_{t : y_{t+1} = \\langle num \\rangle} \\ell_{num}(h_t, x_{t+1}).

References:
    Kreitner, Hager et al., "Efficient numeracy in language models through single-token number
    embeddings" (BitTokens), ICML 2026, arXiv:2510.06824.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from icml26_shared.checks import check_positive_int

from ._schemes import NUM_TOKEN, NumberScheme
from ._tasks import WORDS, Item, Task

__all__ = ["Batch", "TinyGPT"]


@dataclass
class Batch:
    """Token tensors of a batch, all ``(B, T)``.

    Attributes:
        ids: token ids.
        values: float64 number values (0 off numbers).
        num_mask: true at ``<|num|>`` tokens.
        attn: true at real (non-padding) tokens.
        target: true where the token is a training target (the answer and ``<eos>``).
    """

    ids: torch.Tensor
    values: torch.Tensor
    num_mask: torch.Tensor
    attn: torch.Tensor
    target: torch.Tensor

    def __getitem__(self, idx: torch.Tensor | slice) -> Batch:
        return Batch(
            self.ids[idx], self.values[idx], self.num_mask[idx], self.attn[idx], self.target[idx]
        )

    def __len__(self) -> int:
        return int(self.ids.shape[0])


class _Block(nn.Module):
    def __init__(self, d: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        shape = (b, t, self.n_heads, d // self.n_heads)
        q, k, v = (z.reshape(shape).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    """A small causal transformer whose numbers go through ``scheme``.

    Args:
        scheme: a :class:`bittokens.NumberScheme` (BitTokens or a baseline) of width ``d``.
        words: the task vocabulary (default :data:`bittokens.data.WORDS`).
        n_layers: transformer blocks (2).
        n_heads: attention heads (4).
        max_len: longest sequence (positions).

    The width ``d`` is the scheme's. ``forward`` handles a padded batch; padding may be on
    either side because positions are counted from the attention mask.
    """

    def __init__(
        self,
        scheme: NumberScheme,
        words: list[str] | None = None,
        n_layers: int = 2,
        n_heads: int = 4,
        max_len: int = 160,
    ) -> None:
        super().__init__()
        if not isinstance(scheme, NumberScheme):
            raise TypeError(f"scheme must be a NumberScheme, got {type(scheme).__name__}")
        d = scheme.d
        check_positive_int(n_layers, "n_layers")
        check_positive_int(n_heads, "n_heads")
        if d % n_heads:
            raise ValueError(f"n_heads must divide d = {d}, got {n_heads}")
        self.scheme = scheme
        self.words = list(words or WORDS) + [w for w in scheme.vocab if w not in (words or WORDS)]
        self.index = {w: i for i, w in enumerate(self.words)}
        self.num_id = self.index.get(NUM_TOKEN, -1)
        self.number_chars = set() if scheme.single_token else set(scheme.vocab)
        self.max_len = max_len
        self.tok = nn.Embedding(len(self.words), d)
        self.pos = nn.Embedding(max_len, d)
        self.blocks = nn.ModuleList(_Block(d, n_heads) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d)
        nn.init.normal_(self.tok.weight, std=0.02)
        nn.init.normal_(self.pos.weight, std=0.02)

    # -- parameters ------------------------------------------------------------------------------
    def num_parameters(self, embeddings: bool = True) -> int:
        """Parameter count, with or without the token-embedding table (tied with the output)."""
        total = sum(p.numel() for p in self.parameters())
        return total if embeddings else total - self.tok.weight.numel()

    # -- tokenisation ----------------------------------------------------------------------------
    def _items_to_tokens(self, items: list[Item]) -> tuple[list[int], list[float]]:
        ids: list[int] = []
        vals: list[float] = []
        for it in items:
            if isinstance(it, str):
                if it not in self.index:
                    raise ValueError(
                        f"word {it!r} is not in the vocabulary of this model "
                        f"({len(self.index)} tokens; numbers must be passed as floats)"
                    )
                ids.append(self.index[it])
                vals.append(0.0)
            else:
                toks = self.scheme.tokens_for(float(it))
                ids += [self.index[t] for t in toks]
                vals += [float(it) if t == NUM_TOKEN else 0.0 for t in toks]
        return ids, vals

    def tokenize(self, task: Task, *, length: int | None = None) -> Batch:
        """Training tensors ``<bos> prompt answer <eos>``, right-padded to ``length``."""
        rows = []
        for prompt, answer in zip(task.prompts, task.answers):
            p_ids, p_vals = self._items_to_tokens(["<bos>", *prompt])
            a_ids, a_vals = self._items_to_tokens([*answer, "<eos>"])
            rows.append((p_ids + a_ids, p_vals + a_vals, len(p_ids)))
        t = length or max(len(r[0]) for r in rows)
        if t > self.max_len or any(len(r[0]) > t for r in rows):
            raise ValueError(
                f"sequences must fit max_len = {self.max_len}, got {max(len(r[0]) for r in rows)}"
            )
        n = len(rows)
        ids = torch.zeros(n, t, dtype=torch.long)
        vals = torch.zeros(n, t, dtype=torch.float64)
        attn = torch.zeros(n, t, dtype=torch.bool)
        target = torch.zeros(n, t, dtype=torch.bool)
        for i, (r_ids, r_vals, n_prompt) in enumerate(rows):
            ids[i, : len(r_ids)] = torch.tensor(r_ids)
            vals[i, : len(r_ids)] = torch.tensor(r_vals, dtype=torch.float64)
            attn[i, : len(r_ids)] = True
            target[i, n_prompt : len(r_ids)] = True
        return Batch(ids, vals, ids == self.num_id, attn, target)

    def tokens_per_number(self, numbers: list[float]) -> float:
        """Mean count of tokens the scheme writes per number."""
        return sum(len(self.scheme.tokens_for(float(x))) for x in numbers) / max(len(numbers), 1)

    # -- model -----------------------------------------------------------------------------------
    def forward(
        self,
        ids: torch.Tensor,
        values: torch.Tensor,
        num_mask: torch.Tensor,
        attn: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return ``(hidden (B, T, d), logits (B, T, V))``."""
        t = ids.shape[1]
        if attn is None:
            attn = torch.ones_like(ids, dtype=torch.bool)
        pos = (attn.long().cumsum(-1) - 1).clamp(min=0)
        x = self.scheme.embed(self.tok(ids), values, num_mask) + self.pos(pos)
        causal = torch.ones(t, t, dtype=torch.bool, device=ids.device).tril()
        eye = torch.eye(t, dtype=torch.bool, device=ids.device)
        mask = (causal & attn[:, None, :]) | eye
        mask = mask[:, None]
        for block in self.blocks:
            x = block(x, mask)
        h = self.ln_f(x)
        return h, h @ self.tok.weight.T

    def loss_terms(self, batch: Batch, forward: nn.Module | None = None) -> dict[str, torch.Tensor]:
        """Summed losses and their counts: ``ce_sum, ce_count, num_sum, num_count``.

        ``forward`` replaces ``self`` for the trunk call (e.g. a DDP wrapper of this model).
        """
        h, logits = (forward or self)(batch.ids, batch.values, batch.num_mask, batch.attn)
        tgt = batch.target[:, 1:]
        ce = F.cross_entropy(logits[:, :-1][tgt], batch.ids[:, 1:][tgt], reduction="sum")
        num_rows = tgt & batch.num_mask[:, 1:]
        num_sum, num_count = self.scheme.number_loss(
            h[:, :-1][num_rows],
            batch.values[:, 1:][num_rows],
            torch.ones(int(num_rows.sum()), dtype=torch.bool),
        )
        return {"ce_sum": ce, "ce_count": tgt.sum(), "num_sum": num_sum, "num_count": num_count}

    # -- generation ------------------------------------------------------------------------------
    @torch.no_grad()
    def generate(
        self, prompts: list[list[Item]], max_new: int = 40, batch_size: int = 256
    ) -> list[list[Item]]:
        """Greedy answers to ``prompts`` (a sampled ``<|num|>`` takes its decoded value).

        Returns:
            Per prompt, the answer as words and numbers (multi-token numbers parsed back).
        """
        out: list[list[Item]] = []
        for start in range(0, len(prompts), batch_size):
            out += self._generate(prompts[start : start + batch_size], max_new)
        return out

    def _generate(self, prompts: list[list[Item]], max_new: int) -> list[list[Item]]:
        was_training = self.training
        self.eval()
        dev = self.tok.weight.device
        rows = [self._items_to_tokens(["<bos>", *p]) for p in prompts]
        t = max(len(r[0]) for r in rows)
        if t >= self.max_len:
            raise ValueError(
                f"prompts must leave room within max_len = {self.max_len}: the longest prompt has "
                f"{t} tokens (with <bos>)"
            )
        n = len(rows)
        ids = torch.zeros(n, t, dtype=torch.long, device=dev)
        vals = torch.zeros(n, t, dtype=torch.float64, device=dev)
        attn = torch.zeros(n, t, dtype=torch.bool, device=dev)
        for i, (r_ids, r_vals) in enumerate(rows):
            ids[i, t - len(r_ids) :] = torch.tensor(r_ids)
            vals[i, t - len(r_vals) :] = torch.tensor(r_vals, dtype=torch.float64)
            attn[i, t - len(r_ids) :] = True
        eos = self.index["<eos>"]
        done = torch.zeros(n, dtype=torch.bool, device=dev)
        new_ids, new_vals = [], []
        for _ in range(max_new):
            if ids.shape[1] >= self.max_len:
                break
            h, logits = self(ids, vals, ids == self.num_id, attn)
            nxt = logits[:, -1].argmax(-1)
            v = torch.zeros(n, dtype=torch.float64, device=dev)
            is_num = nxt == self.num_id
            if self.scheme.single_token and bool(is_num.any()):
                v[is_num] = self.scheme.predict(h[is_num, -1]).to(dev)
            nxt = torch.where(done, torch.full_like(nxt, eos), nxt)
            new_ids.append(nxt)
            new_vals.append(v)
            ids = torch.cat([ids, nxt[:, None]], 1)
            vals = torch.cat([vals, v[:, None]], 1)
            attn = torch.cat([attn, (~done)[:, None]], 1)
            done |= nxt == eos
            if bool(done.all()):
                break
        self.train(was_training)
        if not new_ids:
            return [[] for _ in range(n)]
        gen_ids = torch.stack(new_ids, 1).tolist()
        gen_vals = torch.stack(new_vals, 1).tolist()
        return [self._tokens_to_items(r_i, r_v) for r_i, r_v in zip(gen_ids, gen_vals)]

    def _tokens_to_items(self, ids: list[int], vals: list[float]) -> list[Item]:
        items: list[Item] = []
        run: list[str] = []
        for i, v in zip(ids, vals):
            word = self.words[i]
            if word in self.number_chars:
                run.append(word)
                continue
            if run:
                items.append(self.scheme.parse(run))
                run = []
            if word == "<eos>":
                return items
            items.append(float(v) if i == self.num_id else word)
        if run:
            items.append(self.scheme.parse(run))
        return items
