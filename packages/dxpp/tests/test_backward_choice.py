"""The per-call backward choice (``mode="auto"``) and the bound-row forward: the reduced KKT
solve with active bounds eliminated equals the exact adjoint, degenerate systems fall back to
the penalty solve, and bounds passed to the solver natively give the same solution."""

import numpy as np
import pytest

import dxpp
from dxpp._torch_backward import prefer_reduced

torch = pytest.importorskip("torch")
from dxpp.torch import QPLayer  # noqa: E402


def markowitz(n: int, seed: int):
    rng = np.random.default_rng(seed)
    F = rng.normal(scale=0.15, size=(n, 5))
    cov = F @ F.T + np.diag(rng.uniform(0.02, 0.08, size=n))
    mu = rng.normal(0.06, 0.04, size=n)
    return cov, -mu, -np.eye(n), np.zeros(n), np.ones((1, n)), np.ones(1)


def _grads(qp, g, **opts):
    args = [torch.tensor(a, requires_grad=True) for a in qp]
    x = QPLayer(**opts)(*args)
    (x * torch.tensor(g)).sum().backward()
    return [a.grad.numpy() for a in args]


def _exact(qp, g):
    sol = dxpp.solve_qp(*qp, solver="quadprog")
    return dxpp.kkt_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, g)


@pytest.mark.parametrize("n", [20, 80])
def test_auto_equals_the_exact_adjoint_on_bound_constraints(n, rel):
    qp = markowitz(n, n)
    g = np.random.default_rng(1).normal(size=n)
    ref = _exact(qp, g)
    for a, b in zip(_grads(qp, g), ref):
        assert rel(a, b) <= 1e-7  # the forward's accuracy (PIQP at tol 1e-9 for n > 64)


def test_auto_mixed_bounds_and_general_rows_batched(rel):
    """Bounds written with other coefficients (2·x_j ≤ 3, −x_j ≤ 0), a looser duplicate bound,
    general rows and equalities, each problem with its own active set."""
    rng = np.random.default_rng(5)
    n, B = 12, 3
    qps = []
    for _ in range(B):
        L = rng.normal(size=(n, n))
        Q = L @ L.T / n + 0.1 * np.eye(n)
        G = np.vstack([-np.eye(n), 2 * np.eye(n), -np.eye(n)[:3], rng.normal(size=(4, n))])
        h = np.r_[np.zeros(n), 3 * np.ones(n), np.ones(3), rng.uniform(0.1, 1, 4)]
        qps.append((Q, rng.normal(size=n), G, h, rng.normal(size=(2, n)), np.zeros(2)))
    stacked = [np.stack(z) for z in zip(*qps)]
    g = rng.normal(size=(B, n))
    got = _grads(stacked, g, solver="quadprog")  # the reference's forward: compare backwards
    for k, qp in enumerate(qps):
        ref = _exact(qp, g[k])
        active = dxpp.solve_qp(*qp).active
        assert 0 < active[:n].sum() and active.sum() < n  # bounds active, not a vertex
        scale = max(np.linalg.norm(b) for b in ref)
        for a, b in zip(got, ref):
            assert np.linalg.norm(a[k] - b) <= 1e-10 * scale


def test_auto_falls_back_to_the_penalty_on_a_singular_reduced_system(rel):
    """Q flat on a direction the active rows leave free: the reduced system is singular, the
    penalty path (with its ridge warning) takes the problem, as with mode="penalty"."""
    Q = np.diag([1.0, 0.0, 1.0])
    qp = (Q, np.array([-1.0, 0.0, 1.0]), -np.eye(3)[[2]], np.zeros(1), None, None)
    args = [None if a is None else torch.tensor(a, requires_grad=True) for a in qp]
    with pytest.warns(RuntimeWarning, match="singular"):
        x = QPLayer(check_psd=False)(*args)
        x.sum().backward()
    assert torch.isfinite(args[1].grad).all()


def test_prefer_reduced_follows_the_sizes():
    assert prefer_reduced(500, 483, 19)  # long-only portfolio: few free variables
    assert not prefer_reduced(1000, 1000, 1500)  # dense random QP: the penalty solve


def test_bounds_go_to_the_solver_natively():
    qp = markowitz(60, 0)
    ours = dxpp.solve_qp(*qp)
    assert ours.solver in ("daqp", "piqp")
    ref = dxpp.solve_qp(*qp, solver="quadprog")
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-8)
    np.testing.assert_allclose(ours.nu, ref.nu, atol=1e-7)
    np.testing.assert_allclose(ours.mu, ref.mu, atol=1e-7)
    assert (ours.active == ref.active).all()
