"""Checks at the public boundary: data containers, disjoint splits, the forgetting mode."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from ._data import TensorData
from ._split import SplitModel

__all__ = ["as_split_model", "check_data", "check_disjoint", "forgetting_mode"]


def as_split_model(model: Any, name: str = "split_model") -> SplitModel:
    """A :class:`SplitModel`, converting an ``nn.Sequential`` with :meth:`SplitModel.from_sequential`."""
    if isinstance(model, SplitModel):
        return model
    if isinstance(model, nn.Sequential):
        return SplitModel.from_sequential(model)
    raise TypeError(f"{name} must be a SplitModel or an nn.Sequential, got {type(model).__name__}")


def check_data(data: Any, name: str, *, allow_empty: bool = False) -> TensorData:
    """A non-empty :class:`TensorData` with finite inputs."""
    if not isinstance(data, TensorData):
        raise TypeError(
            f"{name} must be a TensorData (use rep_unlearn.data.from_tensors(X, y)), got "
            f"{type(data).__name__}"
        )
    if len(data) == 0 and not allow_empty:
        raise ValueError(f"{name} must not be empty, got 0 samples")
    if data.X.is_complex() or not data.X.is_floating_point():
        raise TypeError(f"{name}.X must be a real floating tensor, got dtype {data.X.dtype}")
    if not torch.isfinite(data.X).all():
        raise ValueError(f"{name}.X must be finite, got NaN or inf")
    return data


def check_disjoint(retain: TensorData, forget: TensorData) -> None:
    """Raise if a sample is in both splits (by ``ids`` when both have them, else by row hash)."""
    if retain.ids is not None and forget.ids is not None:
        common = torch.isin(forget.ids, retain.ids)
        if common.any():
            raise ValueError(
                f"forget and retain must not overlap, got {int(common.sum())} shared id(s), "
                f"e.g. {int(forget.ids[common][0])}"
            )
        return
    shared = retain.row_hashes() & forget.row_hashes()
    if shared:
        raise ValueError(
            f"forget and retain must not overlap, got {len(shared)} identical input row(s)"
        )


def forgetting_mode(
    retain: TensorData | None,
    forget: TensorData,
    forget_classes: Sequence[int] | None,
    n_classes: int,
) -> tuple[str, tuple[int, ...]]:
    """``("class", classes)`` or ``("random", ())``.

    Given ``forget_classes``, each must be a head class present in ``forget``. Without them the
    mode is inferred: class forgetting when every forget label is absent from ``retain``.
    """
    f_labels = set(forget.y.unique().tolist())
    if forget_classes is not None:
        classes = tuple(int(c) for c in forget_classes)
        if not classes:
            raise ValueError("forget_classes must name at least one class, got ()")
        for c in classes:
            if not 0 <= c < n_classes:
                raise ValueError(
                    f"forget class must be a head class in [0, {n_classes - 1}], got {c}"
                )
            if c not in f_labels:
                raise ValueError(f"forget class {c} is absent from the forget data")
        if len(set(classes)) >= n_classes:
            raise ValueError(f"cannot forget every class: forget_classes covers all {n_classes}")
        extra = f_labels - set(classes)
        if extra:
            raise ValueError(
                f"forget data hold labels {sorted(extra)} outside forget_classes {list(classes)}"
            )
        return "class", tuple(sorted(set(classes)))
    if max(f_labels) >= n_classes:
        raise ValueError(f"forget labels must be head classes < {n_classes}, got {max(f_labels)}")
    r_labels = set(retain.y.unique().tolist()) if retain is not None else set()
    if retain is not None and not (f_labels & r_labels):
        if len(f_labels) >= n_classes:
            raise ValueError(f"cannot forget every class: the forget data cover all {n_classes}")
        return "class", tuple(sorted(f_labels))
    return "random", ()
