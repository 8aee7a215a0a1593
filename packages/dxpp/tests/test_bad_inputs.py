"""What a user gets on bad input: a clear error, never a silent answer."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import dxpp

QP10 = dxpp.random_dense_qp(10, seed=0)
SOL = dxpp.solve_qp(*QP10)


@pytest.mark.parametrize("seed", [0, 9, np.int64(3), None, np.random.default_rng(1)])
@pytest.mark.parametrize("make", [dxpp.random_dense_qp, dxpp.random_sparse_qp])
def test_seed_accepted(make, seed):
    assert make(5, seed=seed).q.shape == (5,)


@pytest.mark.parametrize(
    ("seed", "err"), [("1", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)]
)
@pytest.mark.parametrize("make", [dxpp.random_dense_qp, dxpp.random_sparse_qp])
def test_seed_refused(make, seed, err):
    with pytest.raises(err, match="seed must be"):
        make(5, seed=seed)


def test_int_seed_same_numbers():
    np.testing.assert_array_equal(
        dxpp.random_dense_qp(5, seed=np.int64(3)).Q, dxpp.random_dense_qp(5, seed=3).Q
    )


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_qp_vjp_refuses_non_finite_upstream_gradient(bad):
    g = np.ones(10)
    g[3] = bad
    with pytest.raises(ValueError, match="grad_x must be finite"):
        dxpp.qp_vjp(*QP10, SOL, g)
    with pytest.raises(ValueError, match="grad_x must be finite"):
        dxpp.kkt_vjp(*QP10, SOL.x, SOL.nu, SOL.mu, SOL.active, g)


def test_qp_vjp_refuses_a_foreign_solution():
    with pytest.raises(TypeError, match="solution must be the QPSolution"):
        dxpp.qp_vjp(*QP10, SOL.x, np.ones(10))


def test_torch_backward_refuses_nan_upstream_gradient():
    torch = pytest.importorskip("torch")
    from dxpp.torch import QPLayer

    args = [torch.tensor(a, requires_grad=True) for a in QP10]
    x = QPLayer()(*args)
    with pytest.raises(ValueError, match=r"upstream gradient .* must be finite"):
        (x * float("nan")).sum().backward()


def test_jax_backward_refuses_nan_upstream_gradient_eagerly():
    jax = pytest.importorskip("jax")
    from dxpp.jax import qp_solve

    arrays = [jax.numpy.asarray(a) for a in QP10]

    def loss(q):
        return (qp_solve(arrays[0], q, *arrays[2:]) * jax.numpy.nan).sum()

    with pytest.raises(ValueError, match=r"upstream gradient .* must be finite"):
        jax.grad(loss)(arrays[1])


def test_auto_takes_proxqp_when_proxsuite_is_installed():
    if importlib.util.find_spec("proxsuite") is None:
        pytest.skip("proxsuite not installed")
    assert dxpp.auto_solver(False) == "proxqp"
    assert SOL.solver.startswith("proxqp")


def test_empty_problem_and_unknown_solver_options():
    with pytest.raises(ValueError, match="q must have at least one entry"):
        dxpp.solve_qp(np.zeros((0, 0)), np.zeros(0))
    with pytest.raises(TypeError, match=r"solver_kwargs \['foo'\] are not options"):
        dxpp.solve_qp(*QP10, solver="proxqp", solver_kwargs={"foo": 1})


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: dxpp.simplex_projection_qp(["a", "b"]), "y must be numeric"),
        (lambda: dxpp.simplex_projection_vjp(np.ones(3), np.ones(2)), "g must have the shape"),
        (lambda: dxpp.chain_projection_qp(np.ones(1)), "at least 2 entries"),
        (lambda: dxpp.portfolio_qp(np.ones(3), np.eye(2)), "cov must have shape"),
        (lambda: dxpp.portfolio_qp(np.ones(4), np.eye(4), max_weight=0.1), "max_weight must be"),
    ],
)
def test_problem_builders_refuse(call, match):
    with pytest.raises((TypeError, ValueError), match=match):
        call()
