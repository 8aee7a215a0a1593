"""Baselines and ablations DLPT is measured against (re-implemented, in-package).

- :class:`DRBestArmPolicy`: the discrete best-arm-per-user practice, debiased: cross-fitted
  per-arm outcome regressions m̂_k(x), doubly-robust pseudo-outcomes
  Γ_ik = m̂_k(x_i) + 1{t_i = t_k}(y_i − m̂_k(x_i)) / p_k(x_i) (known p_k), a second-stage
  regression of Γ_·k − mean_j Γ_·j on x per arm (the DR-learner), and π(x) = the arm with the largest
  prediction. It can only choose tested levels.
- :func:`best_single_arm`: the single tested arm with the largest debiased V̂(t_k).
- :func:`plug_in_value`: the ablation without the correction term, mean θ̂(x_i)ᵀφ(π(x_i)).
- :func:`plug_in_policy`: argmax_t θ̂(x)ᵀφ(t), the plug-in start of policy learning.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import RegressorMixin, clone
from sklearn.ensemble import HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from icml26_shared.checks import (
    SeedLike,
    check_finite_array,
    check_positive_int,
    check_same_length,
    int_from_seed,
)

from ._basis import check_arms, resolve_probs
from ._data import evaluate_policy
from ._dlpt import DLPT, PolicyLike, ValueEstimate, plug_in_policy

Array = NDArray[np.float64]

__all__ = ["DRBestArmPolicy", "best_single_arm", "plug_in_policy", "plug_in_value"]


def default_regressor() -> HistGradientBoostingRegressor:
    """The outcome regressor of the DR best-arm baseline and of the econml / DoubleML peers
    (one setting, so the comparisons share it)."""
    return HistGradientBoostingRegressor(
        max_iter=150,
        learning_rate=0.05,
        max_leaf_nodes=15,
        min_samples_leaf=40,
        early_stopping=True,
        random_state=0,
    )


class DRBestArmPolicy:
    """Doubly-robust best-arm-per-user policy (a DR-learner over K arms, known propensities).

    Args:
        regressor: scikit-learn regressor for both stages (default histogram gradient boosting).
        folds: cross-fitting folds of the first stage.
        seed: random seed.
    """

    def __init__(
        self, regressor: RegressorMixin | None = None, folds: int = 2, seed: SeedLike = 0
    ) -> None:
        self.regressor = regressor
        self.folds = check_positive_int(folds, "folds", minimum=2)
        self.seed = int_from_seed(seed, bits=63)

    def _reg(self) -> Any:
        return default_regressor() if self.regressor is None else clone(self.regressor)

    def fit(
        self, X: ArrayLike, t: ArrayLike, y: ArrayLike, arms: ArrayLike, probs: Any = None
    ) -> DRBestArmPolicy:
        X = check_finite_array(X, "X", ndim=2)
        t = check_finite_array(t, "t", ndim=1)
        y = check_finite_array(y, "y", ndim=1)
        n = check_same_length(X=X, t=t, y=y)
        a = check_arms(arms)
        p = np.broadcast_to(resolve_probs(probs, X, a.size), (n, a.size))
        k = np.argmin(np.abs(t[:, None] - a[None, :]), axis=1)
        fold = np.random.default_rng(self.seed).permutation(n) % self.folds
        m = np.zeros((n, a.size))
        # small trees and matrices: single-threaded is faster than oversubscribed OpenMP
        with threadpool_limits(limits=1):
            for f in range(self.folds):
                for j in range(a.size):
                    rows = (fold != f) & (k == j)
                    m[fold == f, j] = self._reg().fit(X[rows], y[rows]).predict(X[fold == f])
            gamma = m + (k[:, None] == np.arange(a.size)) * (y[:, None] - m) / p
            # second stage on contrasts against the arm mean (the DR-learner of each arm)
            contrast = gamma - gamma.mean(axis=1, keepdims=True)
            self.models_ = [self._reg().fit(X, contrast[:, j]) for j in range(a.size)]
        self.gamma_ = gamma
        self.arms_ = a
        return self

    def predict(self, X: ArrayLike) -> Array:
        """Recommended tested dose per unit."""
        Xa = check_finite_array(X, "X", ndim=2)
        with threadpool_limits(limits=1):
            pred = np.stack([mdl.predict(Xa) for mdl in self.models_], axis=1)
        return self.arms_[np.argmax(pred, axis=1)]

    __call__ = predict


def best_single_arm(model: DLPT) -> float:
    """The tested arm t_k with the largest debiased V̂(t_k)."""
    values = [model.value(float(a)).v for a in model.arms_]
    return float(model.arms_[int(np.argmax(values))])


def plug_in_value(model: DLPT, policy: PolicyLike, alpha: float = 0.05) -> ValueEstimate:
    """Ablation: mean θ̂(x_i)ᵀφ(π(x_i)) on the training units, no correction term (its SE
    ignores the error of θ̂, so its CI is not valid)."""
    model._check_fitted()
    pi = evaluate_policy(policy, model.X_)
    psi = np.einsum("nk,nk->n", model.theta_, model.basis_(pi))
    return ValueEstimate.from_scores(psi, alpha)
