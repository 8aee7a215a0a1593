"""Data for the experiments and tests: synthetic human/AI classifiers, digits and other real sets
shipped inside scikit-learn, a regression task and a shifting stream (nothing downloads)."""

from ._data import REAL_SETS as REAL_SETS
from ._data import SYNTHETIC as SYNTHETIC
from ._data import CollabData as CollabData
from ._data import RegressionData as RegressionData
from ._data import digits_collaboration as digits_collaboration
from ._data import heteroscedastic_regression as heteroscedastic_regression
from ._data import real_collaboration as real_collaboration
from ._data import shifting_stream as shifting_stream
from ._data import synthetic_collaboration as synthetic_collaboration

__all__ = [
    "REAL_SETS",
    "SYNTHETIC",
    "CollabData",
    "RegressionData",
    "digits_collaboration",
    "heteroscedastic_regression",
    "real_collaboration",
    "shifting_stream",
    "synthetic_collaboration",
]
