"""Supervised training of a classifier: the recipe shared by the original model and retraining."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.nn import functional as F

from icml26_shared.checks import check_positive, check_positive_int
from icml26_shared.experiment import progress as progress_bar

if TYPE_CHECKING:
    from ._data import TensorData

__all__ = ["TrainRecipe", "batches", "train_classifier"]


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
    recipe: TrainRecipe = TrainRecipe(),
    *,
    seed: int = 0,
    progress: bool = False,
) -> nn.Module:
    """Train ``model`` in place on ``data`` with ``recipe``; returns it in eval mode.

    Minimises the empirical cross-entropy ``(1/n) Σ_i −log softmax(model(x_i))_{y_i}`` with Adam.
    """
    if len(data) == 0:
        raise ValueError("data must not be empty, got 0 samples")
    gen = torch.Generator().manual_seed(int(seed))
    opt = torch.optim.Adam(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
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
