"""Trainer, baselines, enhance mode and data-parallel training (acceptance item 8)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import gse_flow as g
from gse_flow._model import precondition


def test_flow_training_reduces_loss(light_model, tiny_windows):
    res = g.train(
        light_model, tiny_windows, optax.adam(3e-3), 40, key=jax.random.PRNGKey(0), batch_size=8
    )
    assert res.losses.shape == (40,) and np.isfinite(res.losses).all()
    assert res.losses[-10:].mean() < 0.8 * res.losses[:10].mean()


def test_egnn_is_equivariant_and_trains(tiny_windows):
    w = tiny_windows
    model = g.EGNN(
        n_history=3, n_future=4, hidden=16, n_layers=2, length_scale=0.05, key=jax.random.PRNGKey(1)
    )
    # starts at constant velocity
    np.testing.assert_allclose(g.predict(model, w), g.constant_velocity(w.history, 4), atol=1e-2)
    graph, attr = w.graph, jnp.asarray(w.node_attr[0])
    err = g.check_equivariance(
        lambda h: model.predict(h, attr, graph),
        [jnp.asarray(w.history[0])],
        output="point",
        key=jax.random.PRNGKey(2),
        n_trials=5,
        reflect=True,
    )
    assert err <= 1e-5
    res = g.train(
        model, w, optax.adam(1e-3), 30, key=jax.random.PRNGKey(0), batch_size=8, loss_fn=g.mse_loss
    )
    assert res.losses[-5:].mean() < res.losses[:5].mean()


def test_enhance_sets_prior_and_sigma(tiny_windows):
    w = tiny_windows

    def cv(ww):
        return g.constant_velocity(ww.history, 4)

    out, sigma = g.enhance(cv, w)
    np.testing.assert_allclose(out.prior_mean, cv(w), rtol=1e-6)
    assert sigma == pytest.approx(np.sqrt(np.mean((w.future - cv(w)) ** 2)), rel=1e-5)
    assert g.prior_scale(out) == pytest.approx(sigma, rel=1e-5)


_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import jax, jax.numpy as jnp, numpy as np, optax, equinox as eqx
    import gse_flow as g
    assert jax.device_count() == 2, jax.devices()
    w = g.nbody_windows(16, n_history=3, n_future=4, n_particles=4, seed=5)
    model = g.GSEFlow(n_history=3, n_future=4, irreps_hidden="8x0e+4x1o", sh_lmax=1, n_layers=2,
                      sigma=0.5, cutoff=6.0, key=jax.random.PRNGKey(0))
    opt = optax.sgd(0.05)
    mesh = g.data_mesh(2)
    key = jax.random.PRNGKey(3)
    flat = lambda m: np.concatenate([np.ravel(x) for x in jax.tree_util.tree_leaves(eqx.filter(m, eqx.is_inexact_array))])
    p0 = flat(model)
    one = g.train(model, w, opt, 1, key=key, batch_size=8)
    two = g.train(model, w, opt, 1, key=key, batch_size=8, mesh=mesh)
    g1, g2 = (p0 - flat(one.model)) / 0.05, (p0 - flat(two.model)) / 0.05
    one20 = g.train(model, w, opt, 20, key=key, batch_size=8)
    two20 = g.train(model, w, opt, 20, key=key, batch_size=8, mesh=mesh)
    shard = two20.model.future_layers[0].query.weight.sharding
    print(json.dumps({
        "loss_rel": abs(one.losses[0] - two.losses[0]) / abs(one.losses[0]),
        "grad_rel": float(np.linalg.norm(g1 - g2) / np.linalg.norm(g1)),
        "param_rel_20": float(np.linalg.norm(flat(one20.model) - flat(two20.model)) / np.linalg.norm(flat(one20.model))),
        "replicated": bool(shard.is_fully_replicated),
        "n_devices": len(shard.device_set),
    }))
    """
)


@pytest.mark.slow
def test_two_device_data_parallel_equals_one_device():
    env = dict(
        os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2", JAX_PLATFORMS="cpu"
    )
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=900
    )
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    print(f"[measure] data parallel: {res}")
    assert res["n_devices"] == 2 and res["replicated"]
    assert res["loss_rel"] <= 1e-6
    assert res["grad_rel"] <= 1e-6
    assert res["param_rel_20"] <= 1e-5


def test_reproduce_matches_parameter_counts():
    from gse_flow._reproduce import _matched_egnn

    w = g.nbody_windows(32, seed=0)
    kw = g.flow_config(w, "last", sigma=g.prior_scale(w))
    vel = kw["length_scale"]
    flow = g.GSEFlow(key=jax.random.PRNGKey(0), **kw)
    det = g.EquivariantGNN(key=jax.random.PRNGKey(0), **kw)
    egnn = _matched_egnn(g.count_parameters(flow), kw, vel, jax.random.PRNGKey(1))
    n = g.count_parameters(flow)
    assert g.count_parameters(det) == n
    assert abs(g.count_parameters(egnn) - n) <= 0.2 * n
    # issue 14: one length-scale rule for every model (√3 × RMS frame displacement)
    disp = np.sqrt(np.mean(np.diff(w.history, axis=1) ** 2)) * np.sqrt(3)
    assert vel == pytest.approx(disp, rel=1e-6) and vel != 1.0
    assert flow.length_scale == det.net.length_scale == egnn.length_scale == vel


@pytest.mark.parametrize("rho", [1.0, pytest.param(0.25, marks=pytest.mark.slow)])  # 11 s each
def test_untrained_pass_through_is_the_skip_gain(tiny_kwargs, tiny_windows, rho):
    """With a zero readout the ``"x1"`` sampler passes exactly ∏(1 + h a(τ_i)) of the prior
    noise: 0 after 1 Euler step, then growing with the steps towards ρ (ρ = 1: 0.88 at 10
    steps, the trained flow's error rising with steps; ρ = 0.25: 0.20)."""
    kw = dict(tiny_kwargs, irreps_hidden="8x0e+4x1o", sh_lmax=1)
    model = g.GSEFlow(key=jax.random.PRNGKey(0), readout_init=0.0, data_scale=rho, **kw)
    w = tiny_windows.take(np.arange(4))
    for n in (1, 10):
        t = np.arange(n) / n
        a = np.asarray(precondition(jnp.asarray(t), rho)[0])
        expected = abs(float(np.prod(1.0 + a / n)))
        got = g.noise_pass_through(model, w, jax.random.PRNGKey(5), n_steps=n)
        assert got == pytest.approx(expected, abs=1e-5), (n, got, expected)


@pytest.mark.slow  # about 40 CPU-seconds: over the default suite's budget
@pytest.mark.parametrize("rho", [1.0, 0.25])
def test_trained_sampler_noise_pass_through_is_small(tiny_kwargs, rho):
    """The x1-parametrised flow, briefly trained, no longer carries the prior noise through
    (the velocity-parametrised first version kept 0.57 of it after 1 Euler step, 0.72 after
    10, on N-body)."""
    w = g.nbody_windows(32, n_history=3, n_future=4, n_particles=4, seed=3)
    vs = float(np.sqrt(np.mean(np.diff(w.history, axis=1) ** 2)) * np.sqrt(3))
    kw = dict(tiny_kwargs, irreps_hidden="8x0e+4x1o", sh_lmax=1, sigma=g.prior_scale(w))
    model = g.GSEFlow(key=jax.random.PRNGKey(0), length_scale=vs, data_scale=rho, **kw)
    sub = w.take(np.arange(8))
    key = jax.random.PRNGKey(5)
    before = g.noise_pass_through(model, sub, key, n_steps=1)
    res = g.train(model, w, optax.adam(3e-3), 60, key=jax.random.PRNGKey(1), batch_size=8)
    r1 = g.noise_pass_through(res.model, sub, key, n_steps=1)
    r10 = g.noise_pass_through(res.model, sub, key, n_steps=10)
    print(
        f"[measure] pass-through rho={rho}: untrained 1 step {before:.3f}; "
        f"trained 1 step {r1:.3f}, 10 {r10:.3f}"
    )
    # measured (2026-12-05, squashed readout): rho = 1: untrained 3.78, trained 0.458 (1 step),
    # 0.425 (10); rho = 0.25: untrained 2.32, trained 0.253, 0.264
    assert r10 < 0.45, r10
    assert r1 < 0.25 * before and r10 < 0.25 * before


def test_regression_switch_is_the_det_gnn_loss(tiny_windows):
    """``flow_matching_loss(regress=1)`` (τ = 0, no noise) is the det. GNN's ``mse_loss`` on
    the same network, and ``regress=0`` is the flow-matching loss: one loss, traced switch."""
    kw = dict(n_history=3, n_future=4, irreps_hidden="4x0e+2x1o", sh_lmax=1, n_layers=1)
    kw.update(sigma=(0.1, 0.2, 0.3, 0.4), cutoff=6.0, prior="cv")
    net = g.GSEFlow(key=jax.random.PRNGKey(0), prior_noise="walk", **kw)
    det = eqx.tree_at(lambda d: d.net, g.EquivariantGNN(key=jax.random.PRNGKey(0), **kw), net)
    batch = tiny_windows.take(np.arange(8))
    batch = batch._replace(edges=batch.graph)
    key = jax.random.PRNGKey(1)
    loss = eqx.filter_jit(g.flow_matching_loss)
    reg = loss(net, batch, key, regress=jnp.asarray(1.0))
    flow = loss(net, batch, key, regress=jnp.asarray(0.0))
    assert float(reg) == pytest.approx(float(eqx.filter_jit(g.mse_loss)(det, batch, key)), rel=1e-5)
    assert float(flow) == pytest.approx(float(loss(net, batch, key)), rel=1e-6)
    assert float(flow) != pytest.approx(float(reg), rel=1e-2)


def test_models_of_one_configuration_share_compiled_code(tiny_kwargs):
    """Keys and σ_p are inputs of compiled code, not part of its cache key: two models that
    differ only in them have equal static structure (one compilation serves both), and σ_p
    is neither trained nor counted as a parameter."""
    kw = dict(tiny_kwargs, sigma=(0.1, 0.2, 0.3, 0.4))
    a = g.GSEFlow(key=jax.random.PRNGKey(0), **kw)
    b = g.GSEFlow(key=jax.random.PRNGKey(1), **dict(kw, sigma=(0.5, 0.6, 0.7, 0.8)))

    def static(m):  # what eqx.filter_jit keys its cache on
        leaves, tree = jax.tree_util.tree_flatten(eqx.partition(m, eqx.is_array)[1])
        return tree, leaves

    assert static(a) == static(b)
    assert b.sigma == pytest.approx((0.5, 0.6, 0.7, 0.8), rel=1e-7)
    assert g.count_parameters(a) == g.count_parameters(
        g.GSEFlow(**dict(kw, key=jax.random.PRNGKey(0), sigma=1.0))
    )
    assert not eqx.is_inexact_array(a.sigma_bits)  # no optimizer or gradient sees it


@pytest.mark.slow  # two compilations of the tiny model
def test_compiled_train_loop_equals_step_by_step(light_model, tiny_windows):
    """``train`` without a progress bar runs every step in one ``lax.scan``: the same batches,
    keys and updates as the step-by-step loop (shown with a progress bar)."""
    flat = lambda m: np.concatenate(  # noqa: E731
        [np.ravel(x) for x in jax.tree_util.tree_leaves(eqx.filter(m, eqx.is_inexact_array))]
    )
    args = (light_model, tiny_windows, optax.adam(3e-3), 6)
    scan = g.train(*args, key=jax.random.PRNGKey(0), batch_size=8, progress=False)
    loop = g.train(*args, key=jax.random.PRNGKey(0), batch_size=8, progress=True)
    np.testing.assert_allclose(scan.losses, loop.losses, rtol=1e-5)
    gap = np.linalg.norm(flat(scan.model) - flat(loop.model)) / np.linalg.norm(flat(loop.model))
    assert gap <= 1e-5
