import json
import math

import numpy as np
import pytest

from collab_cp import CollaborativeConformal, OnlineCollaborative, collaborative_metrics
from collab_cp.data import shifting_stream, synthetic_collaboration

EPS, DELTA = 0.05, 0.7


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_acceptance_4_shifting_stream(seed):
    """T = 10,000, human top-1 → top-3 and AI noise doubled at T/2: over the second half both
    branch rates are within 0.01 of (ε, δ); frozen offline thresholds miss a target by > 0.03."""
    s = shifting_stream(10_000, seed=seed)
    online = OnlineCollaborative(EPS, DELTA)
    trace = online.run(s.probs, s.human, s.y)
    harm, rec = trace.branch_rates(5000)
    assert abs(harm - EPS) <= 0.01
    assert abs(rec - DELTA) <= 0.01
    frozen = CollaborativeConformal(EPS, DELTA).conformalize(
        s.probs[:500], s.human[:500], s.y[:500]
    )
    m = collaborative_metrics(
        frozen.predict_set(s.probs[5000:], s.human[5000:]), s.human[5000:], s.y[5000:]
    )
    assert max(abs(m.harm - EPS), abs(m.recovery - DELTA)) > 0.03


def _adversarial(kind, T, rng):
    if kind == "random":
        return rng.random(T), rng.random(T) < 0.5
    if kind == "always_miss":
        return np.full(T, 50.0), rng.random(T) < 0.3
    if kind == "alternating":
        return np.where(np.arange(T) % 2 == 0, 0.0, 1.0), (np.arange(T) // 3) % 2 == 0
    if kind == "bursts":  # branch frequencies swing in long blocks
        inside = (np.arange(T) // 700) % 2 == 0
        return np.where(inside, rng.random(T) * 5, rng.random(T) ** 3), inside
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["random", "always_miss", "alternating", "bursts"])
def test_certified_rate_bounds_hold_on_any_sequence(kind):
    """The summation-by-parts certificate |rate − target| ≤ R(c_1 + c_m + TV(c))/(2m) holds on
    adversarial sequences, and shrinks as the stream grows."""
    rng = np.random.default_rng(7)
    scores, inside = _adversarial(kind, 6000, rng)
    online = OnlineCollaborative(EPS, DELTA, eta=0.05, prune=0.0, augment=0.0)
    bounds = []
    for chunk in range(3):
        for s, i in zip(
            scores[chunk * 2000 : (chunk + 1) * 2000], inside[chunk * 2000 : (chunk + 1) * 2000]
        ):
            online.update_score(s, i)
        harm, rec = online.rates()
        b_in, b_out = online.rate_bounds()
        assert abs(harm - EPS) <= b_in + 1e-12
        assert abs(rec - DELTA) <= b_out + 1e-12
        bounds.append(b_in + b_out)
    assert math.isfinite(bounds[-1]) and bounds[-1] < bounds[0]


def test_stationary_long_run_rates():
    d = synthetic_collaboration(20_000, "top_k", k=2, seed=4)
    online = OnlineCollaborative(EPS, DELTA)
    online.run(d.probs, d.human, d.y)
    harm, rec = online.rates()
    b_in, b_out = online.rate_bounds()
    assert abs(harm - EPS) <= min(b_in, 0.01)
    assert abs(rec - DELTA) <= min(b_out, 0.02)


def test_checkpoint_resume_is_bit_identical():
    s = shifting_stream(2000, seed=3)
    full = OnlineCollaborative(EPS, DELTA, eta=0.03)
    whole = full.run(s.probs, s.human, s.y)
    first = OnlineCollaborative(EPS, DELTA, eta=0.03)
    a = first.run(s.probs[:777], s.human[:777], s.y[:777])
    text = first.to_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in the checkpoint"))
    resumed = OnlineCollaborative.from_json(text)
    b = resumed.run(s.probs[777:], s.human[777:], s.y[777:])
    assert np.array_equal(np.concatenate([a.prune, b.prune]), whole.prune)
    assert np.array_equal(np.concatenate([a.augment, b.augment]), whole.augment)
    assert np.array_equal(np.concatenate([a.sets, b.sets]), whole.sets)
    assert resumed.state == full.state
    assert resumed.rate_bounds() == full.rate_bounds()


def test_single_step_update_matches_run():
    s = shifting_stream(300, seed=5)
    batch = OnlineCollaborative(EPS, DELTA).run(s.probs, s.human, s.y)
    step = OnlineCollaborative(EPS, DELTA)
    for t in range(300):
        labels = np.flatnonzero(s.human[t]).tolist()
        before = step.predict_set(s.probs[t : t + 1], s.human[t : t + 1])[0]
        out = step.update(s.probs[t], labels if t % 2 else s.human[t], int(s.y[t]))
        assert np.array_equal(out, before)
        assert np.array_equal(out, batch.sets[t])


def test_from_offline_warm_start_and_recursion_direction():
    d = synthetic_collaboration(1000, "top_k", k=2, seed=6)
    off = CollaborativeConformal(EPS, DELTA).conformalize(d.probs, d.human, d.y)
    on = OnlineCollaborative.from_offline(off, eta=0.01)
    assert (on.state.prune, on.state.augment) == (off.prune_threshold_, off.augment_threshold_)
    b0 = on.state.prune
    on.update_score(b0 + 1.0, True)  # a miss inside H raises b by η(1−ε)/π̂
    assert on.state.prune == pytest.approx(b0 + 0.01 * (1 - EPS) / max(0.05, 1 / 2))
    a0 = on.state.augment
    on.update_score(a0 - 1.0, False)  # a recovery outside H lowers a by η(1−δ)/π̂
    assert on.state.augment == pytest.approx(a0 - 0.01 * (1 - DELTA) / max(0.05, 1 / 3))


def test_fresh_learner_checkpoint_is_strict_json():
    # an unvisited branch holds lo=inf, hi=-inf, c_first=nan: all encoded explicitly
    import json

    fresh = OnlineCollaborative(EPS, DELTA)
    text = fresh.to_json()
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in the checkpoint"))
    back = OnlineCollaborative.from_json(text)
    assert back.state.inside.lo == math.inf and math.isnan(back.state.inside.c_first)


@pytest.mark.parametrize(
    ("field", "kwargs"),
    [
        ("eta", {"eta": 0.5}),
        ("epsilon", {"epsilon": 0.1}),
        ("score", {"score": "aps"}),
        ("pi_floor", {"pi_floor": 0.2}),
    ],
)
def test_state_saved_with_other_hyperparameters_is_refused_naming_the_field(field, kwargs):
    s = shifting_stream(200, seed=4)
    saved = OnlineCollaborative(EPS, DELTA, eta=0.03)
    saved.run(s.probs, s.human, s.y)
    cfg = {"epsilon": EPS, "delta": DELTA, "eta": 0.03, **kwargs}
    other = OnlineCollaborative(cfg.pop("epsilon"), cfg.pop("delta"), **cfg)
    with pytest.raises(
        ValueError, match=rf"saved with {field}=.*but this OnlineCollaborative has {field}="
    ):
        other.load_state_dict(saved.state_dict())
    same = OnlineCollaborative(EPS, DELTA, eta=0.03).load_state_dict(saved.state_dict())
    assert same.state == saved.state


def test_deprecated_checkpoint_names_still_work():
    s = shifting_stream(200, seed=4)
    o = OnlineCollaborative(EPS, DELTA)
    o.run(s.probs, s.human, s.y)
    with pytest.warns(DeprecationWarning, match="checkpoint is deprecated"):
        data = o.checkpoint()
    with pytest.warns(DeprecationWarning, match="from_checkpoint is deprecated"):
        back = OnlineCollaborative.from_checkpoint(data)
    assert back.state == o.state


def test_update_with_a_batch_row_names_the_shape():
    s = shifting_stream(10, seed=4)
    with pytest.raises(
        ValueError,
        match=r"probs must be one probability vector of shape \(K,\) for update\(\), got shape \(2, 10\)",
    ):
        OnlineCollaborative(EPS, DELTA).update(s.probs[:2], [0], 0)
