"""Bad input gets a clear error naming the argument; solver failures raise QPError."""

import numpy as np
import pytest

import dxpp

Q2, q2 = np.eye(2), np.zeros(2)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"Q": np.ones((2, 3))}, r"Q must have shape \(n, n\)"),
        ({"Q": np.array([[1.0, 1.0], [0.0, 1.0]])}, "Q must be symmetric"),
        ({"Q": np.array([[1.0, 0.0], [0.0, -1.0]])}, "Q must be positive semi-definite"),
        ({"q": np.array([np.nan, 0.0])}, "q must be finite"),
        ({"Q": np.array([[np.inf, 0], [0, 1.0]])}, "Q must be finite"),
        ({"G": np.ones((2, 3)), "h": np.ones(2)}, "G must have 2 columns"),
        ({"G": np.ones((2, 2)), "h": np.ones(3)}, "h must have length 2"),
        ({"G": np.ones((2, 2))}, "G and h must be given together"),
        ({"A": np.ones((1, 2)), "b": np.ones(2)}, "b must have length 1"),
        ({"Q": np.stack([np.eye(2)] * 3), "q": np.zeros((2, 2))}, "batch sizes must agree"),
    ],
)
def test_bad_input_is_named(kwargs, match):
    args = {"Q": Q2, "q": q2, **kwargs}
    with pytest.raises(ValueError, match=match):
        dxpp.solve_qp(**args)


def test_non_numeric_is_type_error():
    with pytest.raises(TypeError, match=r"q must be (a )?numeric"):
        dxpp.solve_qp(Q2, ["a", "b"])


@pytest.mark.parametrize("solver", ["auto", "quadprog", "osqp", "piqp"])
def test_infeasible_raises_qperror_with_status(solver):
    G = np.array([[1.0, 0.0], [-1.0, 0.0]])
    h = np.array([-1.0, -1.0])  # x0 <= -1 and x0 >= 1
    with pytest.raises(dxpp.QPError) as info:
        dxpp.solve_qp(Q2, q2, G, h, solver=solver)
    assert info.value.status and info.value.solver
    assert "status" in str(info.value)


def test_unbounded_raises_qperror():
    with pytest.raises(dxpp.QPError):
        dxpp.solve_qp(np.zeros((2, 2)), np.array([1.0, 0.0]), solver="piqp")


def test_batch_failure_names_the_index():
    G = np.array([[1.0, 0.0]])
    hs = np.array([[1.0], [1.0]])
    As = np.array([[[1.0, 0.0]], [[1.0, 0.0]]])
    bs = np.array([[0.0], [2.0]])  # second problem infeasible: x0 = 2 but x0 <= 1
    with pytest.raises(dxpp.QPError) as info:
        dxpp.solve_qp(Q2, q2, G, hs, As, bs)
    assert info.value.index == 1


def test_loose_tolerance_is_tightened_with_warning():
    with pytest.warns(UserWarning, match="too loose"):
        sol = dxpp.solve_qp(Q2, np.array([1.0, -1.0]), tol=1e-3)
    np.testing.assert_allclose(sol.x, [-1.0, 1.0], atol=1e-7)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"solver": "nope"}, ValueError, "solver must be one of"),
        ({"beta": -1.0}, ValueError, "beta must be finite and > 0"),
        ({"active_tol": 0.0}, ValueError, "active_tol must be finite and > 0"),
    ],
)
def test_bad_options(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        dxpp.solve_qp(Q2, q2, **kwargs)


def test_bad_vjp_arguments():
    sol = dxpp.solve_qp(Q2, q2)
    with pytest.raises(ValueError, match="mode must be one of"):
        dxpp.qp_vjp(Q2, q2, None, None, None, None, sol, np.ones(2), mode="fast")
    with pytest.raises(ValueError, match="grad_x must have the shape"):
        dxpp.qp_vjp(Q2, q2, None, None, None, None, sol, np.ones(3))
    with pytest.raises(ValueError, match="refine must be an integer"):
        dxpp.qp_vjp(Q2, q2, None, None, None, None, sol, np.ones(2), refine=-1)


# ------------------------------------------------------------------ issue 24, item 4
def _eq_qp(module):
    """min ½xᵀ(4I)x + (1, −1)ᵀx s.t. x₁ + x₂ = 1 has x* = (0.25, 0.75) (integer data)."""
    return (
        module.asarray([[4, 0], [0, 4]]),
        module.asarray([1, -1]),
        None,
        None,
        module.asarray([[1, 1]]),
        module.asarray([1]),
    )


def test_integer_input_is_promoted_to_float64():
    sol = dxpp.solve_qp(*_eq_qp(np))
    assert sol.x.dtype == np.float64
    np.testing.assert_allclose(sol.x, [0.25, 0.75], atol=1e-7)
    torch = pytest.importorskip("torch")
    from dxpp.torch import QPLayer

    x = QPLayer()(*_eq_qp(torch))
    assert x.dtype == torch.float64
    np.testing.assert_allclose(x.numpy(), [0.25, 0.75], atol=1e-7)


def test_complex_input_is_refused():
    with pytest.raises(TypeError, match="q must be real-valued"):
        dxpp.solve_qp(Q2, np.array([1.0 + 1j, 0.0]))
    torch = pytest.importorskip("torch")
    from dxpp.torch import QPLayer

    with pytest.raises(TypeError, match="Q must be real-valued"):
        QPLayer()(torch.eye(2, dtype=torch.complex128), torch.zeros(2, dtype=torch.float64))


def test_complex_input_is_refused_under_jax():
    jnp = pytest.importorskip("jax.numpy")
    from dxpp.jax import qp_solve

    with pytest.raises(TypeError, match="q must be real-valued"):
        qp_solve(jnp.eye(2), jnp.array([1.0 + 1j, 0.0]))


def test_empty_batch_gives_empty_results():
    qp = dxpp.random_dense_qp(4, 0)
    qs = np.zeros((0, 4))
    sol = dxpp.solve_qp(qp.Q, qs, qp.G, qp.h, qp.A, qp.b)
    assert sol.x.shape == (0, 4) and sol.nu.shape == (0, 4) and sol.mu.shape == (0, 2)
    grads = dxpp.qp_vjp(qp.Q, qs, qp.G, qp.h, qp.A, qp.b, sol, np.zeros((0, 4)))
    assert grads.q.shape == (0, 4) and grads.Q.shape == (4, 4) and not grads.Q.any()
    torch = pytest.importorskip("torch")
    from dxpp.torch import QPLayer

    args = [torch.tensor(a, requires_grad=True) for a in (qp.Q, qs, *qp[2:])]
    x = QPLayer()(*args)
    assert x.shape == (0, 4)
    x.sum().backward()
    assert args[0].grad.shape == (4, 4) and not args[0].grad.any()


def test_check_psd_false_warns_on_a_non_psd_q():
    Q = np.array([[1.0, 0.0], [0.0, -1.0]])
    G, h = np.vstack([np.eye(2), -np.eye(2)]), np.ones(4)
    with pytest.warns(RuntimeWarning, match="not positive semi-definite"):
        try:
            dxpp.solve_qp(Q, q2, G, h, check_psd=False)
        except dxpp.QPError:
            pass
    torch = pytest.importorskip("torch")
    from dxpp.torch import QPLayer

    with pytest.warns(RuntimeWarning, match="not positive semi-definite"):
        try:
            QPLayer(check_psd=False)(*(torch.tensor(a) for a in (Q, q2, G, h)))
        except dxpp.QPError:
            pass


def test_jax_errors_outside_and_inside_jit():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    from dxpp.jax import qp_solve

    G = jnp.array([[1.0, 0.0], [-1.0, 0.0]])
    h = jnp.array([-1.0, -1.0])  # infeasible
    with pytest.raises(dxpp.QPError, match="status"):
        qp_solve(jnp.eye(2), jnp.zeros(2), G, h)
    with pytest.raises(dxpp.QPError):  # also under eager jax.grad: solved before any callback
        jax.grad(lambda q: qp_solve(jnp.eye(2), q, G, h).sum())(jnp.zeros(2))
    with pytest.raises(ValueError, match="q must be finite"):
        qp_solve(jnp.eye(2), jnp.array([jnp.nan, 0.0]))
    # inside jit the solve is a host callback: JAX re-raises its error as JaxRuntimeError
    with pytest.raises(jax.errors.JaxRuntimeError, match=r"QPError|found no solution"):
        jax.jit(lambda q: qp_solve(jnp.eye(2), q, G, h))(jnp.zeros(2)).block_until_ready()
    with pytest.raises(jax.errors.JaxRuntimeError, match="q must be finite"):
        jax.jit(lambda q: qp_solve(jnp.eye(2), q))(jnp.array([jnp.nan, 0.0])).block_until_ready()


@pytest.mark.parametrize("pattern", ["same", "different"])
def test_sparse_asymmetric_q_is_refused(pattern):
    """Both paths of the sparse symmetry check: the same pattern as Qᵀ (values compared in
    place) and a different one (Q − Qᵀ formed)."""
    import scipy.sparse as sp

    Q = np.array([[2.0, 1.0, 0.0], [0.5 if pattern == "same" else 0.0, 2.0, 0.0], [0, 0, 2.0]])
    with pytest.raises(ValueError, match="Q must be symmetric"):
        dxpp.solve_qp(sp.csc_matrix(Q), np.zeros(3))
    sym = sp.csc_matrix(0.5 * (Q + Q.T))
    assert np.allclose(
        dxpp.solve_qp(sym, np.ones(3)).x, np.linalg.solve(sym.toarray(), -np.ones(3))
    )
