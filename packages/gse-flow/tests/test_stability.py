"""The sampler stays finite and bounded whatever the readout outputs (issue 14 follow-up).

0.3.0's quick reproduce crashed: on test window 49 of ``nbody_windows(64, seed=300)`` the
trained flow's Euler samples grew to 4.5e25 and then NaN, because the readout ``r`` was
unbounded and fed back through ``x_τ``. With the readout term ``t = b(τ) r`` of
``v = a(τ)(x − μ) + t`` squashed to norm ``c σ`` per node-frame, and ``a ≤ 1``,
``h·a ≥ −2`` on uniform grids (so ``|1 + h a| ≤ e^h``), every Euler step obeys
``|d'| ≤ e^h |d| + h c σ`` for ``d = x − μ``, and ``|x_1 − μ| ≤ e (|x_0 − μ| + c σ)``
per node-frame. The test makes the readout huge (its weights × 1e4) and checks the looser
bound ``e (|x_0 − μ| + 2√2 c σ)`` (which also covers Heun) on that window, for ρ = 1 and
ρ = 0.25; without the squash it is violated.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gse_flow as g
from gse_flow._model import precondition


def _diverged_window(n_history: int, n_future: int) -> g.Windows:
    """Window 49 of the quick-mode test set, cut to the tiny model's horizon."""
    w = g.nbody_windows(64, seed=300).take(np.array([49]))
    return g.make_windows(w.history[:, -n_history:], w.future[:, :n_future], w.node_attr, w.edges)


def _huge(model: g.GSEFlow):
    return jax.tree_util.tree_map(lambda x: x * 1e4, model.readout)


@pytest.mark.parametrize("rho", [1.0, 0.25, 0.05])
def test_preconditioning_keeps_euler_steps_bounded(rho):
    """``a(τ) ≤ 1`` on [0, 1] and ``h·a(τ_i) ≥ −2`` at every grid point of 1..200 steps (the
    premises of the bound above); with ``r = 0`` the exact flow maps ``x0 − μ`` to ρ(x0 − μ)."""
    tau = np.linspace(0.0, 1.0, 10001)
    a, b = (np.asarray(v) for v in precondition(jnp.asarray(tau), rho))
    assert np.all(a <= 1.0 + 1e-6) and np.all(b <= np.sqrt(2.0) + 1e-6)
    # every grid of 1..200 steps in one call (Heun also evaluates τ = 1); one shape, one compile
    grids = [np.arange(n + 1) / n for n in range(1, 201)]
    a_all = np.asarray(precondition(jnp.asarray(np.concatenate(grids)), rho)[0])
    for n, an in zip(range(1, 201), np.split(a_all, np.cumsum([len(t) for t in grids])[:-1])):
        assert np.all(an / n >= -2.0), (n, (an / n).min())
    gain = np.exp(np.trapezoid(a, tau))
    assert gain == pytest.approx(rho, rel=1e-3)


@pytest.mark.parametrize(
    ("bound", "rho"),
    # ρ = 0.25 costs another sampler compile (15 s); its premise a(τ) ≤ 1 is checked above
    [(6.0, 1.0), pytest.param(6.0, 0.25, marks=pytest.mark.slow), (None, 1.0)],
)
def test_sampler_bounded_with_huge_readout(tiny_kwargs, bound, rho):
    kw = dict(tiny_kwargs, irreps_hidden="8x0e+4x1o", sh_lmax=1, prior="cv")
    model = g.GSEFlow(key=jax.random.PRNGKey(0), readout_bound=bound, data_scale=rho, **kw)
    model = eqx.tree_at(lambda m: m.readout, model, _huge(model))
    w = _diverged_window(kw["n_history"], kw["n_future"])
    key = jax.random.PRNGKey(3)
    eps = g.centered_noise(key, (1, 4, kw["n_future"], w.history.shape[2], 3))
    mu = np.asarray(model.prior_mean(jnp.asarray(w.history[0])))
    sig = float(np.max(np.asarray(model.noise_scale())))
    d0 = float(np.max(np.linalg.norm(sig * np.asarray(eps), axis=-1)))
    limit = np.e * (d0 + 2 * np.sqrt(2) * 6.0 * sig)
    worst = []
    for solver, n in (("euler", 5), ("euler", 20), ("heun", 10)):
        s = g.sample(
            model,
            w.history,
            key,
            node_attr=w.node_attr,
            edges=w.edges,
            k=4,
            n_steps=n,
            solver=solver,
        )
        dev = np.linalg.norm(s[0] - mu[None], axis=-1)
        worst.append(float(np.nanmax(np.where(np.isfinite(dev), dev, np.inf))))
    if bound is None:  # the unbounded readout leaves the bound (the 0.3.0 failure mode)
        assert max(worst) > limit, (worst, limit)
    else:
        assert max(worst) <= limit, (worst, limit)


def test_per_frame_sigma(tiny_windows):
    w = tiny_windows
    s = g.prior_scale(w, "cv", per_frame=True)
    steps = np.arange(1, 5)[None, :, None, None]
    mean = w.history[:, -1:] + steps * (w.history[:, -1:] - w.history[:, -2:-1])
    ref = np.sqrt(np.mean((w.future - mean) ** 2, axis=(0, 2, 3)))
    np.testing.assert_allclose(s, ref, rtol=1e-6)
    assert np.mean(np.square(s)) == pytest.approx(g.prior_scale(w, "cv") ** 2, rel=1e-6)
    _, se = g.enhance(lambda ww: g.constant_velocity(ww.history, 4), w, per_frame=True)
    np.testing.assert_allclose(se, ref, rtol=1e-5)


@pytest.mark.parametrize("sigma", [(0.1, 0.2), (0.1, 0.2, -0.3, 0.4), (0.1, 0.2, np.nan, 0.4)])
def test_bad_sigma_names_argument(tiny_kwargs, sigma):
    kw = dict(tiny_kwargs, sigma=sigma)
    with pytest.raises(ValueError, match="sigma"):
        g.GSEFlow(key=jax.random.PRNGKey(0), **kw)
