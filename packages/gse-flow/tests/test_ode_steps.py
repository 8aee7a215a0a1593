"""Issue 14: the sampler's error must not grow with the number of ODE steps.

On a toy where the exact conditional flow is known (Gaussian residual ``x1 − μ = m + s ξ``
against the prior ``x0 = μ + σ ε``, both in the node-centred subspace), the network's readout
is replaced by its Bayes-optimal value for each parametrisation's loss. The sampler must then
converge to the exact transport map ``x1 = μ + m + s ε`` as the number of steps grows: error
non-increasing in the steps for Euler and Heun, second order for Heun.
"""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gse_flow as g
from gse_flow._model import PARAMETRIZATIONS, precondition

S_DATA = 0.3
STEPS = (1, 2, 5, 10, 20, 50, 100)


def _exact_readout(model, m, s):
    """Bayes-optimal ``σ·out`` for ``model.parametrization`` on the Gaussian toy."""
    sig = model.sigma

    def readout(self, cache, x_tau, tau, anchor):
        x = x_tau - cache.centre
        mu = self.prior_mean(cache.history)
        d = x - mu
        var = (1 - tau) ** 2 * sig**2 + tau**2 * s**2
        post = m + tau * s**2 / var * (d - tau * m)  # E[x1 − μ | x_τ]
        v = m + (tau * s**2 - (1 - tau) * sig**2) / var * (d - tau * m)  # E[x1 − x0 | x_τ]
        p = self.parametrization
        if p == "velocity":
            return v, x
        if p == "x1-plain":  # 0.2.0's "x1": endpoint residual, v = (x̂₁ − x)/max(1 − τ, δ)
            return post, x
        if p == "x1":  # preconditioned: v = a(τ)(x − μ) + b(τ) r (ρ = data_scale)
            a, b = precondition(tau, self.data_scale)
            return (v - a * d) / b, x
        raise AssertionError(p)

    return readout


CASES = [
    # 0.2.0's "x1": v ≈ 0 at τ = 1, so Heun is first order and stalls (then rises) past 20 steps
    pytest.param(
        p, 1.0, marks=pytest.mark.xfail(strict=True, reason="known defect, kept to show it")
    )
    if p == "x1-plain"
    else (p, 1.0)
    for p in PARAMETRIZATIONS
] + [("x1", 0.25), ("x1", 0.6)]  # 0.6 = S_DATA/σ: the skip alone is then the exact field


@pytest.mark.parametrize(("parametrization", "rho"), CASES)
def test_error_non_increasing_in_ode_steps(
    monkeypatch, tiny_kwargs, tiny_windows, parametrization, rho
):
    kw = dict(tiny_kwargs, irreps_hidden="8x0e+4x1o", sh_lmax=1)
    model = g.GSEFlow(
        key=jax.random.PRNGKey(0),
        parametrization=parametrization,
        data_scale=rho,
        readout_bound=None,  # the squash (≈ identity here) would bias the exact field ~1e-3
        **kw,
    )
    w = tiny_windows
    F, N = w.future.shape[1:3]
    rng = np.random.default_rng(0)
    m = rng.normal(size=(F, N, 3)) * 0.4
    m -= m.mean(axis=1, keepdims=True)
    monkeypatch.setattr(g.GSEFlow, "_readout", _exact_readout(model, jnp.asarray(m), S_DATA))
    hist = jnp.asarray(w.history[:4])
    eps = g.centered_noise(jax.random.PRNGKey(1), (4, 16, F, N, 3))
    attr, graph = jnp.asarray(w.node_attr[0]), w.graph
    mu = jax.vmap(model.prior_mean)(hist)[:, None]
    exact = mu + m + S_DATA * eps

    def run(solver):
        @jax.jit
        def f(n):  # n traced: one compilation per solver
            one = lambda h, e: g.sample_from_noise(  # noqa: E731
                model, h, e, node_attr=attr, graph=graph, n_steps=n, solver=solver
            )
            out = jax.vmap(jax.vmap(one, in_axes=(None, 0)))(hist, eps)
            return jnp.sqrt(jnp.mean((out - exact) ** 2))

        return [float(f(jnp.asarray(n, jnp.int32))) for n in STEPS]

    errs = {s: run(s) for s in ("euler", "heun")}
    print(
        f"[measure] {parametrization} rho={rho}: exact-readout RMS error vs steps {STEPS}: {errs}"
    )
    for solver, e in errs.items():
        assert all(b <= a + 1e-6 for a, b in itertools.pairwise(e)), (solver, e)
    heun = dict(zip(STEPS, errs["heun"]))
    assert heun[20] <= 0.4 * heun[10], heun  # second order: 0.25; first order: 0.5
    assert heun[100] <= 1e-3 * S_DATA * 10, heun
