"""Honest cross-fitting (no leakage) and spec item 4 (orthogonality)."""

import warnings

import numpy as np

from dlpt import DLPT
from dlpt.baselines import plug_in_value
from dlpt.data import simulate_rct

FAST = {"hidden": (8,), "epochs": 15}


def _fit(data, y=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return DLPT(degree=2, seed=0, **{**FAST, **kw}).fit(
            data.X, data.t, data.y if y is None else y, data.arms, data.probs
        )


def test_a_units_own_outcome_never_enters_its_theta_hat():
    data = simulate_rct(1500, seed=2)
    base = _fit(data, folds=3)
    for f in range(3):
        y = data.y.copy()
        in_f = base.fold_ == f
        y[in_f] += 50.0 * np.sign(np.sin(np.arange(in_f.sum())))
        other = _fit(data, y=y, folds=3)
        np.testing.assert_array_equal(other.fold_, base.fold_)
        # θ̂ of fold f comes from a net that never saw fold f: bitwise identical
        np.testing.assert_array_equal(other.theta_[in_f], base.theta_[in_f])
        # ...while the other folds' θ̂ did see the perturbed outcomes
        assert np.abs(other.theta_[~in_f] - base.theta_[~in_f]).max() > 1e-3


def test_no_cross_fitting_ablation_leaks():
    data = simulate_rct(1500, seed=2)
    base = _fit(data, folds=1)
    y = data.y.copy()
    y[:10] += 50.0
    other = _fit(data, y=y, folds=1)
    assert np.abs(other.theta_[:10] - base.theta_[:10]).max() > 1e-3


def test_folds_are_stratified_by_arm():
    data = simulate_rct(1500, seed=2)
    model = _fit(data, folds=5)
    for f in range(5):
        counts = np.bincount(model.arm_index_[model.fold_ == f], minlength=3)
        assert counts.min() >= 0.8 * counts.max()


def test_honest_split_policy_ignores_the_evaluation_half():
    data = simulate_rct(1500, seed=4)
    model = _fit(data, folds=2)
    pol = model.learn_policy(split="honest", hidden=(4,), seed=1)
    perm = np.random.default_rng([1, 7]).permutation(1500)
    eval_half = np.sort(perm[750:])
    y = data.y.copy()
    y[eval_half] += 30.0
    model2 = _fit(data, y=y, folds=2)
    pol2 = model2.learn_policy(split="honest", hidden=(4,), seed=1)
    np.testing.assert_array_equal(pol(data.X), pol2(data.X))
    # the reported value is computed on the evaluation half, so it moves
    assert pol2.value.v - pol.value.v > 10.0


def test_item4_orthogonality_at_20k():
    """Shifting θ̂ by δ·h(x) moves V̂ by ≤ 0.1× what it moves the plug-in value."""
    data = simulate_rct(20_000, seed=6)
    model = _fit(data, folds=2, hidden=(32, 32), epochs=200)
    h = np.stack([1 + np.tanh(data.X[:, 0]), 0.5 * np.sin(data.X[:, 1]), 0.3 + 0 * data.X[:, 2]], 1)
    for policy in (1.1, data.t_star):
        for delta in (0.1, 0.5):
            shifted = model._with_theta(model.theta_ + delta * h)
            move_dr = abs(shifted.value(policy).v - model.value(policy).v)
            move_plug = abs(plug_in_value(shifted, policy).v - plug_in_value(model, policy).v)
            assert move_plug > 0.05 * delta
            assert move_dr <= 0.1 * move_plug, (policy, delta, move_dr / move_plug)
