"""Score pools for the experiments and the real data sets (diabetes, moved home from
icml26-shared, and the classification sets of :func:`load_real`).

Nothing here downloads: scikit-learn ships all the real data.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_in_interval,
    check_positive,
    check_positive_int,
    rng_from_seed,
)
from icml26_shared.datasets import load_real_classification

__all__ = ["REAL_SETS", "SCORE_LAWS", "load_diabetes", "load_real", "regression_scores"]

#: name -> description of the real classification sets of :func:`load_real` (in scikit-learn).
REAL_SETS = {
    "breast_cancer": "Wisconsin diagnostic breast cancer, 569 x 30, 2 classes (UCI, CC BY 4.0)",
    "wine": "UCI wine recognition, 178 x 13, 3 classes (CC BY 4.0)",
    "iris": "Fisher's iris, 150 x 4, 3 classes (UCI, CC BY 4.0)",
}

SCORE_LAWS = ("lognormal", "student_t", "gamma", "halfnormal")


def regression_scores(
    law: str,
    n: int,
    *,
    shift: float = 0.0,
    scale: float = 1.0,
    shock_prob: float = 0.0,
    shock_scale: float = 10.0,
    df: float = 3.0,
    seed: SeedLike = 0,
) -> NDArray[np.float64]:
    """Non-negative regression scores (e.g. ``|residuals|``) from a named law, optionally
    shifted, scaled and contaminated.

    Laws: ``lognormal`` (exp N(0, 1)), ``student_t`` (``|t_df|``), ``gamma`` (Gamma(2, 1)),
    ``halfnormal`` (``|N(0, 1)|``). Then ``s <- shift + scale * s``, and with probability
    ``shock_prob`` a score gets an extra positive shock ``shock_scale * Exp(1)`` (the
    misaligned references of the experiments). Deterministic given ``seed``.

    >>> regression_scores("gamma", 3, seed=0).shape
    (3,)
    """
    check_choice(law, "law", SCORE_LAWS)
    n = check_positive_int(n, "n")
    scale = check_positive(scale, "scale")
    check_in_interval(shock_prob, "shock_prob", 0, 1, closed=(True, True))
    rng = rng_from_seed(seed)
    if law == "lognormal":
        s = rng.lognormal(0.0, 1.0, n)
    elif law == "student_t":
        s = np.abs(rng.standard_t(check_positive(df, "df"), n))
    elif law == "gamma":
        s = rng.gamma(2.0, 1.0, n)
    else:
        s = np.abs(rng.standard_normal(n))
    s = shift + scale * s
    if shock_prob > 0:
        hit = rng.random(n) < shock_prob
        s = s + hit * shock_scale * rng.exponential(1.0, n)
    return s


def load_diabetes() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """scikit-learn's diabetes regression data (442 patients, 10 features; ships with sklearn)."""
    from sklearn.datasets import load_diabetes as _sk_load

    X, y = _sk_load(return_X_y=True)
    return X.astype(np.float64), y.astype(np.float64)


#: ``load_real(name)``: ``(X, y)`` of one of :data:`REAL_SETS` (icml26-shared's loader).
load_real = load_real_classification
