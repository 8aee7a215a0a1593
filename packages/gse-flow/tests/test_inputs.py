"""Issue 14, item 4: bad inputs to the key-taking functions and the direct model call."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import gse_flow as g


@pytest.mark.parametrize("bad", [0, np.zeros(2, np.float32), np.zeros(3, np.uint32), "key"])
def test_key_that_is_not_a_key_names_the_argument(light_model, tiny_windows, bad):
    h = tiny_windows.history[0]
    with pytest.raises(TypeError, match="key must be a JAX PRNG key"):
        g.sample(light_model, h, bad)
    with pytest.raises(TypeError, match="key must be a JAX PRNG key"):
        g.train(light_model, tiny_windows, optax.adam(1e-3), 1, key=bad, batch_size=4)
    with pytest.raises(TypeError, match="key must be a JAX PRNG key"):
        g.GSEFlow(n_history=3, n_future=4, key=bad)
    with pytest.raises(TypeError, match="key must be a JAX PRNG key"):
        g.flow_matching_loss(light_model, tiny_windows.take(np.arange(2)), bad)
    with pytest.raises(TypeError, match="key must be a JAX PRNG key"):
        g.noise_pass_through(light_model, tiny_windows.take(np.arange(2)), bad, n_steps=1)
    with pytest.raises(TypeError, match="key must be a JAX PRNG key"):
        g.EGNN(n_history=3, n_future=4, hidden=8, n_layers=1, key=bad)
    with pytest.raises(TypeError, match="key must be a JAX PRNG key"):
        g.check_equivariance(lambda x: x, [np.ones((4, 3))], key=bad, n_trials=1)


def test_typed_and_raw_keys_accepted(light_model, tiny_windows):
    h = tiny_windows.history[0]
    a = g.sample(light_model, h, jax.random.key(0), k=2, n_steps=1)
    b = g.sample(light_model, h, jax.random.PRNGKey(0), k=2, n_steps=1)
    assert a.shape == b.shape == (2, 4, 4, 3)


def _direct(model, windows, history=None, x_tau=None, n_graph=None):
    hist = jnp.asarray(windows.history[0] if history is None else history)
    n = hist.shape[1]
    graph = g.make_graph(
        g.fully_connected_edges(n if n_graph is None else n_graph),
        n if n_graph is None else n_graph,
    )
    x = jnp.asarray(windows.future[0] if x_tau is None else x_tau)
    attr = jnp.ones((n, 1))
    return model(x, jnp.asarray(0.3), hist, attr, graph)


def test_direct_call_works(light_model, tiny_windows):
    v = _direct(light_model, tiny_windows)
    assert v.shape == (4, 4, 3) and np.all(np.isfinite(np.asarray(v)))


@pytest.mark.parametrize("n_graph", [3, 5])
def test_history_node_count_differs_from_graph(light_model, tiny_windows, n_graph):
    with pytest.raises(ValueError, match=f"history has 4 nodes but graph has {n_graph}"):
        _direct(light_model, tiny_windows, n_graph=n_graph)


@pytest.mark.parametrize("n_frames", [3, 5])
def test_direct_call_future_length_must_be_n_future(light_model, tiny_windows, n_frames):
    x = np.zeros((n_frames, 4, 3), np.float32)
    with pytest.raises(ValueError, match=r"x_tau must have shape \(4, 4, 3\) \(n_future=4\)"):
        _direct(light_model, tiny_windows, x_tau=x)


@pytest.mark.parametrize("where", ["x_tau", "history"])
def test_nan_through_direct_call_raises(light_model, tiny_windows, where):
    hist = np.array(tiny_windows.history[0])
    x = np.array(tiny_windows.future[0])
    (x if where == "x_tau" else hist)[1, 2, 0] = np.nan
    with pytest.raises(ValueError, match=f"{where} must be finite, got NaN or inf"):
        _direct(light_model, tiny_windows, history=hist, x_tau=x)


def test_bad_parametrization_and_floor():
    with pytest.raises(
        ValueError, match="parametrization must be one of 'x1', 'x1-plain', 'velocity'"
    ):
        g.GSEFlow(parametrization="eps", key=jax.random.PRNGKey(0))
    with pytest.raises(ValueError, match="tau_floor must be in"):
        g.GSEFlow(tau_floor=1.5, key=jax.random.PRNGKey(0))
    for bad in (0.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match="data_scale must be in"):
            g.GSEFlow(data_scale=bad, key=jax.random.PRNGKey(0))
