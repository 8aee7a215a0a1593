"""One seed rule, progress lines when piped, and bad input refused (not a silent answer)."""

from __future__ import annotations

import jax
import numpy as np
import optax
import pytest

import gse_flow as g
from icml26_shared.testing import assert_follows_seed_rule


def _seed(s):
    return np.random.default_rng(0) if s == "generator" else s


def _oof(seed):
    w = g.nbody_windows(4, n_history=3, n_future=2, n_particles=3, seed=0)
    return g.out_of_fold(lambda tr: lambda v: v.future, w, seed=seed)


ENTRY_POINTS = {
    "nbody_windows": lambda s: g.nbody_windows(2, n_history=3, n_future=2, seed=s),
    "toy_md": lambda s: g.toy_md(1, 3, steps_per_frame=1, seed=s),
    "toy_md_windows": lambda s: g.toy_md_windows(1, n_history=2, n_future=1, seed=s),
    "out_of_fold": _oof,
}


@pytest.mark.parametrize("fn", ENTRY_POINTS, ids=str)
def test_seed_rule(fn):
    assert_follows_seed_rule(ENTRY_POINTS[fn])


def test_numpy_integer_seed_is_the_int_seed():
    a = g.toy_md(1, 3, steps_per_frame=1, seed=5)[0]
    b = g.toy_md(1, 3, steps_per_frame=1, seed=np.int64(5))[0]
    np.testing.assert_array_equal(a, b)


def test_lj13_seed_is_checked_before_the_simulation():
    pytest.importorskip("ase")
    with pytest.raises(TypeError, match="seed must be"):
        g.lj13_trajectory(2, burn_in=0, seed="1")
    with pytest.raises(ValueError, match="seed must be"):
        g.lj13_windows(2, n_history=2, n_future=1, seed=-2)


def test_train_refuses_windows_of_other_lengths(light_model):
    w = g.nbody_windows(4, n_history=5, n_future=4, n_particles=4, seed=0)
    with pytest.raises(ValueError, match="n_history = 3"):
        g.train(light_model, w, optax.adam(1e-3), 1, key=jax.random.PRNGKey(0), batch_size=2)
    w = g.nbody_windows(4, n_history=3, n_future=6, n_particles=4, seed=0)
    with pytest.raises(ValueError, match="n_future = 4"):
        g.train(light_model, w, optax.adam(1e-3), 1, key=jax.random.PRNGKey(0), batch_size=2)
    with pytest.raises(TypeError, match=r"data must be gse_flow\.Windows"):
        g.train(light_model, w.history, optax.adam(1e-3), 1, key=jax.random.PRNGKey(0))


def test_predict_refuses_windows_of_another_history_length():
    model = g.EGNN(n_history=3, n_future=4, hidden=8, n_layers=1, key=jax.random.key(0))
    w = g.nbody_windows(2, n_history=5, n_future=4, n_particles=4, seed=0)
    with pytest.raises(ValueError, match="n_history = 3"):
        g.predict(model, w)


def test_diverged_loss_warns():
    from gse_flow._train import _warn_if_diverged

    with pytest.warns(RuntimeWarning, match="training diverged"):
        _warn_if_diverged(np.array([1.0, 0.5, np.nan, np.nan]))


def test_train_and_sample_print_a_line_per_stage_when_piped(light_model, tiny_windows, capsys):
    egnn = g.EGNN(n_history=3, n_future=4, hidden=8, n_layers=1, key=jax.random.key(0))
    g.train(
        egnn,
        tiny_windows,
        optax.sgd(1e-3),
        2,
        key=jax.random.PRNGKey(0),
        loss_fn=g.mse_loss,
        batch_size=4,
    )
    h = tiny_windows.history[0]  # the call of test_inputs: compiled once per session
    g.sample(light_model, h, jax.random.key(0), k=2, n_steps=1)
    err = capsys.readouterr().err
    assert "train: 2 steps" in err and "train: done" in err
    assert "sample: 1 window(s) x 2 futures" in err and "done in" in err
    g.sample(light_model, h, jax.random.key(0), k=2, n_steps=1, progress=False)
    assert capsys.readouterr().err == ""


def test_history_window_below_one_refused(tiny_kwargs):
    with pytest.raises(ValueError, match="history_window"):
        g.GSEFlow(key=jax.random.PRNGKey(0), history_window=0, **tiny_kwargs)


@pytest.mark.parametrize("text", ["", "hello world\n1 2 3\n", '{"gamma": 0.5}'])
def test_parse_asf_refuses_text_without_bones(text):
    with pytest.raises(ValueError, match="ASF skeleton"):
        g.parse_asf(text)
