"""Screens and generators: :class:`Screen`, :func:`read_screen` (AnnData), :func:`simulate_screen`
(synthetic, known ground truth) and :func:`semisynthetic_pbmc` (planted effects on real PBMCs)."""

from ._data import CONTROL as CONTROL
from ._data import Screen as Screen
from ._data import Split as Split
from ._data import canonical_condition as canonical_condition
from ._data import interaction_score as interaction_score
from ._data import read_screen as read_screen
from ._data import semisynthetic_pbmc as semisynthetic_pbmc
from ._data import simulate_screen as simulate_screen

__all__ = [
    "CONTROL",
    "Screen",
    "Split",
    "canonical_condition",
    "interaction_score",
    "read_screen",
    "semisynthetic_pbmc",
    "simulate_screen",
]
