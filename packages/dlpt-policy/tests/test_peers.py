"""Spec item 6: V̂(π ≡ t_k) against doubleml's APOS on the same data."""

import warnings

import numpy as np
import pytest

from dlpt import DLPT
from dlpt.data import simulate_rct


@pytest.mark.parametrize("n", [pytest.param(20_000, marks=pytest.mark.slow), 5_000])
def test_item6_agrees_with_doubleml_apos_within_one_se(n):
    pytest.importorskip("doubleml")
    from dlpt.peers import doubleml_apos

    data = simulate_rct(n, seed=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model = DLPT(degree=2, hidden=(32, 32), folds=5, seed=0).fit(
            data.X, data.t, data.y, data.arms, data.probs
        )
    coef, se = doubleml_apos(data.X, data.t, data.y, data.arms)
    for k, a in enumerate(data.arms):
        est = model.value(float(a))
        assert abs(est.v - coef[k]) <= est.se, (a, est.v, coef[k], est.se)
    assert np.all(se > 0)


def test_dr_policy_forest_returns_tested_arms():
    pytest.importorskip("econml")
    from dlpt.peers import dr_policy_forest

    data = simulate_rct(1500, seed=8)
    pol = dr_policy_forest(data.X, data.t, data.y, data.arms)
    assert set(np.unique(pol(data.X))) <= set(data.arms.tolist())
