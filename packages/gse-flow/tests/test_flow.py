"""Acceptance item 3: ODE steps vs diffrax, the exact linear field, the Gaussian toy."""

from __future__ import annotations

import diffrax
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import gse_flow as g


def _field(x, t):
    return jnp.sin(3.0 * t) * x - 0.5 * x**2 + 1.0


@pytest.mark.parametrize(("solver", "ref"), [("euler", diffrax.Euler()), ("heun", diffrax.Heun())])
def test_integrate_matches_diffrax(solver, ref):
    x0 = jnp.linspace(-1.0, 1.0, 12).reshape(4, 3)
    ours = g.integrate(_field, x0, n_steps=10, solver=solver)
    term = diffrax.ODETerm(lambda t, y, args: _field(y, t))
    sol = diffrax.diffeqsolve(term, ref, t0=0.0, t1=1.0, dt0=0.1, y0=x0)
    diff = float(jnp.max(jnp.abs(ours - sol.ys[-1])))
    print(f"[measure] {solver} vs diffrax max abs diff {diff:.2e}")
    assert diff <= 1e-5


def test_one_euler_step_of_exact_linear_field():
    key = jax.random.PRNGKey(0)
    x0 = jax.random.normal(key, (6, 5, 3))
    x1 = jax.random.normal(jax.random.PRNGKey(1), (6, 5, 3)) + 2.0

    def exact(x, t):  # conditional OT field towards x1
        return (x1 - x) / (1.0 - t)

    out = g.integrate(exact, x0, n_steps=1, solver="euler")
    gap = float(jnp.max(jnp.abs(out - x1)))
    print(f"[measure] one Euler step of the exact field: max abs err {gap:.2e}")
    assert gap <= 1e-6
    assert (
        float(
            g.cfm_loss(lambda x, t: jnp.broadcast_to(x1 - x0, x.shape), x0, x1, jnp.full((6,), 0.3))
        )
        == 0.0
    )


def _analytic_field(x, t, mu, s):
    """E[x1 − x0 | x_τ = x] for x0 ~ N(0, I), x1 ~ N(μ, s² I) independent."""
    t = t[..., None]
    var = (1 - t) ** 2 + t**2 * s**2
    c = (t * s**2 - (1 - t)) / var
    return mu + c * (x - t * mu)


def test_gaussian_to_gaussian_learned_field():
    mu = jnp.array([1.0, -0.5, 0.3])
    s = 0.5
    key = jax.random.PRNGKey(0)
    mlp = eqx.nn.MLP(4, 3, 64, 2, jax.nn.silu, key=key)

    def field(m, x, t):
        return jax.vmap(m)(jnp.concatenate([x, t[:, None]], axis=-1))

    opt = optax.adam(optax.cosine_decay_schedule(3e-3, 3000, 0.01))
    state = opt.init(eqx.filter(mlp, eqx.is_inexact_array))

    @eqx.filter_jit
    def step(m, st, k):
        k0, k1, k2 = jax.random.split(k, 3)
        x0 = jax.random.normal(k0, (1024, 3))
        x1 = mu + s * jax.random.normal(k1, (1024, 3))
        tau = jax.random.uniform(k2, (1024,))
        loss, grads = eqx.filter_value_and_grad(
            lambda mm: g.cfm_loss(lambda x, t: field(mm, x, t), x0, x1, tau)
        )(m)
        upd, st = opt.update(grads, st, eqx.filter(m, eqx.is_inexact_array))
        return eqx.apply_updates(m, upd), st, loss

    for k in jax.random.split(jax.random.PRNGKey(1), 3000):
        mlp, state, _ = step(mlp, state, k)
    kx, kt = jax.random.split(jax.random.PRNGKey(2))
    t = jax.random.uniform(kt, (4096,)) * 0.95
    # evaluate where the probability path puts its mass
    x = (1 - t[:, None]) * jax.random.normal(kx, (4096, 3)) + t[:, None] * (
        mu + s * jax.random.normal(jax.random.PRNGKey(3), (4096, 3))
    )
    mse = float(jnp.mean((field(mlp, x, t) - _analytic_field(x, t, mu, s)) ** 2))
    print(f"[measure] Gaussian toy learned-vs-analytic field MSE {mse:.2e}")
    assert mse < 1e-3, mse
    # and the learned flow transports N(0, I) to N(μ, s²I)
    out = g.integrate(
        lambda xx, tt: field(mlp, xx, jnp.full(xx.shape[:1], tt)),
        jax.random.normal(jax.random.PRNGKey(4), (4096, 3)),
        n_steps=50,
        solver="heun",
    )
    np.testing.assert_allclose(np.asarray(out.mean(0)), np.asarray(mu), atol=0.05)
    np.testing.assert_allclose(np.asarray(out.std(0)), s, atol=0.05)
