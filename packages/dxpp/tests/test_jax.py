"""The JAX adapter: custom_vjp through pure_callback, agreement with torch, jit/vmap, dtypes."""

import numpy as np
import pytest

import dxpp

jax = pytest.importorskip("jax")
torch = pytest.importorskip("torch")
import jax.numpy as jnp  # noqa: E402

import dxpp.jax as djax  # noqa: E402
from dxpp.torch import QPLayer  # noqa: E402


def _torch_grads(qp, w):
    args = [torch.tensor(a, requires_grad=True) for a in qp]
    x = QPLayer()(*args)
    (x * torch.tensor(w)).sum().backward()
    return x.detach().numpy(), [a.grad.numpy() for a in args]


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_torch_adapter(seed, rel):
    qp = dxpp.random_dense_qp(25, seed)
    w = np.random.default_rng(seed).normal(size=25)
    x_t, g_t = _torch_grads(qp, w)
    with jax.enable_x64(True):
        args = [jnp.asarray(a) for a in qp]
        x_j = djax.qp_solve(*args)
        g_j = jax.grad(lambda *a: jnp.sum(djax.qp_solve(*a) * w), argnums=tuple(range(6)))(*args)
    assert rel(np.asarray(x_j), x_t) <= 1e-12
    for a, b in zip(g_j, g_t):
        assert rel(np.asarray(a), b) <= 1e-8


def test_jit_and_vmap_match_loop(rel):
    qp = dxpp.random_dense_qp(12, 2)
    with jax.enable_x64(True):
        Q, q, G, h, A, b = (jnp.asarray(a) for a in qp)
        qs = jnp.stack([q, 0.5 * q, -q])
        f = jax.jit(jax.vmap(lambda qq: djax.qp_solve(Q, qq, G, h, A, b)))
        xs = f(qs)
        gs = jax.vmap(jax.grad(lambda qq: jnp.sum(djax.qp_solve(Q, qq, G, h, A, b))))(qs)
        for k in range(3):
            x1 = djax.qp_solve(Q, qs[k], G, h, A, b)
            g1 = jax.grad(lambda qq: jnp.sum(djax.qp_solve(Q, qq, G, h, A, b)))(qs[k])
            assert rel(np.asarray(xs[k]), np.asarray(x1)) <= 1e-12
            assert rel(np.asarray(gs[k]), np.asarray(g1)) <= 1e-8


def test_float32_in_float32_out():
    qp = dxpp.random_dense_qp(10, 3)
    args = [jnp.asarray(a, dtype=jnp.float32) for a in qp]
    x = djax.qp_solve(*args)
    assert x.dtype == jnp.float32
    g = jax.grad(lambda q: jnp.sum(djax.qp_solve(args[0], q, *args[2:])))(args[1])
    assert g.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(g)))


def test_without_constraints_and_equalities_only():
    with jax.enable_x64(True):
        Q = jnp.eye(3) * 2.0
        q = jnp.array([1.0, -1.0, 0.5])
        np.testing.assert_allclose(np.asarray(djax.qp_solve(Q, q)), -np.asarray(q) / 2, atol=1e-7)
        A, b = jnp.ones((1, 3)), jnp.ones(1)
        g = jax.grad(lambda bb: djax.qp_solve(Q, q, A=A, b=bb)[0])(b)
        np.testing.assert_allclose(np.asarray(g), [1 / 3], atol=1e-6)
