"""Ridge encoding pieces (public): column Pearson r, blocked CV folds, the fit."""

from ._ridge import RidgeFold as RidgeFold
from ._ridge import blocked_folds as blocked_folds
from ._ridge import fit_ridge as fit_ridge
from ._ridge import pearson_cols as pearson_cols

__all__ = ["RidgeFold", "blocked_folds", "fit_ridge", "pearson_cols"]
