"""Public surface, the OnlineConformal object, checkpoints and bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import up_ocp
from up_ocp import METHODS, OnlineConformal, make_algorithm, run_algorithm

EXPECTED_ALL = [
    "METHODS",
    "OnlineAlgorithm",
    "OnlineConformal",
    "UPState",
    "aci",
    "conformal_pid",
    "conformal_quantile",
    "cover_fraction",
    "cover_log_wealth",
    "coverage_bound",
    "decaying_ogd",
    "dtaci",
    "forecast_residuals",
    "init",
    "kl_bernoulli",
    "kt_aci",
    "kt_fraction",
    "load_csv_series",
    "load_returns",
    "make_algorithm",
    "quantile_tracking",
    "run_algorithm",
    "run_up_jax",
    "saocp",
    "sf_ogd",
    "up_grid",
    "up_ocp",
    "update",
]


def test_public_all_is_exact():
    assert sorted(up_ocp.__all__) == sorted(EXPECTED_ALL)
    for name in up_ocp.__all__:
        assert hasattr(up_ocp, name)


def test_registry_names():
    assert set(METHODS) == {
        "up",
        "up_grid",
        "aci",
        "dtaci",
        "quantile_tracking",
        "pid",
        "sf_ogd",
        "saocp",
        "decaying_ogd",
        "kt_aci",
    }


@pytest.mark.parametrize("method", sorted(METHODS))
def test_run_equals_step_by_step(method, change_point_small):
    s = change_point_small[:, :300]
    q_run = OnlineConformal(method, alpha=0.1).run(s)
    assert q_run.shape == s.shape and q_run.dtype == np.float64
    oc = OnlineConformal(method, alpha=0.1).reset(s.shape[:1])
    steps = []
    for t in range(s.shape[1]):
        steps.append(oc.threshold)
        oc.update_score(s[:, t])
    np.testing.assert_array_equal(np.stack(steps, axis=-1), q_run)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_checkpoint_resume_is_bit_exact(method, change_point_small):
    s = change_point_small
    full = OnlineConformal(method, alpha=0.1).run(s)
    first = OnlineConformal(method, alpha=0.1)
    head = first.run(s[:, :250])
    blob = pickle.dumps(first.state_dict())
    resumed = OnlineConformal.from_state_dict(pickle.loads(blob))
    tail = resumed.run(s[:, 250:])
    np.testing.assert_array_equal(np.concatenate([head, tail], axis=-1), full)


def test_streams_are_independent(change_point_small):
    s = change_point_small
    both = OnlineConformal("up").run(s)
    one = OnlineConformal("up").run(s[1])
    np.testing.assert_array_equal(both[1], one)


def test_predict_interval_update_cycle():
    rng = np.random.default_rng(0)
    oc = OnlineConformal("up", alpha=0.1)
    covered = []
    for _ in range(3000):
        y_hat = rng.normal(size=2)
        lo, hi = oc.predict_interval(y_hat)
        y = y_hat + rng.normal(size=2)
        covered.append((lo <= y) & (y <= hi))
        oc.update(y)
    miss = 1 - np.mean(covered)
    assert abs(miss - 0.1) <= 0.03


def test_two_sided_interval_and_run():
    rng = np.random.default_rng(1)
    r = rng.normal(loc=1.0, size=(2, 4000))  # biased residuals: asymmetric interval expected
    q = OnlineConformal("up", alpha=0.1, two_sided=True).run(r)
    assert q.shape == (2, 2, 4000)
    miss_lo = (-r > q[0]).mean()
    miss_hi = (r > q[1]).mean()
    assert abs(miss_lo - 0.05) <= 0.02 and abs(miss_hi - 0.05) <= 0.02
    assert q[1, :, 2000:].mean() > q[0, :, 2000:].mean() + 1.0  # shifted upward by the bias
    oc = OnlineConformal("aci", alpha=0.1, two_sided=True, gamma=0.01)
    lo, hi = oc.predict_interval(np.zeros(3))
    assert lo.shape == hi.shape == (3,)


def test_make_algorithm_is_a_pure_pair(change_point_small):
    algo = make_algorithm("up", 0.1, eps=2.0)
    q1, _ = run_algorithm(algo, change_point_small)
    q2, _ = run_algorithm(algo, change_point_small)
    np.testing.assert_array_equal(q1, q2)


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (
            lambda: OnlineConformal("up", alpha=1.5),
            ValueError,
            r"alpha must be in \(0, 1\), got 1.5",
        ),
        (lambda: OnlineConformal("up", alpha=0.0), ValueError, "alpha must be in"),
        (lambda: OnlineConformal("nope"), ValueError, "method must be one of"),
        (
            lambda: OnlineConformal("up", eps=-1.0),
            ValueError,
            "eps must be finite and > 0, got -1.0",
        ),
        (lambda: OnlineConformal("up", eps=0.0), ValueError, "eps must be finite and > 0"),
        (lambda: OnlineConformal("up").run([]), ValueError, "scores must not be empty"),
        (
            lambda: OnlineConformal("up").run([[1.0, np.nan, 2.0]]),
            ValueError,
            r"scores must be finite, got nan at index \(0, 1\)",
        ),
        (lambda: OnlineConformal("up").run(3.0), ValueError, "time axis"),
        (
            lambda: OnlineConformal("up").update([1.0]),
            ValueError,
            "needs a previous predict_interval",
        ),
        (lambda: OnlineConformal("up").threshold, ValueError, "threshold needs a state"),
        (lambda: OnlineConformal("up", gamma=0.1), TypeError, "unknown parameter"),
        (lambda: OnlineConformal("aci", gamma=-0.1), ValueError, "gamma must be >= 0"),
        (
            lambda: (
                up_ocp.init(0.1).__class__ and up_ocp.update(up_ocp.init(0.1, shape=3), np.ones(4))
            ),
            ValueError,
            r"score must have the stream batch shape \(3,\), got \(4,\)",
        ),
        (
            lambda: up_ocp.update(up_ocp.init(0.1, shape=2), np.array([1.0, np.nan])),
            ValueError,
            r"score must not be NaN, got nan at index \(1,\)",
        ),
    ],
)
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_mismatched_stream_shapes_and_state():
    oc = OnlineConformal("up")
    oc.run(np.ones((3, 10)))
    with pytest.raises(ValueError, match=r"batch shape \(3,\) of the running state, got \(4,\)"):
        oc.run(np.ones((4, 10)))
    with pytest.raises(ValueError, match="state_dict method must be 'up', got 'aci'"):
        OnlineConformal("up").load_state_dict(OnlineConformal("aci").state_dict())
    oc2 = OnlineConformal("up")
    oc2.predict_interval(np.zeros(2))
    with pytest.raises(ValueError, match=r"y_true must have the shape \(2,\) of y_hat, got \(3,\)"):
        oc2.update(np.zeros(3))


def test_infinite_scores_are_misses():
    q = OnlineConformal("up").run(np.full(5, np.inf))
    assert np.all(np.isfinite(q)) and np.all(np.diff(q) > 0)  # every round a miss: q grows


def test_docstring_examples_run():
    import doctest

    from up_ocp import _api, _up

    for module in (_api, _up):
        result = doctest.testmod(module, extraglobs={"np": np})
        assert result.attempted > 0 and result.failed == 0
