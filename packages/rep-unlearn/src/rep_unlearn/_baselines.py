"""Parameter-centric baselines, one signature, tuned by the same validation-only rule as our β.

``method(model_factory_or_model, retain, forget, *, val=None, forget_classes=None, seed=0,
progress=False, **hyperparameters) -> nn.Module`` (the unlearned copy; the input model is never
modified). A hyperparameter set to ``"auto"`` is chosen on ``val`` over its grid by
:func:`rep_unlearn._selection.select_candidate`; the choice and the validation record are stored
on the returned module as ``hyperparameters_`` and ``selection_``.

* ``retrain``: train a fresh model on ``retain`` with the original recipe (the gold standard).
* ``finetune``: continue training on ``retain`` for ``epochs`` (catastrophic forgetting);
  tuned: ``lr``.
* ``neggrad``: NegGrad+ (Kurmanji et al., 2023), each step descends
  ``α CE(retain batch) − (1 − α) CE(forget batch)``; tuned: ``alpha``.
* ``scrub``: SCRUB (Kurmanji et al., 2023). Student initialised from the teacher (the original);
  for the first ``max_epochs`` epochs a max-step pass over the forget set raises
  ``KL(teacher ‖ student)``, then every epoch a min-step pass over retain lowers
  ``kl_weight KL(teacher ‖ student) + ce_weight CE``; tuned: ``lr``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from icml26_shared.checks import (
    SeedLike,
    check_in_interval,
    check_positive,
    check_positive_int,
    int_from_seed,
)
from icml26_shared.experiment import progress as progress_bar

from ._checks import check_data, check_disjoint, forgetting_mode
from ._data import TensorData
from ._selection import select_candidate
from ._split import check_model_input, ensure_eval
from ._train import Adam, TrainRecipe, batches, train_classifier

__all__ = ["GRIDS", "finetune", "neggrad", "retrain", "scrub"]

GRIDS: dict[str, dict[str, tuple[float, ...]]] = {
    "finetune": {"lr": (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)},
    "neggrad": {"alpha": (0.5, 0.7, 0.9, 0.95, 0.99, 0.999)},
    "scrub": {"lr": (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)},
}


def _n_classes(model: nn.Module, X: torch.Tensor) -> int:
    ensure_eval(model, "model")
    check_model_input(model, X, "retain.X")
    with torch.no_grad():
        return int(model(X[:1]).shape[1])


def _prepare(model: nn.Module, retain: Any, forget: Any, forget_classes: Any) -> tuple:
    retain, forget = check_data(retain, "retain"), check_data(forget, "forget")
    check_disjoint(retain, forget)
    mode, classes = forgetting_mode(retain, forget, forget_classes, _n_classes(model, retain.X))
    return retain, forget, mode, classes


def _tune(
    name: str,
    run: Callable[[float], nn.Module],
    value: float | str,
    retain: TensorData,
    forget: TensorData,
    val: TensorData | None,
    mode: str,
    classes: tuple[int, ...],
    progress: bool,
) -> nn.Module:
    ((key, grid),) = GRIDS[name].items()
    if value != "auto":
        out = run(float(value))
        out.hyperparameters_ = {key: float(value)}  # type: ignore[assignment]
        out.selection_ = []  # type: ignore[assignment]
        return out
    if mode == "random" and val is None:
        raise ValueError(
            f"val must be given for {key}='auto' with random-subset forgetting; pass val or a value"
        )
    if val is None:
        X_v, y_v = torch.cat([retain.X, forget.X]), torch.cat([retain.y, forget.y])
    else:
        val = check_data(val, "val")
        X_v, y_v = val.X, val.y
    models, lv, lf = [], [], []
    for v in progress_bar(grid, enabled=progress, total=len(grid), desc=f"{name} grid"):
        m = run(v)
        with torch.no_grad():
            lv.append(m(X_v))
            lf.append(m(forget.X))
        models.append(m)
    best, records = select_candidate(mode, lv, y_v, lf, forget.y, classes)
    out = models[best]
    out.hyperparameters_ = {key: grid[best]}  # type: ignore[assignment]
    out.selection_ = [{key: v, **r} for v, r in zip(grid, records)]  # type: ignore[assignment]
    return out


def retrain(
    model_factory_or_model: Callable[[], nn.Module] | nn.Module,
    retain: TensorData,
    forget: TensorData | None = None,
    *,
    recipe: TrainRecipe | None = None,
    seed: SeedLike = 0,
    progress: bool | None = None,
) -> nn.Module:
    """Train from scratch on ``retain`` only (``forget`` is just checked to be disjoint).

    ``model_factory_or_model``: a zero-argument factory, or a model whose deep copy is
    re-initialised (every submodule's ``reset_parameters``) under ``torch.manual_seed(seed)``.
    """
    retain = check_data(retain, "retain")
    if forget is not None:
        check_disjoint(retain, check_data(forget, "forget"))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int_from_seed(seed, "seed", bits=63))
        if isinstance(model_factory_or_model, nn.Module):
            model = copy.deepcopy(model_factory_or_model)
            for m in model.modules():
                if hasattr(m, "reset_parameters"):
                    m.reset_parameters()
        elif callable(model_factory_or_model):
            model = model_factory_or_model()
        else:
            raise TypeError(
                "model_factory_or_model must be an nn.Module or a zero-argument factory, got "
                f"{type(model_factory_or_model).__name__}"
            )
    return train_classifier(model, retain, recipe or TrainRecipe(), seed=seed, progress=progress)


def _copy(model: nn.Module) -> nn.Module:
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    out = copy.deepcopy(model)
    for p in out.parameters():
        p.requires_grad_(True)
    return out


def finetune(
    model: nn.Module,
    retain: TensorData,
    forget: TensorData,
    *,
    val: TensorData | None = None,
    forget_classes: Sequence[int] | None = None,
    lr: float | str = "auto",
    epochs: int = 5,
    batch_size: int = 32,
    seed: SeedLike = 0,
    progress: bool | None = None,
) -> nn.Module:
    """Fine-tune a copy of ``model`` on ``retain`` for ``epochs`` (Adam, cross-entropy)."""
    retain, forget, mode, classes = _prepare(model, retain, forget, forget_classes)
    check_positive_int(epochs, "epochs")

    def run(rate: float) -> nn.Module:
        recipe = TrainRecipe(epochs=epochs, lr=check_positive(rate, "lr"), batch_size=batch_size)
        return train_classifier(_copy(model), retain, recipe, seed=seed)

    return _tune("finetune", run, lr, retain, forget, val, mode, classes, progress)


def neggrad(
    model: nn.Module,
    retain: TensorData,
    forget: TensorData,
    *,
    val: TensorData | None = None,
    forget_classes: Sequence[int] | None = None,
    alpha: float | str = "auto",
    lr: float = 1e-3,
    epochs: int = 5,
    batch_size: int = 32,
    seed: SeedLike = 0,
    progress: bool | None = None,
) -> nn.Module:
    """NegGrad+: per retain batch, descend ``α CE_retain − (1 − α) CE_forget`` (forget cycled)."""
    retain, forget, mode, classes = _prepare(model, retain, forget, forget_classes)
    check_positive_int(epochs, "epochs")
    check_positive(lr, "lr")

    def run(a: float) -> nn.Module:
        a = check_in_interval(a, "alpha", 0, 1, closed=(True, True))
        m = _copy(model).train()
        opt = Adam(m.parameters(), lr=lr)
        gen = torch.Generator().manual_seed(int_from_seed(seed, "seed", bits=63))
        f_batches: list[torch.Tensor] = []
        for _ in range(epochs):
            for idx_r in batches(len(retain), batch_size, gen):
                if not f_batches:
                    f_batches = batches(len(forget), batch_size, gen)
                idx_f = f_batches.pop()
                loss = a * F.cross_entropy(m(retain.X[idx_r]), retain.y[idx_r]) - (
                    1 - a
                ) * F.cross_entropy(m(forget.X[idx_f]), forget.y[idx_f])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        return m.eval()

    return _tune("neggrad", run, alpha, retain, forget, val, mode, classes, progress)


def _kl_teacher_student(teacher_logits: torch.Tensor, student_logits: torch.Tensor) -> torch.Tensor:
    """``mean_i KL(p_teacher,i ‖ p_student,i)``."""
    return F.kl_div(
        F.log_softmax(student_logits, 1),
        F.log_softmax(teacher_logits, 1),
        reduction="batchmean",
        log_target=True,
    )


def scrub(
    model: nn.Module,
    retain: TensorData,
    forget: TensorData,
    *,
    val: TensorData | None = None,
    forget_classes: Sequence[int] | None = None,
    lr: float | str = "auto",
    epochs: int = 5,
    max_epochs: int = 3,
    kl_weight: float = 1.0,
    ce_weight: float = 1.0,
    batch_size: int = 32,
    seed: SeedLike = 0,
    progress: bool | None = None,
) -> nn.Module:
    """SCRUB: alternate max-steps (raise KL on forget) and min-steps (KL + CE on retain)."""
    retain, forget, mode, classes = _prepare(model, retain, forget, forget_classes)
    check_positive_int(epochs, "epochs")
    check_positive_int(max_epochs, "max_epochs", minimum=0)
    teacher = copy.deepcopy(model).eval()
    with torch.no_grad():
        t_r, t_f = teacher(retain.X), teacher(forget.X)

    def run(rate: float) -> nn.Module:
        student = _copy(model).train()
        opt = Adam(student.parameters(), lr=check_positive(rate, "lr"))
        gen = torch.Generator().manual_seed(int_from_seed(seed, "seed", bits=63))
        for epoch in range(epochs):
            if epoch < max_epochs:
                for idx in batches(len(forget), batch_size, gen):
                    loss = -_kl_teacher_student(t_f[idx], student(forget.X[idx]))
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
            for idx in batches(len(retain), batch_size, gen):
                out = student(retain.X[idx])
                loss = kl_weight * _kl_teacher_student(t_r[idx], out) + ce_weight * F.cross_entropy(
                    out, retain.y[idx]
                )
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
        return student.eval()

    return _tune("scrub", run, lr, retain, forget, val, mode, classes, progress)
