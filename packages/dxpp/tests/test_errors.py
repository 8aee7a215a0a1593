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
    with pytest.raises(TypeError, match="q must be a numeric array"):
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
