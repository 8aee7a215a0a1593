import numpy as np
import pytest

from dlpt import DLPT, design_report
from dlpt.data import simulate_rct

rng = np.random.default_rng(0)
N = 60
X = rng.normal(size=(N, 3))
ARMS = np.array([0.6, 1.0, 1.4])
T = ARMS[np.arange(N) % 3]
Y = rng.normal(size=N)
P = np.ones(3) / 3
FAST = {"hidden": (4,), "folds": 2, "epochs": 2}


def fit(**kw):
    args = {"X": X, "t": T, "y": Y, "arms": ARMS, "probs": P}
    args.update(kw)
    return DLPT(degree=2, **FAST).fit(args["X"], args["t"], args["y"], args["arms"], args["probs"])


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"probs": None},
            ValueError,
            "known assignment probabilities; for observational data use econml",
        ),
        ({"arms": [0.6, 1.0, 1.0]}, ValueError, "arms must be distinct"),
        ({"arms": [0.6, 1.0]}, ValueError, r"needs K >= q \+ 1"),
        ({"probs": [0.5, 0.5, 0.0]}, ValueError, "probs must be > 0"),
        ({"probs": [0.5, 0.6, -0.1]}, ValueError, "probs must be > 0"),
        ({"probs": [0.3, 0.3, 0.3]}, ValueError, "must sum to 1"),
        ({"probs": [0.5, 0.5]}, ValueError, r"probs must have shape \(3,\)"),
        ({"probs": np.ones((N - 1, 3)) / 3}, ValueError, "probs must have shape"),
        (
            {"probs": lambda X: np.ones((X.shape[0], 2)) / 2},
            ValueError,
            r"probs\(X\) must have shape",
        ),
        ({"t": np.where(np.arange(N) == 5, 0.8, T)}, ValueError, "t must take values among arms"),
        ({"t": T + 1e-7}, ValueError, "t must take values among arms"),
        ({"X": np.where(np.arange(N)[:, None] == 3, np.nan, X)}, ValueError, "X must be finite"),
        ({"y": np.where(np.arange(N) == 2, np.inf, Y)}, ValueError, "y must be finite"),
        ({"t": np.where(np.arange(N) == 2, np.nan, T)}, ValueError, "t must be finite"),
        ({"X": X[:, 0]}, ValueError, "X must have 2 dimension"),
        ({"y": Y[:-1]}, ValueError, "same length"),
        ({"X": X.astype(complex)}, TypeError, "X must be real-valued"),
        ({"y": np.array(["a"] * N)}, TypeError, r"y must be (a )?numeric"),
    ],
)
def test_bad_fit_input(kwargs, error, match):
    with pytest.raises(error, match=match):
        fit(**kwargs)


def test_tiny_time_differences_within_tolerance_are_accepted():
    m = fit(t=T + 1e-12)
    np.testing.assert_array_equal(m.t_, T)


def test_arm_missing_from_a_training_fold_raises():
    t = T.copy()
    t[t == 1.4] = 1.0
    t[0] = 1.4  # a single unit on the last arm: its fold's complement lacks it
    with pytest.raises(ValueError, match="missing from the training folds"):
        fit(t=t)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"degree": 0}, ValueError, "degree must be an integer >= 1"),
        ({"degree": 2.5}, TypeError, "degree must be an integer"),
        ({"folds": 0}, ValueError, "folds must be an integer >= 1"),
        ({"hidden": (0,)}, ValueError, "hidden must be an integer >= 1"),
        ({"lr": -1.0}, ValueError, "lr must be finite and > 0"),
        ({"weight_decay": -1.0}, ValueError, "weight_decay must be finite and >= 0"),
        ({"basis": "chebyshev"}, ValueError, "basis must be one of"),
        ({"epochs": 0}, ValueError, "epochs must be an integer >= 1"),
    ],
)
def test_bad_hyperparameters(kwargs, error, match):
    with pytest.raises(error, match=match):
        DLPT(**kwargs)


@pytest.fixture(scope="module")
def tiny():
    with pytest.warns(UserWarning, match="q = K - 1"):
        return fit()


@pytest.mark.parametrize(
    ("policy", "match"),
    [
        (lambda X: np.ones((X.shape[0], 2)), r"policy must return doses of shape \(60,\)"),
        (lambda X: np.ones(X.shape[0] - 1), "policy must return doses of shape"),
        (lambda X: np.full(X.shape[0], np.nan), "policy must return finite doses"),
        (float("nan"), "policy must return finite doses"),
    ],
)
def test_bad_policies(tiny, policy, match):
    with pytest.raises(ValueError, match=match):
        tiny.value(policy)


def test_bad_alpha_and_unfitted(tiny):
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\)"):
        tiny.value(1.0, alpha=1.5)
    with pytest.raises(RuntimeError, match="not fitted"):
        DLPT().value(1.0)
    with pytest.raises(ValueError, match="X must have 3 columns"):
        tiny.theta(np.zeros((2, 4)))
    with pytest.raises(ValueError, match="split must be one of"):
        tiny.learn_policy(split="cross")


def test_leaving_the_tested_range_warns(tiny):
    with pytest.warns(UserWarning, match=r"leaves the tested range \[0.6, 1.4\]"):
        tiny.value(1.6)
    with pytest.warns(UserWarning, match="leaves the tested range"):
        tiny.contrast(lambda X: np.full(X.shape[0], 0.5), 1.0)


def test_extrapolating_policy_warns(tiny):
    with pytest.warns(UserWarning, match="extrapolate=0.2"):
        pol = tiny.learn_policy(split="none", hidden=(4,), extrapolate=0.2)
    assert pol.lo == pytest.approx(0.4) and pol.hi == pytest.approx(1.6)


def test_bad_design_and_simulator_input():
    with pytest.raises(ValueError, match="arms must be distinct"):
        design_report([1.0, 1.0, 2.0], np.ones(3) / 3, 1)
    with pytest.raises(ValueError, match="X must be given"):
        design_report([0.6, 1.0, 1.4], lambda X: X, 2)
    with pytest.raises(ValueError, match="truth must be one of"):
        simulate_rct(10, truth="linear")
    with pytest.raises(ValueError, match="d must be an integer >= 6"):
        simulate_rct(10, d=3)
    with pytest.raises(ValueError, match="noise must be finite"):
        simulate_rct(10, noise=-1.0)
