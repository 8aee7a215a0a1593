"""Gradients of the penalty backward vs the exact KKT reference and finite differences."""

import numpy as np
import pytest
import scipy.sparse as sp

import dxpp

NAMES = ("Q", "q", "G", "h", "A", "b")


def _grads_vs_reference(qp, rng, **kw):
    sol = dxpp.solve_qp(*qp)
    g = rng.normal(size=sol.x.shape)
    ours = dxpp.qp_vjp(*qp, sol, g, **kw)
    ref = dxpp.kkt_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, g)
    return ours, ref, sol


@pytest.mark.parametrize("n", [50, 100, 200])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_penalty_matches_exact_kkt(n, seed, small_qp, rel):
    ours, ref, sol = _grads_vs_reference(small_qp(n, seed), np.random.default_rng(seed))
    assert sol.active.sum() > 0
    for name, a, b in zip(NAMES, ours, ref):
        assert rel(a, b) <= 1e-4, (name, rel(a, b))


@pytest.mark.parametrize("seed", [0, 1])
def test_pure_penalty_without_refinement_is_within_1e4(seed, small_qp, rel):
    """refine=0 is the paper's adjoint exactly: its O(1/ω) bias is still below 1e-4."""
    ours, ref, _ = _grads_vs_reference(small_qp(60, seed), np.random.default_rng(seed), refine=0)
    errs = [rel(a, b) for a, b in zip(ours, ref)]
    assert max(errs) <= 1e-4
    assert max(errs) > 1e-12  # a real penalty approximation, not the exact solve


def test_bias_shrinks_with_omega(small_qp, rel):
    qp = small_qp(40, 3)
    sol = dxpp.solve_qp(*qp)
    g = np.random.default_rng(0).normal(size=40)
    ref = dxpp.kkt_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, g)
    errs = [rel(dxpp.qp_vjp(*qp, sol, g, c=c, refine=0).q, ref.q) for c in (0.01, 0.1, 1.0)]
    assert errs[0] > 5 * errs[1] > 25 * errs[2]


def test_exact_mode_equals_reference(small_qp, rel):
    ours, ref, _ = _grads_vs_reference(small_qp(80, 4), np.random.default_rng(4), mode="exact")
    for a, b in zip(ours, ref):
        assert rel(a, b) <= 1e-10


def test_full_kkt_reference_agrees_with_reduced(small_qp, rel):
    qp = small_qp(60, 5)
    sol = dxpp.solve_qp(*qp)
    g = np.random.default_rng(5).normal(size=60)
    red = dxpp.kkt_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, g)
    full = dxpp.kkt_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, g, kind="full")
    for a, b in zip(full, red):
        assert rel(a, b) <= 1e-6


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_central_finite_differences(name, seed, small_qp, fd_directional):
    n = 12
    qp = small_qp(n, seed)
    rng = np.random.default_rng(100 + seed)
    sol = dxpp.solve_qp(*qp, solver="quadprog")
    g = rng.normal(size=n)
    grads = dxpp.qp_vjp(*qp, sol, g)
    D = rng.normal(size=np.shape(getattr(qp, name)))
    if name == "Q":
        D = D + D.T
    exact = float(np.sum(getattr(grads, name) * D))
    approx = fd_directional(qp, g, name, D)
    assert abs(exact - approx) <= 1e-5 * max(abs(approx), 1.0), (exact, approx)


def test_scale_aware_weights_are_invariant_to_rescaling(small_qp, rel):
    """Scaling Q, q by 1e6 (or G, h by 1e-4) leaves the relative error unchanged: the
    paper's fixed β/ρ would over- or under-penalise."""
    qp = small_qp(50, 6)
    g = np.random.default_rng(6).normal(size=50)
    errs = []
    for sQ, sG in ((1.0, 1.0), (1e6, 1.0), (1.0, 1e-4)):
        scaled = dxpp.QP(qp.Q * sQ, qp.q * sQ, qp.G * sG, qp.h * sG, qp.A, qp.b)
        sol = dxpp.solve_qp(*scaled, solver="quadprog")
        ref = dxpp.kkt_vjp(*scaled, sol.x, sol.nu, sol.mu, sol.active, g)
        errs.append(rel(dxpp.qp_vjp(*scaled, sol, g, refine=0).q, ref.q))
    assert max(errs) <= 1e-4
    assert max(errs) / min(errs) < 10


def test_weakly_active_constraint_is_kept():
    """x* = 0 sits on the bound x ≤ 0 with zero multiplier (min ½x², x ≤ 0). The paper's
    ρ = c‖ν‖₁ = 0 drops it; we keep it and return the one-sided derivative of the branch on
    which it stays active: ∂x/∂h = 1 (for h decreasing), ∂x/∂q = 0."""
    Q, q = np.eye(1), np.zeros(1)
    G, h = np.ones((1, 1)), np.zeros(1)
    sol = dxpp.solve_qp(Q, q, G, h, solver="quadprog")
    assert sol.active[0] and sol.weakly_active[0]
    grads = dxpp.qp_vjp(Q, q, G, h, None, None, sol, np.ones(1))
    np.testing.assert_allclose(grads.h, [1.0], atol=1e-8)
    np.testing.assert_allclose(grads.q, [0.0], atol=1e-8)


def test_sparse_input_matches_dense(rel):
    qp = dxpp.random_sparse_qp(300, seed=1)
    dense = dxpp.QP(*(M.toarray() if sp.issparse(M) else M for M in qp))
    sol_s = dxpp.solve_qp(*qp)
    sol_d = dxpp.solve_qp(*dense)
    np.testing.assert_allclose(sol_s.x, sol_d.x, atol=1e-6)
    g = np.random.default_rng(0).normal(size=300)
    gs = dxpp.qp_vjp(*qp, sol_s, g)
    gd = dxpp.qp_vjp(*dense, sol_d, g)
    assert sp.issparse(gs.Q) and sp.issparse(gs.G) and sp.issparse(gs.A)
    for name, a, b in zip(NAMES, gs, gd):
        if sp.issparse(a):  # sparse gradients live on the pattern: compare there
            mask = getattr(qp, name).toarray() != 0
            b = np.where(mask, b, 0.0)
        assert rel(a, b) <= 1e-5, name


def test_simplex_projection_matches_closed_form(rel):
    y = np.random.default_rng(0).normal(size=3000)
    qp = dxpp.simplex_projection_qp(y)
    sol = dxpp.solve_qp(*qp)
    g = np.random.default_rng(1).normal(size=3000)
    grads = dxpp.qp_vjp(*qp, sol, g)
    assert rel(-grads.q, dxpp.simplex_projection_vjp(y, g)) <= 1e-5


def test_chain_projection_matches_exact(rel):
    y = np.cumsum(np.random.default_rng(2).normal(size=400)) * 0.05
    qp = dxpp.chain_projection_qp(y)
    sol = dxpp.solve_qp(*qp)
    g = np.random.default_rng(3).normal(size=400)
    a = dxpp.qp_vjp(*qp, sol, g)
    b = dxpp.qp_vjp(*qp, sol, g, mode="exact")
    assert sol.active.sum() > 10
    assert rel(a.q, b.q) <= 1e-6 and rel(a.h, b.h) <= 1e-6


def test_batched_equals_per_problem(small_qp, rel):
    qps = [small_qp(30, s) for s in range(3)]
    stacked = dxpp.QP(*(np.stack(z) for z in zip(*qps)))
    sol = dxpp.solve_qp(*stacked)
    g = np.random.default_rng(0).normal(size=(3, 30))
    grads = dxpp.qp_vjp(*stacked, sol, g)
    for k, qp in enumerate(qps):
        s = dxpp.solve_qp(*qp)
        assert rel(sol.x[k], s.x) <= 1e-12
        gk = dxpp.qp_vjp(*qp, s, g[k])
        for a, b in zip(grads, gk):  # equal up to BLAS round-off (threading-dependent)
            assert rel(a[k], b) <= 1e-8


def test_shared_matrix_gradient_is_summed_over_batch(small_qp):
    qp = small_qp(20, 0)
    qs = np.stack([qp.q, 2 * qp.q])
    sol = dxpp.solve_qp(qp.Q, qs, qp.G, qp.h, qp.A, qp.b)
    g = np.ones((2, 20))
    grads = dxpp.qp_vjp(qp.Q, qs, qp.G, qp.h, qp.A, qp.b, sol, g)
    assert grads.Q.shape == (20, 20) and grads.h.shape == (20,)
    parts = [
        dxpp.qp_vjp(
            qp.Q,
            qs[k],
            qp.G,
            qp.h,
            qp.A,
            qp.b,
            dxpp.solve_qp(qp.Q, qs[k], qp.G, qp.h, qp.A, qp.b),
            g[k],
        )
        for k in range(2)
    ]
    np.testing.assert_allclose(grads.Q, parts[0].Q + parts[1].Q, atol=1e-9)
    np.testing.assert_allclose(grads.h, parts[0].h + parts[1].h, atol=1e-9)


def test_float32_in_float32_out(small_qp):
    qp = small_qp(20, 1)
    qp32 = dxpp.QP(*(a.astype(np.float32) for a in qp))
    sol = dxpp.solve_qp(*qp32)
    assert sol.x.dtype == np.float32 and sol.nu.dtype == np.float32
    grads = dxpp.qp_vjp(*qp32, sol, np.ones(20, np.float32))
    assert all(gk.dtype == np.float32 for gk in grads)


def test_no_constraints_is_a_linear_solve():
    Q = np.array([[2.0, 0.5], [0.5, 1.0]])
    q = np.array([1.0, -1.0])
    sol = dxpp.solve_qp(Q, q)
    np.testing.assert_allclose(sol.x, -np.linalg.solve(Q, q), atol=1e-7)
    grads = dxpp.qp_vjp(Q, q, None, None, None, None, sol, np.ones(2))
    np.testing.assert_allclose(grads.q, -np.linalg.solve(Q, np.ones(2)), atol=1e-10)
    assert grads.G is None and grads.b is None


def test_interior_point_slack_does_not_hide_an_active_constraint(rel):
    """PIQP leaves x_431 = 3e-7 on this simplex projection although ν_431 = 5e-3: the
    complementarity test must still mark it active (else the gradient is 150% off)."""
    rng = np.random.default_rng(30000)
    y, g = rng.normal(size=1000), rng.normal(size=1000)
    qp = dxpp.simplex_projection_qp(y)
    sol = dxpp.solve_qp(*qp, solver="piqp")
    grads = dxpp.qp_vjp(*qp, sol, g)
    assert rel(-grads.q, dxpp.simplex_projection_vjp(y, g)) <= 1e-6


def test_long_tied_blocks_trigger_weight_boost(rel):
    """A chain projection with long tied blocks (nearly dependent active rows): the plain
    penalty is O(1) off; refinement + weight boosting brings it within 1e-3 of exact."""
    y = np.cumsum(np.random.default_rng(0).normal(size=4000)) * 0.05
    qp = dxpp.chain_projection_qp(y)
    sol = dxpp.solve_qp(*qp)
    g = np.random.default_rng(1).normal(size=4000)
    exact = dxpp.qp_vjp(*qp, sol, g, mode="exact")
    prof: dict = {}
    ours = dxpp.qp_vjp(*qp, sol, g, profile=prof)
    plain = dxpp.qp_vjp(*qp, sol, g, refine=0)
    assert rel(plain.q, exact.q) > 1e-2
    assert rel(ours.q, exact.q) <= 1e-3


def test_sparse_symbolic_factorisation_is_reused(rel):
    """A second backward with the same sparsity reuses qdldl's symbolic factorisation
    (``update``) and gives the same gradients as a fresh factorisation."""
    qp = dxpp.random_sparse_qp(400, seed=4)
    sol = dxpp.solve_qp(*qp)
    g = np.random.default_rng(4).normal(size=400)
    first, second = {}, {}
    a = dxpp.qp_vjp(*qp, sol, g, profile=first)
    b = dxpp.qp_vjp(*qp, sol, 2 * g, profile=second)
    assert second["factor_kind"].startswith("qdldl (symbolic reused)")
    for x, y in zip(a, b):
        assert rel(2 * x, y) <= 1e-10
    exact = dxpp.qp_vjp(*qp, sol, g, mode="exact")
    assert rel(a.q, exact.q) <= 1e-6


def test_upper_triangle_of_unsorted_csc():
    """``_upper_csc`` (no sort) equals ``scipy.sparse.triu`` with sorted indices, on a
    symmetric matrix whose CSC indices are out of order (as a sparse product leaves them)."""
    import scipy.sparse as sp

    from dxpp._backward import _upper_csc

    rng = np.random.default_rng(0)
    X = sp.random(40, 30, density=0.1, format="csr", random_state=rng)
    H = (sp.eye(30, format="csc") + X.T @ X).tocsc()
    # scramble the entries within each column
    data, idx = H.data.copy(), H.indices.copy()
    for j in range(30):
        a, b = H.indptr[j], H.indptr[j + 1]
        p = a + rng.permutation(b - a)
        data[a:b], idx[a:b] = H.data[p], H.indices[p]
    Hs = sp.csc_matrix((data, idx, H.indptr), shape=H.shape)
    assert not Hs.has_sorted_indices
    U = _upper_csc(Hs)
    ref = sp.triu(H, format="csc")
    ref.sort_indices()
    assert U.has_sorted_indices
    np.testing.assert_array_equal(U.indptr, ref.indptr)
    np.testing.assert_array_equal(U.indices, ref.indices)
    np.testing.assert_array_equal(U.data, ref.data)


def test_in_place_factorisation_rebuilds_h_after_a_failed_attempt():
    """The dense penalty factor works on ``H = Q + Cᵀ W C`` in place; when ``H`` is singular
    the failed Cholesky has overwritten it, and the ridge retry must see the rebuilt ``H``."""
    from dxpp._backward import _factorize

    rng = np.random.default_rng(0)
    n = 6
    Q = np.zeros((n, n))  # an LP: H has rank 2 < n
    C = rng.normal(size=(2, n))
    w = np.array([2.0, 3.0])
    r = rng.normal(size=n)
    ridge = 1e-6
    solve, kind = _factorize(Q, C, w, False, ridge)
    assert kind == "cholesky+ridge"
    H = Q + C.T @ np.diag(w) @ C
    np.testing.assert_allclose(solve(r), np.linalg.solve(H + ridge * np.eye(n), r), rtol=1e-8)
    Q2 = np.eye(n)  # nonsingular: factorised in place on the first attempt, Q untouched
    solve, kind = _factorize(Q2, C, w, False, ridge)
    assert kind == "cholesky" and np.array_equal(Q2, np.eye(n))
    np.testing.assert_allclose(solve(r), np.linalg.solve(Q2 + C.T @ np.diag(w) @ C, r))
