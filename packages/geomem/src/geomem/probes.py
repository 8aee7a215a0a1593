"""Probes of associative versus geometric storage (see :mod:`geomem._probes`)."""

from ._probes import edge_recovery as edge_recovery
from ._probes import eigen_energy as eigen_energy
from ._probes import energy_per_eigenvalue as energy_per_eigenvalue
from ._probes import exact_path as exact_path
from ._probes import first_step as first_step
from ._probes import geometric_score as geometric_score
from ._probes import navigation as navigation
from ._probes import spectral_alignment as spectral_alignment
from ._probes import spectral_share as spectral_share
from ._probes import teacher_forced as teacher_forced

__all__ = [
    "edge_recovery",
    "eigen_energy",
    "energy_per_eigenvalue",
    "exact_path",
    "first_step",
    "geometric_score",
    "navigation",
    "spectral_alignment",
    "spectral_share",
    "teacher_forced",
]
