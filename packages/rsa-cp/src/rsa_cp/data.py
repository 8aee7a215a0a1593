"""Score pools and the real data set the experiments use (generated or shipped, never
downloaded)."""

from ._data import SCORE_LAWS as SCORE_LAWS
from ._data import load_diabetes as load_diabetes
from ._data import regression_scores as regression_scores

__all__ = ["SCORE_LAWS", "load_diabetes", "regression_scores"]
