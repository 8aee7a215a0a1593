"""A classifier split as frozen encoder ``h`` and linear head ``(W, b)``, and its rewired form.

``SplitModel``: ``x ↦ W h(x) + b``. ``RewiredModel``: ``x ↦ W f_φ(h(x)) + b`` with the adapter
``f_φ`` between them; ``h`` and ``(W, b)`` are shared with the original model and never trained.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:
    from ._adapter import Adapter

__all__ = ["RewiredModel", "SplitModel", "check_model_input", "encode", "ensure_eval"]

_STOCHASTIC = (nn.modules.batchnorm._BatchNorm, nn.modules.dropout._DropoutNd)


def ensure_eval(module: nn.Module, name: str = "model") -> None:
    """Put ``module`` in eval mode; warn (once per call) if it held BatchNorm/Dropout in train mode."""
    if module.training and any(isinstance(m, _STOCHASTIC) for m in module.modules()):
        warnings.warn(
            f"{name} was in train mode with BatchNorm/Dropout layers; switched it to eval mode "
            "so that its representations are deterministic",
            UserWarning,
            stacklevel=3,
        )
    module.eval()


def _out_features(encoder: nn.Module) -> int | None:
    last = None
    for m in encoder.modules():
        if isinstance(m, nn.Linear | nn.Conv1d | nn.Conv2d | nn.Conv3d):
            last = m
    return last.out_features if isinstance(last, nn.Linear) else None


class SplitModel(nn.Module):
    """A classifier ``x ↦ W h(x) + b`` split into encoder ``h`` and linear head ``(W, b)``.

    Args:
        encoder: any module mapping inputs to ``(n, d)`` representations.
        head: an ``nn.Linear(d, n_classes)``.

    Example:
        >>> net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        >>> split = SplitModel.from_sequential(net)
        >>> split.dim, split.n_classes
        (8, 3)
    """

    def __init__(self, encoder: nn.Module, head: nn.Module) -> None:
        super().__init__()
        if not isinstance(head, nn.Linear):
            raise TypeError(f"head must be an nn.Linear layer, got {type(head).__name__}")
        if not isinstance(encoder, nn.Module):
            raise TypeError(f"encoder must be an nn.Module, got {type(encoder).__name__}")
        d = _out_features(encoder)
        if d is not None and d != head.in_features:
            raise ValueError(
                f"encoder output dimension must equal head.in_features = {head.in_features}, "
                f"got {d}"
            )
        self.encoder = encoder
        self.head = head

    @classmethod
    def from_sequential(cls, model: nn.Sequential) -> SplitModel:
        """Split an ``nn.Sequential`` whose last layer is an ``nn.Linear`` (the head)."""
        if not isinstance(model, nn.Sequential):
            raise TypeError(f"model must be an nn.Sequential, got {type(model).__name__}")
        layers = list(model.children())
        if len(layers) < 2 or not isinstance(layers[-1], nn.Linear):
            last = type(layers[-1]).__name__ if layers else "nothing"
            raise ValueError(
                "model must end with an nn.Linear head after at least one encoder layer, "
                f"got last layer {last}"
            )
        return cls(nn.Sequential(*layers[:-1]), layers[-1])

    @property
    def dim(self) -> int:
        """Representation dimension ``d`` (= ``head.in_features``)."""
        return int(self.head.in_features)

    @property
    def n_classes(self) -> int:
        return int(self.head.out_features)

    def represent(self, x: torch.Tensor) -> torch.Tensor:
        """``z = h(x)``."""
        return self.encoder(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))


class RewiredModel(nn.Module):
    """``x ↦ W f_φ(h(x)) + b``: the deployed, unlearned path (an ``nn.Module`` giving logits).

    ``encoder`` and ``head`` are the original modules (shared, frozen); only ``adapter`` is new.
    """

    def __init__(self, encoder: nn.Module, adapter: Adapter, head: nn.Linear) -> None:
        super().__init__()
        self.encoder = encoder
        self.adapter = adapter
        self.head = head

    def represent(self, x: torch.Tensor) -> torch.Tensor:
        """``z′ = f_φ(h(x))``."""
        return self.adapter(self.encoder(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.represent(x))


def _first_layer(module: nn.Module) -> nn.Module | None:
    for m in module.modules():
        if isinstance(m, nn.Linear | nn.Conv1d | nn.Conv2d | nn.Conv3d):
            return m
    return None


def _check_dtype(module: nn.Module, X: torch.Tensor, name: str) -> None:
    params = [p for p in module.parameters() if p.is_floating_point()]
    if params and X.dtype != params[0].dtype:
        raise TypeError(
            f"{name} must have the dtype of the model's parameters, {params[0].dtype}, got "
            f"{X.dtype}; cast one to the other (e.g. model.float())"
        )


def _input_error(module: nn.Module, X: torch.Tensor, name: str, exc: Exception) -> ValueError:
    """A message naming the shape of ``X`` and what ``module``'s first layer expects."""
    first = _first_layer(module)
    if isinstance(first, nn.Linear):
        want = f"its first layer takes {first.in_features} input features"
        got = f"got {X.shape[-1]} features per sample (shape {tuple(X.shape)})"
    elif isinstance(first, nn.Conv1d | nn.Conv2d | nn.Conv3d):
        want = f"its first layer takes {first.in_channels} input channels"
        got = f"got shape {tuple(X.shape)}"
    else:
        want, got = "the model rejects it", f"got shape {tuple(X.shape)}"
    return ValueError(f"{name} must fit the model's input: {want}, {got} (torch: {exc})")


@torch.no_grad()
def check_model_input(module: nn.Module, X: torch.Tensor, name: str = "X") -> None:
    """Raise a clear error when ``X`` cannot enter ``module``.

    The dtype of ``X`` must equal that of the module's floating parameters, and ``module`` must
    accept one row of ``X``; otherwise the message names both dtypes, or the shape of ``X`` and
    what the module's first layer expects (instead of torch's matmul error).
    """
    _check_dtype(module, X, name)
    try:
        module(X[:1])
    except RuntimeError as exc:
        raise _input_error(module, X, name, exc) from exc


@torch.no_grad()
def encode(
    model: SplitModel, X: torch.Tensor, *, batch_size: int = 2048, name: str = "X"
) -> torch.Tensor:
    """Cache ``h(X)`` once (eval mode, no gradients), checking that ``X`` fits the encoder and
    that the output has shape ``(n, d)`` and is finite."""
    ensure_eval(model.encoder, "split_model")
    _check_dtype(model.encoder, X, name)
    try:
        parts = [model.encoder(X[i : i + batch_size]) for i in range(0, len(X), batch_size)]
    except RuntimeError as exc:
        raise _input_error(model.encoder, X, name, exc) from exc
    z = torch.cat(parts) if parts else torch.empty(0, model.dim)
    if z.ndim != 2 or z.shape[1] != model.dim:
        raise ValueError(
            f"encoder output must have shape (n, {model.dim}) to match the head, got "
            f"{tuple(z.shape)}"
        )
    if not torch.isfinite(z).all():
        bad = int(torch.nonzero(~torch.isfinite(z).all(dim=1))[0])
        raise ValueError(f"features must be finite, got a non-finite representation at row {bad}")
    return z.float()
