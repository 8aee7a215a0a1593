"""Adapters to the peer libraries (optional extra ``[peers]``): econml's ``DRPolicyForest``
for best-arm targeting and doubleml's ``DoubleMLAPOS`` for per-arm potential outcomes.

Both are called on exactly the data DLPT sees. Their nuisance learners are scikit-learn
histogram gradient boosting (the same settings as :class:`dlpt.baselines.DRBestArmPolicy`);
their BLAS/OpenMP pools are limited to one thread while they run (on few shared cores this is
much faster than oversubscribed threads).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from icml26_shared.checks import SeedLike, int_from_seed, rng_from_seed

from ._baselines import default_regressor

Array = NDArray[np.float64]


def econml_available() -> bool:
    try:
        import econml.policy  # noqa: F401
    except ImportError:
        return False
    return True


def doubleml_available() -> bool:
    try:
        import doubleml  # noqa: F401
    except ImportError:
        return False
    return True


def dr_policy_forest(
    X: Array, t: Array, y: Array, arms: Array, seed: SeedLike = 0
) -> Callable[[Array], Array]:
    """econml ``DRPolicyForest`` (uniform known design: prior-frequency propensity model);
    returns the policy X → recommended tested dose."""
    from econml.policy import DRPolicyForest
    from sklearn.dummy import DummyClassifier

    seed = int_from_seed(seed)  # scikit-learn's random_state: an int below 2**32
    k = np.argmin(np.abs(t[:, None] - arms[None, :]), axis=1)
    with threadpool_limits(limits=1):
        forest = DRPolicyForest(
            model_regression=default_regressor(),
            model_propensity=DummyClassifier(strategy="prior"),
            random_state=seed,
            n_jobs=1,
        )
        forest.fit(y, k, X=X)

    def policy(Xn: Array) -> Array:
        with threadpool_limits(limits=1):
            return arms[np.asarray(forest.predict(Xn), dtype=np.intp)]

    return policy


def doubleml_apos(
    X: Array, t: Array, y: Array, arms: Array, seed: SeedLike = 0
) -> tuple[Array, Array]:
    """doubleml ``DoubleMLAPOS`` estimates (coef, se) of E[Y(t_k)] for every arm."""
    import doubleml as dml
    import pandas as pd
    from sklearn.linear_model import LogisticRegression

    k = np.argmin(np.abs(t[:, None] - arms[None, :]), axis=1)
    cols = [f"x{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=cols)
    df["y"] = y
    df["d"] = k
    with threadpool_limits(limits=1):
        data = dml.DoubleMLData(df, y_col="y", d_cols="d", x_cols=cols)
        model = dml.DoubleMLAPOS(
            data,
            ml_g=default_regressor(),
            ml_m=LogisticRegression(max_iter=1000),
            treatment_levels=list(range(arms.size)),
            n_folds=5,
            draw_sample_splitting=False,
        )
        # our own seeded 5-fold split (doubleml would draw from numpy's global state)
        fold = rng_from_seed(seed).permutation(k.size) % 5
        splits = [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(5)]
        model.set_sample_splitting(all_smpls=splits)
        model.fit()
    return np.asarray(model.coef, dtype=np.float64), np.asarray(model.se, dtype=np.float64)
