"""The batched ProxQP forward for many small dense QPs equals the per-problem path."""

import numpy as np
import pytest

import dxpp
from dxpp import _batched
from dxpp._validate import canonicalize


def optnet_batch(B: int, n: int, m: int, p: int, seed: int = 0, shared_G: bool = False):
    """OptNet-style feasible QPs: ``Q = LLᵀ/n + 1e-3 I``, ``h = Gz + s``, ``b = Az``."""
    rng = np.random.default_rng(seed)
    L = rng.normal(size=(B, n, n))
    Q = L @ L.transpose(0, 2, 1) / n + 1e-3 * np.eye(n)
    q = rng.normal(size=(B, n))
    G = rng.normal(size=(m, n)) if shared_G else rng.normal(size=(B, m, n))
    z = rng.normal(size=(B, n))
    Gz = z @ G.T if shared_G else np.einsum("bij,bj->bi", G, z)
    h = Gz + rng.uniform(0, 1, size=(B, m))
    A = rng.normal(size=(B, p, n))
    b = np.einsum("bij,bj->bi", A, z)
    return Q, q, G if m else None, h if m else None, A if p else None, b if p else None


def _per_problem(monkeypatch, *qp):
    with monkeypatch.context() as mp:
        mp.setattr(_batched, "BATCH_MAX_N", 0)
        return dxpp.solve_qp(*qp)


@pytest.mark.parametrize(
    ("m", "p", "shared_G"), [(10, 3, False), (10, 0, True), (0, 4, False), (0, 0, False)]
)
def test_batched_forward_equals_the_per_problem_path(monkeypatch, m, p, shared_G):
    qp = optnet_batch(16, 10, m, p, seed=m + p, shared_G=shared_G)
    data = canonicalize(*qp)
    assert _batched.use_batched(data, "proxqp", None)
    ours = dxpp.solve_qp(*qp)
    assert "batched" in ours.solver
    ref = _per_problem(monkeypatch, *qp)
    assert "batched" not in ref.solver
    np.testing.assert_allclose(ours.x, ref.x, atol=1e-7)
    np.testing.assert_allclose(ours.nu, ref.nu, atol=1e-6)
    np.testing.assert_allclose(ours.mu, ref.mu, atol=1e-6)
    assert ours.active.size == 0 or (ours.active == ref.active).mean() >= 0.99


def test_batched_gradients_equal_the_per_problem_path(monkeypatch):
    torch = pytest.importorskip("torch")
    from dxpp.torch import QPFunction

    qp = optnet_batch(32, 12, 12, 3, seed=7)

    def grads():
        ins = [torch.tensor(a, requires_grad=True) for a in qp]
        x = QPFunction(verbose=-1)(*ins)
        return [g.numpy() for g in torch.autograd.grad(x.square().sum(), ins)]

    ours = grads()
    with monkeypatch.context() as mp:
        mp.setattr(_batched, "BATCH_MAX_N", 0)
        ref = grads()
    for a, r in zip(ours, ref):
        assert np.abs(a - r).max() <= 1e-5 * np.abs(r).max()


def test_an_infeasible_problem_in_a_batch_is_named(monkeypatch):
    Q, q, G, h, _, _ = optnet_batch(8, 6, 6, 0, seed=3)
    G = np.concatenate(
        [G, np.tile(np.eye(6)[:1], (8, 1, 1)), -np.tile(np.eye(6)[:1], (8, 1, 1))], 1
    )
    h = np.concatenate([h, np.ones((8, 1)), np.ones((8, 1))], 1)
    h[5, -2:] = [-1.0, -1.0]  # x_0 <= -1 and x_0 >= 1: infeasible
    with pytest.raises(dxpp.QPError, match="batch 5"):
        dxpp.solve_qp(Q, q, G, h)


def test_size_rules():
    small = canonicalize(*optnet_batch(8, 10, 5, 0))
    assert _batched.use_batched(small, "proxqp", None)
    assert not _batched.use_batched(small, "piqp", None)
    assert not _batched.use_batched(small, "proxqp", {"max_iter": 10})
    few = canonicalize(*optnet_batch(2, 10, 5, 0))
    assert not _batched.use_batched(few, "proxqp", None)
    big = canonicalize(*optnet_batch(4, _batched.BATCH_MAX_N + 1, 5, 0))
    assert not _batched.use_batched(big, "proxqp", None)


def test_the_batched_solve_leaves_torch_threads_as_they_were():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        dxpp.solve_qp(*optnet_batch(8, 6, 6, 0))
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_the_torch_backward_reuses_the_forwards_norm_of_q(monkeypatch):
    torch = pytest.importorskip("torch")
    from dxpp import _torch_backward
    from dxpp.torch import QPFunction

    def no_power_iteration(Q):
        raise AssertionError("the backward recomputed ||Q||")

    monkeypatch.setattr(_torch_backward, "spectral_norm", no_power_iteration)
    for B in (1, 8):  # the per-problem and the batched forward
        ins = [torch.tensor(a, requires_grad=True) for a in optnet_batch(B, 6, 6, 2, seed=B)]
        QPFunction(verbose=-1)(*ins).square().sum().backward()
        assert all(torch.isfinite(t.grad).all() for t in ins)
