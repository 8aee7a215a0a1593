"""The adapter ``f_φ: R^d → R^d`` placed between encoder and head, for ``K`` candidates at once.

* ``kind="linear"``: ``f(z) = A z + c`` with ``A = I``, ``c = 0`` at initialisation.
* ``kind="mlp"``, ``residual=True``: ``f(z) = z + g(z)``, ``g`` an MLP (ReLU) whose last layer is
  zero-initialised, so ``f`` is exactly the identity at step 0 (ours, beyond the paper).
* ``kind="mlp"``, ``residual=False``: the paper's plain MLP ``f = g`` (for ablation).

Parameters carry a leading candidate axis ``K``: ``K`` independent adapters (one per β on the
selection grid) are trained in one batched pass; their losses are summed, and since their
parameters are disjoint and Adam is element-wise, each follows exactly its own trajectory.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import torch
from torch import nn

from icml26_shared.checks import check_choice, check_positive_int

__all__ = ["Adapter"]


class Adapter(nn.Module):
    """``K`` adapters ``R^d → R^d``; ``forward`` maps ``(n, d)`` (or ``(K, n, d)``) inputs.

    Args:
        dim: representation dimension ``d``.
        kind: ``"linear"`` or ``"mlp"``.
        hidden: hidden widths of the MLP.
        residual: write the MLP as ``z + g(z)`` with ``g`` zero at initialisation.
        n_candidates: ``K``; a ``(n, d)`` input is broadcast to every candidate, and with
            ``K = 1`` the output is ``(n, d)``.
        generator: seeds the hidden-layer initialisation (shared by all candidates).
    """

    def __init__(
        self,
        dim: int,
        kind: str = "mlp",
        hidden: Sequence[int] = (64,),
        residual: bool = True,
        n_candidates: int = 1,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        self.dim = check_positive_int(dim, "dim")
        self.kind = check_choice(kind, "adapter", ("linear", "mlp"))
        self.hidden = tuple(check_positive_int(h, "hidden width") for h in hidden)
        self.residual = bool(residual)
        k = check_positive_int(n_candidates, "n_candidates")
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        if self.kind == "linear":
            self.weights.append(nn.Parameter(torch.eye(dim).repeat(k, 1, 1)))
            self.biases.append(nn.Parameter(torch.zeros(k, dim)))
            return
        if not self.hidden:
            raise ValueError("hidden must list at least one width for adapter='mlp', got ()")
        widths = [dim, *self.hidden, dim]
        for i, (n_in, n_out) in enumerate(itertools.pairwise(widths)):
            last = i == len(widths) - 2
            if last and self.residual:
                w, b = torch.zeros(n_in, n_out), torch.zeros(n_out)
            else:  # nn.Linear's default: U(-1/sqrt(n_in), 1/sqrt(n_in))
                bound = 1.0 / math.sqrt(n_in)
                w = (torch.rand(n_in, n_out, generator=generator) * 2 - 1) * bound
                b = (torch.rand(n_out, generator=generator) * 2 - 1) * bound
            self.weights.append(nn.Parameter(w.repeat(k, 1, 1)))
            self.biases.append(nn.Parameter(b.repeat(k, 1)))

    @property
    def n_candidates(self) -> int:
        return int(self.weights[0].shape[0])

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        k = self.n_candidates
        flat = z.ndim == 2
        x = z.unsqueeze(0).expand(k, *z.shape) if flat else z
        if x.ndim != 3 or x.shape[0] != k or x.shape[2] != self.dim:
            raise ValueError(
                f"adapter input must have shape (n, {self.dim}) or ({k}, n, {self.dim}), got "
                f"{tuple(z.shape)}"
            )
        h = x
        n_layers = len(self.weights)
        for i, (w, b) in enumerate(zip(self.weights, self.biases)):
            h = torch.baddbmm(b.unsqueeze(1), h, w)
            if i < n_layers - 1:
                h = torch.relu(h)
        out = x + h if (self.kind == "mlp" and self.residual) else h
        return out[0] if flat and k == 1 else out

    @torch.no_grad()
    def select(self, index: int) -> Adapter:
        """A one-candidate copy of candidate ``index`` (detached from this module)."""
        if not 0 <= index < self.n_candidates:
            raise ValueError(f"index must be in [0, {self.n_candidates - 1}], got {index}")
        one = Adapter(self.dim, self.kind, self.hidden or (1,), self.residual, 1)
        one.weights = nn.ParameterList(
            nn.Parameter(w[index : index + 1].clone()) for w in self.weights
        )
        one.biases = nn.ParameterList(
            nn.Parameter(b[index : index + 1].clone()) for b in self.biases
        )
        one.hidden = self.hidden
        return one

    def extra_repr(self) -> str:
        return (
            f"dim={self.dim}, kind={self.kind!r}, hidden={self.hidden}, "
            f"residual={self.residual}, n_candidates={self.n_candidates}"
        )
