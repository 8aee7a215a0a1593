"""Acceptance item 1 (equivariance) and item 2 (determinism)."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gse_flow as g


@pytest.fixture(scope="module")
def setup(tiny_model, tiny_windows):
    w = tiny_windows
    graph = w.graph
    attr = jnp.asarray(w.node_attr[0])
    hist = jnp.asarray(w.history[0])
    x_tau = jnp.asarray(w.future[0]) + 0.3 * jax.random.normal(
        jax.random.PRNGKey(1), w.future[0].shape
    )
    fwd = eqx.filter_jit(lambda m, x, h, a, gr: m(x, jnp.float32(0.37), h, a, gr))
    return dict(graph=graph, attr=attr, hist=hist, x=x_tau, fwd=fwd)


def test_velocity_rotation_translation(tiny_model, setup):
    s = setup
    err = g.check_equivariance(
        lambda x, h: s["fwd"](tiny_model, x, h, s["attr"], s["graph"]),
        [s["x"], s["hist"]],
        key=jax.random.PRNGKey(7),
        n_trials=20,
    )
    print(f"[measure] velocity rotation+translation rel err {err:.2e}")
    assert err <= 1e-5, err


def test_velocity_reflection_default_is_e3(tiny_model, setup):
    s = setup
    err = g.check_equivariance(
        lambda x, h: s["fwd"](tiny_model, x, h, s["attr"], s["graph"]),
        [s["x"], s["hist"]],
        key=jax.random.PRNGKey(8),
        n_trials=5,
        reflect=True,
    )
    print(f"[measure] velocity reflection (default E(3)) rel err {err:.2e}")
    assert err <= 1e-5, err


@pytest.mark.slow
def test_chiral_is_se3_not_e3(tiny_kwargs, setup):
    s = setup
    model = g.GSEFlow(key=jax.random.PRNGKey(0), **dict(tiny_kwargs, chiral=True))

    def f(x, h):
        return s["fwd"](model, x, h, s["attr"], s["graph"])

    rot = g.check_equivariance(f, [s["x"], s["hist"]], key=jax.random.PRNGKey(9), n_trials=5)
    refl = g.check_equivariance(
        f, [s["x"], s["hist"]], key=jax.random.PRNGKey(9), n_trials=5, reflect=True
    )
    print(f"[measure] chiral: rotation rel err {rot:.2e}, reflection rel diff {refl:.2e}")
    assert rot <= 1e-5, rot
    assert refl > 1e-2, refl


def test_node_permutation(tiny_model, tiny_windows, setup):
    s = setup
    perm = np.array([2, 0, 3, 1])
    inv = np.argsort(perm)
    v = s["fwd"](tiny_model, s["x"], s["hist"], s["attr"], s["graph"])
    graph_p = g.make_graph(inv[tiny_windows.edges], 4)
    v_p = s["fwd"](tiny_model, s["x"][:, perm], s["hist"][:, perm], s["attr"][perm], graph_p)
    perm_err = float(jnp.max(jnp.abs(v_p - v[:, perm])))
    print(f"[measure] permutation max abs err {perm_err:.2e}")
    assert perm_err <= 1e-6


@pytest.mark.parametrize("solver", ["euler", pytest.param("heun", marks=pytest.mark.slow)])
def test_sampler_equivariance(tiny_model, light_model, setup, solver):
    s = setup
    model = light_model if solver == "euler" else tiny_model  # l <= 1 and l <= 2 networks
    eps = g.centered_noise(jax.random.PRNGKey(3), s["x"].shape)
    run = eqx.filter_jit(
        lambda h, e: g.sample_from_noise(
            model, h, e, node_attr=s["attr"], graph=s["graph"], n_steps=10, solver=solver
        )
    )
    err = g.check_equivariance(
        run, [s["hist"]], [eps], output="point", key=jax.random.PRNGKey(4), n_trials=20
    )
    print(f"[measure] sampler {solver} 10 steps rel err {err:.2e}")
    assert err <= 1e-5, err


@pytest.mark.slow
def test_sampler_equivariance_x64(tiny_kwargs, tiny_windows):
    with jax.enable_x64(True):
        model = g.GSEFlow(key=jax.random.PRNGKey(0), **tiny_kwargs)
        model = jax.tree_util.tree_map(
            lambda a: (
                a.astype(jnp.float64) if isinstance(a, jax.Array) and a.dtype == jnp.float32 else a
            ),
            model,
        )
        graph = tiny_windows.graph
        attr = jnp.asarray(tiny_windows.node_attr[0], jnp.float64)
        hist = jnp.asarray(tiny_windows.history[0], jnp.float64)
        eps = g.centered_noise(jax.random.PRNGKey(3), (4, 4, 3), jnp.float64)
        run = eqx.filter_jit(
            lambda h, e: g.sample_from_noise(model, h, e, node_attr=attr, graph=graph, n_steps=10)
        )
        assert run(hist, eps).dtype == jnp.float64
        err = g.check_equivariance(
            run, [hist], [eps], output="point", key=jax.random.PRNGKey(5), n_trials=5
        )
    print(f"[measure] sampler euler x64 rel err {err:.2e}")
    assert err <= 1e-10, err


def test_same_key_bitwise_identical(light_model, tiny_windows):
    w = tiny_windows
    kw = dict(node_attr=w.node_attr[:3], edges=w.edges, k=3, n_steps=3)
    a = g.sample(light_model, w.history[:3], jax.random.PRNGKey(11), **kw)
    b = g.sample(light_model, w.history[:3], jax.random.PRNGKey(11), **kw)
    c = g.sample(light_model, w.history[:3], jax.random.PRNGKey(12), **kw)
    assert a.shape == (3, 3, 4, 4, 3)
    assert np.array_equal(a, b)
    assert not np.allclose(a, c)
    # the K samples of one window differ from each other too
    assert not np.allclose(a[:, 0], a[:, 1])
