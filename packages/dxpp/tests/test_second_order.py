"""Second derivatives are refused (never zeros), and jit/vmap/grad compose in float64 whether x64
is switched on by the context manager or by the global flag."""

from __future__ import annotations

import numpy as np
import pytest

import dxpp

Q, q, G, h, A, b = dxpp.random_dense_qp(6, seed=0)


def _fd_grad(qv: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central finite differences of sum(x*(q)**2) in q, through the numpy solver."""

    def loss(v: np.ndarray) -> float:
        return float(np.sum(dxpp.solve_qp(Q, v, G, h, A, b, tol=1e-12).x ** 2))

    return np.array(
        [(loss(qv + eps * e) - loss(qv - eps * e)) / (2 * eps) for e in np.eye(qv.size)]
    )


def test_torch_second_derivatives_raise():
    torch = pytest.importorskip("torch")
    from dxpp.torch import QPLayer

    layer = QPLayer()
    t = torch.tensor

    def f(qq):
        return layer(t(Q), qq, t(G), t(h), t(A), t(b)).square().sum()

    qq = t(q).requires_grad_()
    f(qq).backward()  # first order still works
    np.testing.assert_allclose(qq.grad.numpy(), _fd_grad(q), rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match="first derivatives only"):
        torch.autograd.functional.hessian(f, t(q))
    with pytest.raises(RuntimeError, match="first derivatives only"):
        torch.autograd.functional.hvp(f, t(q), torch.ones(6, dtype=torch.float64))
    qv = t(q).requires_grad_()
    with pytest.raises(RuntimeError, match="first derivatives only"):
        torch.autograd.grad(f(qv), qv, create_graph=True)


def _jax_loss(jnp, layer):
    def f(qq):
        x = layer(
            jnp.asarray(Q), qq, jnp.asarray(G), jnp.asarray(h), jnp.asarray(A), jnp.asarray(b)
        )
        return jnp.sum(x**2)

    return f


def test_jax_second_derivatives_raise():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from dxpp.jax import QPLayer

    with jax.enable_x64(True):
        f = _jax_loss(jnp, QPLayer())
        x = jnp.asarray(q)
        np.testing.assert_allclose(np.asarray(jax.grad(f)(x)), _fd_grad(q), rtol=1e-5, atol=1e-6)
        for second in (
            jax.hessian(f),
            jax.jacfwd(jax.grad(f)),
            jax.grad(lambda v: jax.grad(f)(v).sum()),
        ):
            with pytest.raises(NotImplementedError, match="first derivatives only"):
                second(x)


@pytest.mark.parametrize("how", ["context", "global"])
@pytest.mark.parametrize("combo", ["grad", "jit(grad)", "vmap(grad)", "jit(vmap(grad))"])
def test_jax_jit_vmap_grad_compose_in_float64(how, combo):
    jax = pytest.importorskip("jax")
    import contextlib

    import jax.numpy as jnp

    from dxpp.jax import QPLayer

    before = jax.config.jax_enable_x64
    ctx = jax.enable_x64(True) if how == "context" else contextlib.nullcontext()
    if how == "global":
        jax.config.update("jax_enable_x64", True)
    try:
        with ctx:
            f = _jax_loss(jnp, QPLayer())
            g = jax.grad(f)
            batched = "vmap" in combo
            fn = jax.vmap(g) if batched else g
            fn = jax.jit(fn) if "jit" in combo else fn
            qs = jnp.asarray(np.stack([q, q + 0.1]) if batched else q)
            out = fn(qs)
            assert out.dtype == jnp.float64
            want = np.stack([_fd_grad(q), _fd_grad(q + 0.1)]) if batched else _fd_grad(q)
            np.testing.assert_allclose(np.asarray(out), want, rtol=1e-5, atol=1e-6)
    finally:
        jax.config.update("jax_enable_x64", before)


def test_a_non_unique_minimiser_warns_when_the_ridge_decides_the_gradient():
    # Q is flat along x1, and no active constraint fixes x1: the minimiser is not unique
    Qs, ps = np.diag([1.0, 0.0]), np.array([0.3, 0.0])
    Gs, hs = np.array([[0.0, 1.0], [0.0, -1.0]]), np.array([1.0, 1.0])
    sol = dxpp.solve_qp(Qs, ps, Gs, hs)
    with pytest.warns(RuntimeWarning, match="minimiser is not unique"):
        dxpp.qp_vjp(Qs, ps, Gs, hs, None, None, sol, np.ones(2))
    torch = pytest.importorskip("torch")
    from dxpp.torch import QPLayer

    args = [torch.tensor(a, requires_grad=True) for a in (Qs, ps, Gs, hs)]
    with pytest.warns(RuntimeWarning, match="minimiser is not unique"):
        QPLayer()(*args).sum().backward()
