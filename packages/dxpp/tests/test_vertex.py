"""OptNet's regime: vertex solutions (exact adjoint v = 0), a batch axis of size 1, float32.

At a non-degenerate vertex the active rows ``C = [G_J; A]`` span ``Rⁿ``, so the adjoint of
``[Q Cᵀ; C 0][v; t] = [g; 0]`` is ``v = 0`` and ``∂q = ∂Q = 0``, while ``∂h``, ``∂b`` (the
multipliers ``t``) are not. The problems are built with a known strictly complementary vertex:
``x*`` has ``n − p`` zeros, ``ν > 0`` on them, and ``q = −Qx* + ν − Aᵀμ`` (with ``G = −I``).
``A`` has singular values spread over ``cond`` (1 or 100): the slow contraction of the
multiplier steps on such ``A`` once left the first, unconverged penalty solve in place.
"""

from __future__ import annotations

import numpy as np
import pytest

import dxpp

torch = pytest.importorskip("torch")
from dxpp.torch import QPFunction  # noqa: E402

NAMES = ("Q", "q", "G", "h", "A", "b")


def vertex_batch(seed: int, cond: float, B: int = 8, n: int = 48, p: int = 30, qs: float = 0.1):
    """``B`` QPs sharing ``Q = qs·I``, ``G = −I``, ``h = 0`` and ``A``; vertex solutions."""
    rng = np.random.default_rng(seed)
    U = np.linalg.qr(rng.normal(size=(p, p)))[0]
    V = np.linalg.qr(rng.normal(size=(n, p)))[0]
    A = (U * np.logspace(0, -np.log10(cond), p)) @ V.T
    Q = qs * np.eye(n)
    X, P = np.zeros((B, n)), np.zeros((B, n))
    for k in range(B):
        zero = rng.permutation(n)[: n - p]
        x = rng.uniform(0.5, 1.5, n)
        x[zero] = 0.0
        nu = np.zeros(n)
        nu[zero] = rng.uniform(0.5, 1.5, n - p)
        X[k], P[k] = x, -Q @ x + nu - A.T @ rng.normal(size=p)
    return Q, P, -np.eye(n), np.zeros(n), A, X @ A.T, X


def _scale(grads) -> float:
    return max(float(np.abs(np.asarray(g)).max()) for g in grads if g is not None)


@pytest.mark.parametrize(("seed", "cond"), [(0, 1.0), (1, 1.0), (0, 100.0), (2, 100.0)])
def test_numpy_core_vertex_gradients_match_the_exact_adjoint(seed, cond):
    Q, P, G, h, A, b, X = vertex_batch(seed, cond)
    sol = dxpp.solve_qp(Q, P, G, h, A, b)
    assert np.abs(sol.x - X).max() < 1e-6
    g = np.random.default_rng(seed + 10).normal(size=X.shape)
    ours = dxpp.qp_vjp(Q, P, G, h, A, b, sol, g)
    refs = [
        dxpp.kkt_vjp(Q, P[k], G, h, A, b[k], sol.x[k], sol.nu[k], sol.mu[k], sol.active[k], g[k])
        for k in range(len(X))
    ]
    # inputs shared by the batch (Q, G, h, A) get gradients summed over it
    stacked = [np.stack([r[i] for r in refs]) for i in range(6)]
    ref = [st.sum(0) if np.ndim(o) < st.ndim else st for o, st in zip(ours, stacked, strict=True)]
    scale = _scale(ref)
    assert np.abs(ref[1]).max() < 1e-6 * scale  # the exact adjoint v is 0
    for name, a, r in zip(NAMES, ours, ref):
        assert np.abs(np.asarray(a) - np.asarray(r)).max() <= 1e-6 * scale, name


def _torch_grads(mode: str, problem, g, dtype=torch.float64):
    ins = [torch.tensor(a, dtype=dtype, requires_grad=True) for a in problem]
    x = QPFunction(verbose=-1, mode=mode, broadcast_grad="sum")(*ins)
    return torch.autograd.grad((x * torch.tensor(g, dtype=dtype)).sum(), ins)


@pytest.mark.parametrize(("seed", "cond"), [(0, 1.0), (1, 1.0), (0, 100.0), (2, 100.0)])
def test_torch_vertex_gradients_match_the_exact_adjoint(seed, cond):
    *problem, X = vertex_batch(seed, cond)
    g = np.random.default_rng(seed + 10).normal(size=X.shape)
    ours = _torch_grads("penalty", problem, g)
    ref = _torch_grads("exact", problem, g)
    scale = _scale([r.numpy() for r in ref])
    assert float(ref[1].abs().max()) < 1e-6 * scale
    for name, a, r in zip(NAMES, ours, ref):
        assert float((a - r).abs().max()) <= 1e-6 * scale, name


def test_torch_vertex_gradient_matches_central_differences():
    """One problem of the batch: ∂L/∂q (0 at the vertex) and ∂L/∂b against differences."""
    Q, P, G, h, A, b, X = vertex_batch(2, 100.0, B=1)
    g = np.random.default_rng(3).normal(size=X.shape[1])
    args = [torch.tensor(a, requires_grad=True) for a in (Q, P[0], G, h, A, b[0])]
    x = QPFunction(verbose=-1)(*args)
    gq, gb = torch.autograd.grad((x[0] * torch.tensor(g)).sum(), (args[1], args[5]))

    def loss(qv: np.ndarray, bv: np.ndarray) -> float:
        s = dxpp.solve_qp(Q, qv, G, h, A, bv, solver="quadprog")
        return float(g @ s.x)

    step = 1e-6
    rng = np.random.default_rng(4)
    for _ in range(3):
        dq, db = rng.normal(size=P.shape[1]), rng.normal(size=b.shape[1])
        fd_q = (loss(P[0] + step * dq, b[0]) - loss(P[0] - step * dq, b[0])) / (2 * step)
        fd_b = (loss(P[0], b[0] + step * db) - loss(P[0], b[0] - step * db)) / (2 * step)
        scale = float(np.linalg.norm(gb.numpy()) * np.linalg.norm(db))
        assert abs(float(gq @ torch.tensor(dq)) - fd_q) <= 1e-6 * scale
        assert abs(float(gb @ torch.tensor(db)) - fd_b) <= 1e-6 * scale


@pytest.mark.parametrize(("seed", "cond"), [(0, 1.0), (2, 100.0)])
def test_jax_vertex_gradients_match_the_exact_adjoint(seed, cond):
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    import dxpp.jax as djax

    *problem, X = vertex_batch(seed, cond)
    g = np.random.default_rng(seed + 10).normal(size=X.shape)
    with jax.enable_x64(True):
        args = [jnp.asarray(a) for a in problem]
        ours = jax.grad(lambda *a: jnp.sum(djax.qp_solve(*a) * g), argnums=tuple(range(6)))(*args)
        ref = jax.grad(
            lambda *a: jnp.sum(djax.qp_solve(*a, mode="exact") * g), argnums=tuple(range(6))
        )(*args)
    scale = _scale(ref)
    for name, a, r in zip(NAMES, ours, ref):
        assert float(np.abs(np.asarray(a) - np.asarray(r)).max()) <= 1e-6 * scale, name


# -- a batch axis of size 1 -------------------------------------------------------------------
def _unit_batch_problem():
    rng = np.random.default_rng(0)
    n, m, p = 10, 5, 2
    L = rng.normal(size=(n, n))
    return dict(
        Q=(L @ L.T + np.eye(n))[None],
        q=rng.normal(size=(1, n)),
        G=rng.normal(size=(1, m, n)),
        h=np.ones((1, m)),
        A=rng.normal(size=(1, p, n)),
        b=np.zeros((1, p)),
    )


@pytest.mark.parametrize("name", NAMES)
def test_each_input_may_carry_a_batch_axis_of_size_one(name):
    base = _unit_batch_problem()
    ins = {k: torch.tensor(v) for k, v in base.items()}
    ins[name].requires_grad_(True)
    x = QPFunction(verbose=-1)(*ins.values())
    (grad,) = torch.autograd.grad((x * torch.arange(10.0, dtype=torch.float64)).sum(), ins[name])
    assert grad.shape == ins[name].shape
    # the same gradient as without the batch axis
    flat = {k: torch.tensor(v[0]) for k, v in base.items()}
    flat[name].requires_grad_(True)
    x2 = QPFunction(verbose=-1)(*flat.values())
    (grad2,) = torch.autograd.grad((x2 * torch.arange(10.0, dtype=torch.float64)).sum(), flat[name])
    assert torch.allclose(grad[0], grad2, rtol=1e-10, atol=1e-12)


def test_an_input_expanded_from_one_gets_its_own_shape():
    base = _unit_batch_problem()
    Q = torch.tensor(base["Q"][0], requires_grad=True)
    rest = [torch.tensor(base[k]) for k in NAMES[1:]]
    x = QPFunction(verbose=-1)(Q.unsqueeze(0).expand(1, 10, 10), *rest)
    (grad,) = torch.autograd.grad(x.sum(), Q)
    assert grad.shape == (10, 10)


# -- float32 ----------------------------------------------------------------------------------
def test_float32_optnet_parametrisation_is_accepted_and_stays_float32():
    """OptNet builds ``Q = L Lᵀ + εI`` in float32: symmetric only to float32 rounding."""
    torch.manual_seed(0)
    n, B = 10, 8
    Lraw = torch.randn(B, n, n, requires_grad=True)
    L = torch.tril(Lraw)
    Q = L @ L.mT + 1e-3 * torch.eye(n)
    # whether BLAS returns L Lᵀ bit-symmetric depends on the CPU's kernels (AVX2: no; some
    # AVX512 builds: yes); one float32 ulp above the diagonal makes the case the same everywhere
    Q = Q + torch.triu(Q.detach().abs() * torch.finfo(torch.float32).eps, 1)
    assert float((Q - Q.mT).detach().abs().max()) > 0  # the case: not bit-symmetric
    p = torch.randn(B, n, requires_grad=True)
    G, h = torch.randn(n // 2, n), torch.ones(n // 2)
    x = QPFunction(verbose=-1)(Q, p, G, h, torch.Tensor(), torch.Tensor())
    assert x.dtype == torch.float32
    gL, gp = torch.autograd.grad(x.square().sum(), (Lraw, p))
    assert gL.dtype == torch.float32 and gp.dtype == torch.float32
    assert torch.isfinite(gL).all() and torch.isfinite(gp).all()
    # the same layer in float64 agrees to float32 accuracy
    Q64 = Q.detach().double()
    x64 = QPFunction(verbose=-1)(0.5 * (Q64 + Q64.mT), p.detach().double(), G.double(), h.double())
    assert torch.allclose(x.double(), x64, rtol=1e-4, atol=1e-4)


def test_float32_tolerance_still_rejects_a_non_symmetric_q():
    Q = torch.eye(4)
    Q[0, 1] = 1e-3
    with pytest.raises(ValueError, match="symmetric"):
        QPFunction(verbose=-1)(Q, torch.ones(4))


def test_float64_symmetry_tolerance_is_unchanged():
    Q = np.eye(4)
    Q[0, 1] = 1e-6
    with pytest.raises(ValueError, match="symmetric"):
        dxpp.solve_qp(Q, np.ones(4))
    assert dxpp._validate.symmetry_tolerance(np.float32) == pytest.approx(1.19e-5, rel=0.01)
