"""Public surface, the OnlineConformal object, checkpoints and bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import up_ocp
from up_ocp import METHODS, OnlineConformal, _up, make_algorithm, run_algorithm

EXPECTED_ALL = [
    "METHODS", "OnlineAlgorithm", "OnlineConformal", "UPState", "baselines", "coverage_bound",
    "data", "make_algorithm", "run_algorithm", "run_up_jax", "up_grid", "up_ocp",
]  # fmt: skip
EXPECTED_BASELINES = [
    "DEFAULT_DTACI_GAMMAS", "ONLINE_CONFORMAL_METHODS", "aci", "compare_methods", "conformal_pid",
    "decaying_ogd", "dtaci", "interval_summary", "kt_aci", "online_conformal_available",
    "online_conformal_thresholds", "quantile_tracking", "saocp", "sf_ogd",
]  # fmt: skip
# public names of the submodules only (never top-level, so no deprecated alias)
SUBMODULE_ONLY = {
    "compare_methods",
    "interval_summary",
    "online_conformal_available",
    "online_conformal_thresholds",
}
EXPECTED_DATA = [
    "REAL_SERIES", "RETURN_SERIES", "ar_residuals", "forecast_residuals", "load_csv_series",
    "load_returns", "load_series", "load_sp500_returns",
]  # fmt: skip


def test_public_all_is_exact():
    assert sorted(up_ocp.__all__) == sorted(EXPECTED_ALL)
    assert sorted(up_ocp.baselines.__all__) == EXPECTED_BASELINES
    assert sorted(up_ocp.data.__all__) == EXPECTED_DATA
    for module in (up_ocp, up_ocp.baselines, up_ocp.data):
        for name in module.__all__:
            assert hasattr(module, name)


@pytest.mark.parametrize(
    "name",
    [
        *(n for n in EXPECTED_BASELINES if n.islower() and n not in SUBMODULE_ONLY),
        "forecast_residuals",
        "load_csv_series",
        "load_returns",
        "init",
        "update",
        "cover_fraction",
        "cover_log_wealth",
        "kl_bernoulli",
        "kt_fraction",
        "conformal_quantile",
    ],
)
def test_old_top_level_names_are_deprecated_aliases(name):
    with pytest.warns(DeprecationWarning, match=rf"up_ocp\.{name} is deprecated.*0\.2: use "):
        obj = getattr(up_ocp, name)
    assert callable(obj)
    if name in EXPECTED_BASELINES:
        assert obj is getattr(up_ocp.baselines, name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        up_ocp.nope


def test_deprecated_alpha_keyword_still_works_with_a_warning():
    s = np.abs(np.random.default_rng(0).standard_normal((2, 200)))
    with pytest.warns(DeprecationWarning, match=r"OnlineConformal\(alpha=...\) is deprecated"):
        old = OnlineConformal("aci", alpha=0.1, gamma=0.01)
    assert old.alpha == 0.1 and old.confidence_level == pytest.approx(0.9)
    new = OnlineConformal("aci", confidence_level=0.9, gamma=0.01)
    np.testing.assert_allclose(old.run(s), new.run(s), rtol=0, atol=1e-12)
    with pytest.raises(TypeError, match="not both"):
        OnlineConformal("up", confidence_level=0.9, alpha=0.1)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match=r"alpha must be in"):
        OnlineConformal("up", alpha=1.5)


def test_deprecated_conformal_quantile_keeps_its_old_meaning():
    ref = np.sort(np.random.default_rng(1).normal(size=(2, 30)), axis=-1)
    with pytest.warns(DeprecationWarning):
        old = up_ocp.conformal_quantile
    k = int(np.ceil(0.9 * 31))
    np.testing.assert_array_equal(old(ref, 0.1), ref[:, k - 1])


def test_state_saved_with_other_hyperparameters_is_refused_naming_the_field():
    s = np.abs(np.random.default_rng(2).standard_normal(50))
    saved = OnlineConformal("aci", confidence_level=0.9, gamma=0.5)
    saved.run(s)
    with pytest.raises(
        ValueError,
        match=r"saved with params.gamma=0.5, but this OnlineConformal has params.gamma=0.001",
    ):
        OnlineConformal("aci", confidence_level=0.9, gamma=0.001).load_state_dict(
            saved.state_dict()
        )
    with pytest.raises(
        ValueError, match=r"saved with confidence_level=0.9, but .* has confidence_level=0.8"
    ):
        OnlineConformal("aci", confidence_level=0.8, gamma=0.5).load_state_dict(saved.state_dict())
    with pytest.raises(ValueError, match=r"saved with two_sided=False"):
        OnlineConformal("aci", confidence_level=0.9, two_sided=True, gamma=0.5).load_state_dict(
            saved.state_dict()
        )
    OnlineConformal("aci", confidence_level=0.9, gamma=0.5).load_state_dict(saved.state_dict())


@pytest.mark.parametrize("method", ["up", "aci", "dtaci", "saocp"])
def test_json_checkpoint_is_strict_and_resumes_bit_exactly(method):
    import json

    s = np.abs(np.random.default_rng(3).standard_normal((2, 120)))
    s[0, 5] = np.inf  # an infinite score (a miss) is legal and may put inf into the state
    full = OnlineConformal(method, confidence_level=0.9).run(s)
    first = OnlineConformal(method, confidence_level=0.9)
    first.run(s[:, :60])
    text = first.to_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in the checkpoint"))
    resumed = OnlineConformal.from_json(text)
    np.testing.assert_array_equal(resumed.run(s[:, 60:]), full[:, 60:])


def test_coverage_bound_rejects_mismatched_lengths_clearly():
    with pytest.raises(
        ValueError,
        match=r"scores and thresholds must have the same shape .* got \(10,\) and \(9,\)",
    ):
        up_ocp.coverage_bound(np.ones(10), np.ones(9), 0.1)
    with pytest.raises(ValueError, match="scores must be finite, got nan"):
        up_ocp.coverage_bound([np.nan, 1.0], [1.0, 1.0], 0.1)


def test_complex_scores_are_rejected():
    with pytest.raises(TypeError, match="scores must be real-valued"):
        OnlineConformal("up").run(np.ones(10) + 1j)
    with pytest.raises(TypeError, match="real"):
        OnlineConformal("up", confidence_level=0.9 + 0j)


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
    q_run = OnlineConformal(method, confidence_level=0.9).run(s)
    assert q_run.shape == s.shape and q_run.dtype == np.float64
    oc = OnlineConformal(method, confidence_level=0.9).reset(s.shape[:1])
    steps = []
    for t in range(s.shape[1]):
        steps.append(oc.threshold)
        oc.update_score(s[:, t])
    np.testing.assert_array_equal(np.stack(steps, axis=-1), q_run)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_checkpoint_resume_is_bit_exact(method, change_point_small):
    s = change_point_small
    full = OnlineConformal(method, confidence_level=0.9).run(s)
    first = OnlineConformal(method, confidence_level=0.9)
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
    oc = OnlineConformal("up", confidence_level=0.9)
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
    q = OnlineConformal("up", confidence_level=0.9, two_sided=True).run(r)
    assert q.shape == (2, 2, 4000)
    miss_lo = (-r > q[0]).mean()
    miss_hi = (r > q[1]).mean()
    assert abs(miss_lo - 0.05) <= 0.02 and abs(miss_hi - 0.05) <= 0.02
    assert q[1, :, 2000:].mean() > q[0, :, 2000:].mean() + 1.0  # shifted upward by the bias
    oc = OnlineConformal("aci", confidence_level=0.9, two_sided=True, gamma=0.01)
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
            lambda: OnlineConformal("up", confidence_level=1.5),
            ValueError,
            r"confidence_level must be in \(0, 1\), got 1.5",
        ),
        (
            lambda: OnlineConformal("up", confidence_level=0.0),
            ValueError,
            "confidence_level must be in",
        ),
        (lambda: OnlineConformal("up", 0.9), TypeError, "positional argument"),
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
            lambda: _up.init(0.1).__class__ and _up.update(_up.init(0.1, shape=3), np.ones(4)),
            ValueError,
            r"score must have the stream batch shape \(3,\), got \(4,\)",
        ),
        (
            lambda: _up.update(_up.init(0.1, shape=2), np.array([1.0, np.nan])),
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
    with pytest.raises(
        ValueError,
        match="state was saved with method='aci', but this OnlineConformal has method='up'",
    ):
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

    from up_ocp import _estimator, _up

    for module in (_estimator, _up):
        result = doctest.testmod(module, extraglobs={"np": np})
        assert result.attempted > 0 and result.failed == 0
