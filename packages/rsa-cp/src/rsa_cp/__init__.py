"""Small-sample conformal prediction by optimal-transport alignment of reference scores.

RSA-CP (Bhagwat, Yang, Wang, Jiang, Kong; ICML 2026) calibrates conformal intervals and sets
with a handful of real labelled points by borrowing strength from a large pool of reference
scores (synthetic data, a simulator, a related domain) after aligning them with 1-D optimal
transport. The score-level core is :func:`rsa_threshold`; :class:`RSAConformalRegressor` and
:class:`RSAConformalClassifier` wrap scikit-learn models MAPIE-style.
"""

from ._bounds import CoverageBounds as CoverageBounds
from ._bounds import beta_binomial_window as beta_binomial_window
from ._bounds import coverage_bounds as coverage_bounds
from ._core import RSAThreshold as RSAThreshold
from ._core import randomized_split_threshold as randomized_split_threshold
from ._core import reference_threshold as reference_threshold
from ._core import rsa_threshold as rsa_threshold
from ._core import spi_threshold as spi_threshold
from ._core import split_threshold as split_threshold
from ._diagnose import Diagnosis as Diagnosis
from ._diagnose import diagnose as diagnose
from ._diagnose import plot_qq as plot_qq
from ._estimators import RSAConformalClassifier as RSAConformalClassifier
from ._estimators import RSAConformalRegressor as RSAConformalRegressor
from ._ot import AlignmentMap as AlignmentMap
from ._ot import ot_alignment as ot_alignment
from ._ot import wasserstein_distance as wasserstein_distance

__all__ = [
    "AlignmentMap",
    "CoverageBounds",
    "Diagnosis",
    "RSAConformalClassifier",
    "RSAConformalRegressor",
    "RSAThreshold",
    "beta_binomial_window",
    "coverage_bounds",
    "diagnose",
    "ot_alignment",
    "plot_qq",
    "randomized_split_threshold",
    "reference_threshold",
    "rsa_threshold",
    "spi_threshold",
    "split_threshold",
    "wasserstein_distance",
]
__version__ = "0.1.0"
