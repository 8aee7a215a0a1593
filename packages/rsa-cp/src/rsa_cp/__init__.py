"""Small-sample conformal prediction by optimal-transport alignment of reference scores.

RSA-CP (Bhagwat, Yang, Wang, Jiang, Kong; ICML 2026) calibrates conformal intervals and sets
with a handful of real labelled points by borrowing strength from a large pool of reference
scores (synthetic data, a simulator, a related domain) after aligning them with 1-D optimal
transport. The score-level core is :func:`rsa_threshold`; :class:`RSAConformalRegressor` and
:class:`RSAConformalClassifier` wrap scikit-learn models MAPIE-style (``confidence_level``,
``fit`` / ``conformalize`` / ``predict_interval`` / ``predict_set``). The peers live in
:mod:`rsa_cp.baselines`, the score pools and data in :mod:`rsa_cp.data`.

Start with :func:`rsa_threshold` ``(cal_scores, ref_scores, alpha)`` on your calibration and
reference scores, or with :class:`RSAConformalRegressor` ``.fit`` / ``.conformalize`` /
``.predict_interval`` around a scikit-learn model.
"""

import importlib as _importlib
import warnings as _warnings
from importlib.metadata import version as _version
from typing import Any as _Any

from . import baselines as baselines
from . import data as data
from ._bounds import CoverageBounds as CoverageBounds
from ._bounds import coverage_bounds as coverage_bounds
from ._diagnose import Diagnosis as Diagnosis
from ._diagnose import diagnose as diagnose
from ._diagnose import plot_qq as plot_qq
from ._estimators import RSAConformalClassifier as RSAConformalClassifier
from ._estimators import RSAConformalRegressor as RSAConformalRegressor
from ._ot import AlignmentMap as AlignmentMap
from ._ot import ot_alignment as ot_alignment
from ._ot import wasserstein_distance as wasserstein_distance
from ._rsa import RSAThreshold as RSAThreshold
from ._rsa import rsa_threshold as rsa_threshold

__all__ = [
    "AlignmentMap",
    "CoverageBounds",
    "Diagnosis",
    "RSAConformalClassifier",
    "RSAConformalRegressor",
    "RSAThreshold",
    "baselines",
    "coverage_bounds",
    "data",
    "diagnose",
    "ot_alignment",
    "plot_qq",
    "rsa_threshold",
    "wasserstein_distance",
]
__version__ = _version("rsa-cp")

# Names that left the top level in 0.1.x: each still works for one release, with a warning.
_MOVED = {
    "split_threshold": ("rsa_cp.baselines.split_threshold", "rsa_cp._rsa"),
    "randomized_split_threshold": ("rsa_cp.baselines.randomized_split_threshold", "rsa_cp._rsa"),
    "reference_threshold": ("rsa_cp.baselines.reference_threshold", "rsa_cp._rsa"),
    "spi_threshold": ("rsa_cp.baselines.spi_threshold", "rsa_cp._rsa"),
    "beta_binomial_window": ("nothing public (an internal maths helper)", "rsa_cp._bounds"),
}


def __getattr__(name: str) -> _Any:
    if name in _MOVED:
        home, module = _MOVED[name]
        _warnings.warn(
            f"rsa_cp.{name} is deprecated and will be removed in rsa-cp 0.2: use {home}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(_importlib.import_module(module), name)
    raise AttributeError(f"module 'rsa_cp' has no attribute {name!r}")
