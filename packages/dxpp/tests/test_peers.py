"""Our gradients vs the peers qpth (OptNet), cvxpylayers (diffcp) and dQP on the same QPs."""

import numpy as np
import pytest

import dxpp

torch = pytest.importorskip("torch")
from dxpp.torch import QPLayer  # noqa: E402

N = 50
NAMES = ("Q", "q", "G", "h", "A", "b")


def _ours(qp, g):
    args = [torch.tensor(a, requires_grad=True) for a in qp]
    x = QPLayer()(*args)
    (x @ torch.tensor(g)).backward()
    return x.detach().numpy(), [a.grad.numpy() for a in args]


@pytest.mark.parametrize("seed", [0, 1])
def test_matches_qpth(seed, rel):
    from qpth.qp import QPFunction

    qp = dxpp.random_dense_qp(N, seed)
    g = np.random.default_rng(seed).normal(size=N)
    x_ours, ours = _ours(qp, g)
    args = [torch.tensor(a, requires_grad=True) for a in qp]
    x = QPFunction(verbose=-1)(*args)[0]
    (x @ torch.tensor(g)).backward()
    assert rel(x_ours, x.detach().numpy()) <= 1e-6
    for name, a, b in zip(NAMES, ours, args):
        assert rel(a, b.grad.numpy()) <= 1e-4, name


def test_matches_cvxpylayers(rel):
    cp = pytest.importorskip("cvxpy")
    from cvxpylayers.torch import CvxpyLayer

    qp = dxpp.random_dense_qp(N, 0)
    m, p = qp.G.shape[0], qp.A.shape[0]
    x = cp.Variable(N)
    L, q, G, h, A, b = (cp.Parameter(s) for s in ((N, N), N, (m, N), m, (p, N), p))
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L @ x) + q @ x), [G @ x <= h, A @ x == b])
    layer = CvxpyLayer(prob, parameters=[L, q, G, h, A, b], variables=[x])
    Lv = np.linalg.cholesky(qp.Q).T  # Q = LᵀL
    g = torch.tensor(np.random.default_rng(0).normal(size=N))
    theirs = [torch.tensor(a, requires_grad=True) for a in (Lv, *qp[1:])]
    # diffcp's default derivative ("lsqr") is 8-30% off here; "dense" is its exact mode
    (xc,) = layer(
        *theirs,
        solver_args={
            "solve_method": "Clarabel",
            "mode": "dense",
            "tol_gap_abs": 1e-12,
            "tol_gap_rel": 1e-12,
            "tol_feas": 1e-12,
        },
    )
    (xc @ g).backward()
    ours = [torch.tensor(a, requires_grad=True) for a in (Lv, *qp[1:])]
    xd = QPLayer()(ours[0].T @ ours[0], *ours[1:])
    (xd @ g).backward()
    for name, a, b in zip(("L", *NAMES[1:]), ours, theirs):
        assert rel(a.grad.numpy(), b.grad.numpy()) <= 1e-4, name


def test_matches_dqp(rel):
    from dqp import dQP

    qp = dxpp.random_dense_qp(N, 2)
    g = np.random.default_rng(2).normal(size=N)
    _, ours = _ours(qp, g)
    layer = dQP.dQP_layer(
        settings=dQP.build_settings(qp_solver="piqp", lin_solver="scipy LU", eps_abs=1e-10)
    )
    args = [torch.tensor(a, requires_grad=True) for a in qp]
    x = layer(*args)[0].reshape(-1)
    (x @ torch.tensor(g)).backward()
    for name, a, b in zip(NAMES, ours, args):
        assert rel(a, b.grad.numpy()) <= 1e-4, name
