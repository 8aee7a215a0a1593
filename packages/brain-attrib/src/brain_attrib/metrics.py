"""Comparison metrics of attribution vectors (public)."""

from ._metrics import bh as bh
from ._metrics import category_shares as category_shares
from ._metrics import center_of_mass as center_of_mass
from ._metrics import importance as importance
from ._metrics import iou as iou
from ._metrics import iou_curve as iou_curve
from ._metrics import mass_set as mass_set
from ._metrics import mass_set_auc as mass_set_auc
from ._metrics import recency_mass as recency_mass
from ._metrics import recovery as recovery
from ._metrics import recovery_chance as recovery_chance
from ._metrics import top_k as top_k
from ._metrics import top_k_share as top_k_share

__all__ = [
    "bh",
    "category_shares",
    "center_of_mass",
    "importance",
    "iou",
    "iou_curve",
    "mass_set",
    "mass_set_auc",
    "recency_mass",
    "recovery",
    "recovery_chance",
    "top_k",
    "top_k_share",
]
