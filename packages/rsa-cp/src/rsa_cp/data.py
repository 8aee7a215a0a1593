"""Score pools and the real data sets the experiments use (generated or shipped inside
scikit-learn, never downloaded)."""

from ._data import REAL_SETS as REAL_SETS
from ._data import SCORE_LAWS as SCORE_LAWS
from ._data import load_diabetes as load_diabetes
from ._data import load_real as load_real
from ._data import regression_scores as regression_scores

__all__ = ["REAL_SETS", "SCORE_LAWS", "load_diabetes", "load_real", "regression_scores"]
