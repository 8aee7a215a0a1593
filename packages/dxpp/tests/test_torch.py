"""The torch adapter: gradcheck, batching, dtypes, sparse tensors, duals."""

import numpy as np
import pytest

import dxpp

torch = pytest.importorskip("torch")
from dxpp.torch import QPLayer  # noqa: E402


def _tensors(qp, dtype=torch.float64, grad=True):
    return [torch.tensor(a, dtype=dtype, requires_grad=grad) for a in qp]


def test_gradcheck_float64():
    qp = dxpp.random_dense_qp(6, 0)
    args = _tensors(qp)
    layer = QPLayer(solver="quadprog")

    def f(Q, q, G, h, A, b):
        return layer(0.5 * (Q + Q.T), q, G, h, A, b)

    assert torch.autograd.gradcheck(f, tuple(args), eps=1e-6, atol=1e-5, rtol=1e-4)


def test_batched_equals_per_problem(rel):
    qps = [dxpp.random_dense_qp(15, s) for s in range(3)]
    stacked = _tensors([np.stack(z) for z in zip(*qps)])
    xb = QPLayer()(*stacked)
    w = torch.tensor(np.random.default_rng(0).normal(size=(3, 15)))
    (xb * w).sum().backward()
    for k, qp in enumerate(qps):
        single = _tensors(qp)
        x = QPLayer()(*single)
        (x * w[k]).sum().backward()
        assert rel(xb[k].detach().numpy(), x.detach().numpy()) <= 1e-12
        for a, b in zip(stacked, single):
            assert rel(a.grad[k].numpy(), b.grad.numpy()) <= 1e-8


def test_shared_parameters_broadcast_over_batch():
    qp = dxpp.random_dense_qp(10, 1)
    Q, _, G, h, A, b = _tensors(qp)
    qs = torch.tensor(np.stack([qp.q, -qp.q]), requires_grad=True)
    x = QPLayer()(Q, qs, G, h, A, b)
    x.sum().backward()
    assert x.shape == (2, 10) and Q.grad.shape == (10, 10) and h.grad.shape == (10,)


def test_float32_in_float32_out():
    args = _tensors(dxpp.random_dense_qp(10, 2), dtype=torch.float32)
    x = QPLayer()(*args)
    assert x.dtype == torch.float32
    x.sum().backward()
    assert all(a.grad.dtype == torch.float32 for a in args)


def test_sparse_tensor_input(rel):
    qp = dxpp.random_sparse_qp(120, seed=3)

    def to_torch_sparse(M):
        coo = M.tocoo()
        idx = torch.tensor(np.vstack([coo.row, coo.col]), dtype=torch.int64)
        return torch.sparse_coo_tensor(idx, torch.tensor(coo.data), M.shape).coalesce()

    Qs, Gs = to_torch_sparse(qp.Q).requires_grad_(), to_torch_sparse(qp.G).requires_grad_()
    q = torch.tensor(qp.q, requires_grad=True)
    x = QPLayer()(Qs, q, Gs, torch.tensor(qp.h), to_torch_sparse(qp.A), torch.tensor(qp.b))
    x.sum().backward()
    assert Qs.grad.is_sparse
    dense = [
        torch.tensor(M.toarray() if hasattr(M, "toarray") else M, requires_grad=True) for M in qp
    ]
    xd = QPLayer()(*dense)
    xd.sum().backward()
    assert rel(x.detach().numpy(), xd.detach().numpy()) <= 1e-6
    assert rel(q.grad.numpy(), dense[1].grad.numpy()) <= 1e-5
    mask = qp.G.toarray() != 0
    assert rel(Gs.grad.to_dense().numpy(), dense[2].grad.numpy() * mask) <= 1e-5


def test_return_duals_and_partial_grads():
    qp = dxpp.random_dense_qp(8, 4)
    Q, q, G, h, A, b = _tensors(qp, grad=False)
    q.requires_grad_()
    x, nu, mu = QPLayer(return_duals=True)(Q, q, G, h, A, b)
    assert nu.shape == (8,) and mu.shape == (4,) and bool((nu >= 0).all())
    assert not nu.requires_grad
    x.sum().backward()
    assert q.grad is not None and Q.grad is None


def test_exact_mode_matches_penalty(rel):
    qp = dxpp.random_dense_qp(20, 5)
    grads = []
    for mode in ("penalty", "exact"):
        args = _tensors(qp)
        QPLayer(mode=mode)(*args).sum().backward()
        grads.append([a.grad.numpy() for a in args])
    for a, b in zip(*grads):
        assert rel(a, b) <= 1e-6


@pytest.mark.parametrize("refine", [0, 10])
def test_torch_backward_matches_the_numpy_core(refine, rel):
    """The torch.linalg backward and the numpy/scipy core are two implementations of the
    same adjoint: on a batch (different active sets) they agree to 1e-8 (``mode="penalty"``:
    at this size ``"auto"`` would take the reduced KKT solve)."""
    qps = [dxpp.random_dense_qp(30, s) for s in range(3)]
    stacked = dxpp.QP(*(np.stack(z) for z in zip(*qps)))
    g = np.random.default_rng(7).normal(size=(3, 30))
    args = _tensors(stacked)
    x = QPLayer(mode="penalty", refine=refine)(*args)
    (x * torch.tensor(g)).sum().backward()
    sol = dxpp.solve_qp(*stacked)
    ref = dxpp.qp_vjp(*stacked, sol, g, refine=refine)
    for a, b in zip(args, ref):
        assert rel(a.grad.numpy(), b) <= 1e-8


def test_weight_boost_path_matches_the_numpy_core(rel):
    """Long tied blocks of a chain projection (nearly dependent active rows) take the
    refinement + weight-boost path in both implementations."""
    y = np.cumsum(np.random.default_rng(0).normal(size=300)) * 0.05
    qp = dxpp.chain_projection_qp(y, sparse=False)
    g = np.random.default_rng(1).normal(size=300)
    args = [torch.tensor(a, requires_grad=True) for a in qp[:4]]
    x = QPLayer()(*args)
    (x @ torch.tensor(g)).backward()
    sol = dxpp.solve_qp(*qp)
    ref = dxpp.qp_vjp(*qp, sol, g)
    exact = dxpp.qp_vjp(*qp, sol, g, mode="exact")
    assert rel(args[1].grad.numpy(), ref.q) <= 1e-6
    assert rel(args[1].grad.numpy(), exact.q) <= 1e-3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_backward_runs_on_the_tensors_device(rel):
    qp = dxpp.random_dense_qp(20, 0)
    cpu = _tensors(qp)
    gpu = [torch.tensor(a, device="cuda", requires_grad=True) for a in qp]
    QPLayer()(*cpu).sum().backward()
    x = QPLayer()(*gpu)
    assert x.device.type == "cuda"
    x.sum().backward()
    for a, b in zip(gpu, cpu):
        assert a.grad.device.type == "cuda"
        assert rel(a.grad.cpu().numpy(), b.grad.numpy()) <= 1e-8


def test_penalty_lower_triangle_and_lu_fallback():
    """The penalty matrix is formed on and below the diagonal only (blocked syrk); the LU
    fallback (Cholesky fails: Q indefinite off the active rows) rebuilds the symmetric matrix
    and still solves the reduced KKT system."""
    from dxpp._torch_backward import _penalty_lower, torch_vjp

    rng = np.random.default_rng(3)
    n, k = 9, 5
    Q = torch.tensor(rng.normal(size=(2, n, n))).double()
    Q = Q + Q.mT
    X = torch.tensor(rng.normal(size=(2, k, n)))
    full = torch.baddbmm(Q, X.mT, X)
    assert torch.allclose(_penalty_lower(Q, X).tril(), full.tril(), rtol=0, atol=1e-12)
    # an indefinite Q with one equality row: H = Q + w aaᵀ is indefinite for any w
    Qi = torch.diag(torch.tensor([2.0, -1.0, 3.0], dtype=torch.float64))[None]
    Qi[0, 0, 2] = Qi[0, 2, 0] = 0.5
    A = torch.tensor([[[0.3, 0.0, 1.0]]], dtype=torch.float64)
    b = torch.zeros(1, 1, dtype=torch.float64)
    G = torch.zeros(1, 0, 3, dtype=torch.float64)
    h = torch.zeros(1, 0, dtype=torch.float64)
    x = torch.zeros(1, 3, dtype=torch.float64)
    g = torch.tensor([[1.0, 2.0, -1.0]], dtype=torch.float64)
    with pytest.warns(RuntimeWarning, match="not positive definite"):
        out = torch_vjp(Qi, G, h, A, b, x, h, b, torch.zeros(1, 0, dtype=torch.bool), g)
    K = np.zeros((4, 4))
    K[:3, :3], K[:3, 3], K[3, :3] = Qi[0].numpy(), A[0, 0].numpy(), A[0, 0].numpy()
    v = np.linalg.solve(K, np.r_[g[0].numpy(), 0.0])[:3]
    np.testing.assert_allclose(-out.q[0].numpy(), v, atol=1e-9)
