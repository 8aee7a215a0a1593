"""Supervised training of a classifier: the recipe shared by the original model and retraining."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.nn import functional as F

from icml26_shared.checks import SeedLike, check_positive, check_positive_int, int_from_seed
from icml26_shared.experiment import progress as progress_bar

if TYPE_CHECKING:
    from ._data import TensorData

__all__ = ["Adam", "TrainRecipe", "batches", "train_classifier"]


class Adam:
    """Adam (Kingma & Ba, 2015) with L2 weight decay, as ``torch.optim.Adam`` computes it.

    ``m ← β₁m + (1−β₁)g``, ``v ← β₂v + (1−β₂)g²``, ``θ ← θ − lr m̂ / (sqrt(v̂) + ε)`` with the
    bias corrections ``m̂ = m/(1−β₁ᵗ)``, ``v̂ = v/(1−β₂ᵗ)``. A plain class: ``torch.optim``'s first
    ``step`` imports the compiler stack, which costs seconds that would swamp these small runs.
    """

    def __init__(
        self,
        params: Iterable[torch.Tensor],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.betas, self.eps, self.weight_decay = (
            float(lr),
            betas,
            float(eps),
            weight_decay,
        )
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        bc1, bc2 = 1 - b1**self.t, 1 - b2**self.t
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            g = p.grad if self.weight_decay == 0 else p.grad + self.weight_decay * p
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (v.sqrt() / math.sqrt(bc2)).add_(self.eps)
            p.addcdiv_(m, denom, value=-self.lr / bc1)


@dataclass(frozen=True)
class TrainRecipe:
    """Adam on mean cross-entropy: ``epochs`` passes of shuffled mini-batches of ``batch_size``."""

    epochs: int = 40
    lr: float = 1e-3
    batch_size: int = 32
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        check_positive_int(self.epochs, "epochs")
        check_positive(self.lr, "lr")
        check_positive_int(self.batch_size, "batch_size")
        check_positive(self.weight_decay, "weight_decay", strict=False)


def batches(n: int, batch_size: int, generator: torch.Generator) -> list[torch.Tensor]:
    """A fresh random permutation of ``range(n)`` cut into batches of ``batch_size``."""
    perm = torch.randperm(n, generator=generator)
    return list(perm.split(batch_size))


def train_classifier(
    model: nn.Module,
    data: TensorData,
    recipe: TrainRecipe | None = None,
    *,
    seed: SeedLike = 0,
    progress: bool | None = None,
) -> nn.Module:
    """Train ``model`` in place on ``data`` with ``recipe``; returns it in eval mode.

    Minimises the empirical cross-entropy ``(1/n) Σ_i −log softmax(model(x_i))_{y_i}`` with Adam.
    """
    recipe = recipe or TrainRecipe()
    if len(data) == 0:
        raise ValueError("data must not be empty, got 0 samples")
    gen = torch.Generator().manual_seed(int_from_seed(seed, "seed", bits=63))
    opt = Adam(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    model.train()
    steps = recipe.epochs * math.ceil(len(data) / recipe.batch_size)
    bar = iter(progress_bar(range(steps), enabled=progress, total=steps, desc="train"))
    for _ in range(recipe.epochs):
        for idx in batches(len(data), recipe.batch_size, gen):
            loss = F.cross_entropy(model(data.X[idx]), data.y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            next(bar, None)
    return model.eval()
