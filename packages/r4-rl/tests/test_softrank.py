"""Soft rank against exact ranks, an independent QP solver, finite differences and torchsort."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from scipy.stats import rankdata

from r4_rl import soft_rank


def _qp_projection_cvxpy(z: np.ndarray) -> np.ndarray:
    cp = pytest.importorskip("cvxpy")
    m = len(z)
    w = np.arange(m, 0, -1.0)
    x = cp.Variable(m)
    cons = [cp.sum(x) == w.sum()]
    for k in range(1, m):
        for s in itertools.combinations(range(m), k):
            cons.append(cp.sum(x[list(s)]) <= w[:k].sum())
    cp.Problem(cp.Minimize(cp.sum_squares(x - z)), cons).solve(
        solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12
    )
    return np.asarray(x.value)


@pytest.mark.parametrize("m", [2, 3, 5, 8, 33])
@pytest.mark.parametrize("eps", [1e-4, 0.3, 1.0, 7.0])
def test_exact_ranks_when_gaps_at_least_eps(m, eps):
    rng = np.random.default_rng(m)
    v = rng.permutation(np.cumsum(eps * (1.0 + rng.exponential(size=m))) - 3.0)
    got = soft_rank(torch.tensor(v), eps).numpy()
    np.testing.assert_allclose(got, rankdata(v), rtol=0, atol=1e-12)


def test_gap_exactly_eps_is_still_exact():
    v = torch.tensor([0.0, 2.0, 1.0, 3.0], dtype=torch.float64)
    assert soft_rank(v, 1.0).tolist() == [1.0, 3.0, 2.0, 4.0]


@pytest.mark.parametrize("m", [2, 3, 4, 5, 6])
def test_equals_independent_qp_projection(m):
    rng = np.random.default_rng(10 + m)
    for _ in range(6):
        z = rng.normal(size=m) * rng.choice([0.2, 1.0, 4.0])
        ref = _qp_projection_cvxpy(z)
        got = soft_rank(torch.tensor(z), 1.0).numpy()
        np.testing.assert_allclose(got, ref, atol=1e-6)


def test_gradcheck_float64_batched():
    x = torch.randn(2, 3, 7, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda t: soft_rank(t, 0.6), (x,))


def test_gradient_matches_central_finite_differences():
    rng = np.random.default_rng(3)
    v = torch.tensor(rng.normal(size=6), dtype=torch.float64, requires_grad=True)
    weights = torch.tensor(rng.normal(size=6), dtype=torch.float64)
    (soft_rank(v, 0.8) * weights).sum().backward()
    h = 1e-6
    fd = []
    for i in range(6):
        e = torch.zeros(6, dtype=torch.float64)
        e[i] = h
        plus = (soft_rank(v.detach() + e, 0.8) * weights).sum()
        minus = (soft_rank(v.detach() - e, 0.8) * weights).sum()
        fd.append(float(plus - minus) / (2 * h))
    np.testing.assert_allclose(v.grad.numpy(), fd, atol=1e-7)


def test_batched_equals_row_by_row():
    x = torch.randn(4, 5, 9, dtype=torch.float64)
    rows = torch.stack([soft_rank(r, 1.3) for r in x.reshape(-1, 9)]).reshape(x.shape)
    assert torch.equal(soft_rank(x, 1.3), rows)


def test_facts_sum_limits_equivariance():
    torch.manual_seed(0)
    v = torch.randn(10, 12, dtype=torch.float64)
    r = soft_rank(v, 0.5)
    torch.testing.assert_close(r.sum(-1), torch.full((10,), 78.0, dtype=torch.float64))
    # eps -> 0: hard ranks; eps -> inf: mean rank
    hard = torch.tensor(np.apply_along_axis(rankdata, 1, v.numpy()))
    torch.testing.assert_close(soft_rank(v, 1e-9), hard, atol=1e-12, rtol=0)
    big = soft_rank(v, 1e9)
    torch.testing.assert_close(big, torch.full_like(big, 6.5), atol=1e-6, rtol=0)
    perm = torch.randperm(12)
    torch.testing.assert_close(soft_rank(v[:, perm], 0.5), r[:, perm])
    # every entry lies in [1, m]
    assert bool((r >= 1 - 1e-12).all()) and bool((r <= 12 + 1e-12).all())


def test_ties_get_equal_ranks_and_float32_works():
    v = torch.tensor([1.0, 1.0, 5.0])
    r = soft_rank(v, 0.1)
    assert r.dtype == torch.float32
    assert r.tolist() == [1.5, 1.5, 3.0]
    assert soft_rank(torch.tensor([4.0]), 1.0).tolist() == [1.0]


def test_equals_torchsort_l2():
    torchsort = pytest.importorskip("torchsort")
    x = torch.randn(16, 11, dtype=torch.float64)
    for eps in (0.1, 1.0, 5.0):
        ref = torchsort.soft_rank(x, regularization="l2", regularization_strength=eps)
        torch.testing.assert_close(soft_rank(x, eps), ref, atol=1e-5, rtol=0)


@pytest.mark.parametrize(
    ("v", "eps", "message"),
    [
        (torch.tensor([1.0, float("nan")]), 1.0, "v must be finite"),
        (torch.tensor([1.0, float("inf")]), 1.0, "v must be finite"),
        (torch.tensor([1, 2]), 1.0, "float32 or float64"),
        (torch.tensor([1 + 1j, 2]), 1.0, "real-valued"),
        (torch.tensor(1.0), 1.0, "at least one dimension"),
        (torch.tensor([1.0, 2.0]), 0.0, "eps must be"),
        (torch.tensor([1.0, 2.0]), -1.0, "eps must be"),
        (torch.tensor([1.0, 2.0]), float("nan"), "eps must be"),
        ([1.0, 2.0], 1.0, "torch.Tensor"),
    ],
)
def test_bad_input(v, eps, message):
    with pytest.raises(ValueError, match=message):
        soft_rank(v, eps)
