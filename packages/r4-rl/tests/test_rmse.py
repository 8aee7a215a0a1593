"""rMSE: zero exactly on margin-ordered vectors, positive on every inversion, invariances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from r4_rl import rmse_loss


@pytest.mark.parametrize("m", [2, 3, 4, 5, 6])
def test_zero_iff_ordered_exhaustive(m):
    ratings = torch.arange(m, dtype=torch.float64)
    rng = np.random.default_rng(m)
    for perm in itertools.permutations(range(m)):
        # a vector in the order `perm` with random consecutive gaps >= eps = 1
        values = np.cumsum(1.0 + rng.exponential(size=m))
        pred = torch.tensor(values[list(perm)], dtype=torch.float64)
        loss = float(rmse_loss(pred, ratings))
        if list(perm) == list(range(m)):
            assert loss == 0.0
        else:
            assert loss > 0.0


def test_zero_for_every_ordered_vector_with_margin():
    rng = np.random.default_rng(0)
    for _ in range(50):
        m = int(rng.integers(2, 9))
        pred = torch.tensor(np.cumsum(1.0 + rng.exponential(size=m)) - 4.0)
        assert float(rmse_loss(pred, torch.arange(m))) == 0.0


def test_gap_below_margin_is_penalised():
    assert float(rmse_loss(torch.tensor([0.0, 0.5, 2.0]), torch.tensor([0, 1, 2]))) > 0


@pytest.mark.parametrize("f", [torch.exp, lambda t: t**3, lambda t: 5 * t + 2])
def test_invariant_to_increasing_transforms_at_small_eps(f):
    rng = np.random.default_rng(1)
    for _ in range(20):
        m = int(rng.integers(2, 7))
        g = torch.tensor(rng.permutation(np.sort(rng.normal(size=m)) + 0.05 * np.arange(m)))
        ratings = torch.arange(m)
        base = float(rmse_loss(g, ratings, eps=1e-6))
        assert abs(float(rmse_loss(f(g), ratings, eps=1e-6)) - base) <= 1e-9


def test_batched_mean_over_items_and_gradient_flows():
    pred = torch.tensor([[0.5, 0.0, 5.0], [0.0, 2.0, 4.0]], requires_grad=True)
    loss = rmse_loss(pred, torch.tensor([[0, 1, 2], [0, 1, 2]]))
    first = rmse_loss(pred[0].detach(), torch.tensor([0, 1, 2]))
    torch.testing.assert_close(loss.detach(), first / 2)
    loss.backward()
    assert pred.grad[0].abs().sum() > 0 and pred.grad[1].abs().sum() == 0


@pytest.mark.parametrize(
    ("pred", "ratings", "eps", "message"),
    [
        (torch.tensor([1.0, 2.0]), torch.tensor([0, 1, 2]), 1.0, "shape of pred_returns"),
        (torch.tensor([1.0]), torch.tensor([0]), 1.0, "m >= 2"),
        (torch.tensor([1.0, float("nan")]), torch.tensor([0, 1]), 1.0, "must be finite"),
        (
            torch.tensor([1.0, 2.0]),
            torch.tensor([0.0, float("nan")]),
            1.0,
            "ratings must be finite",
        ),
        (torch.tensor([1.0, 2.0]), torch.tensor([0j, 1j]), 1.0, "real-valued"),
        (torch.tensor([1.0, 2.0]), torch.tensor([0, 1]), 0.0, "eps must be"),
    ],
)
def test_bad_input(pred, ratings, eps, message):
    with pytest.raises(ValueError, match=message):
        rmse_loss(pred, ratings, eps)


def test_inversion_by_more_than_the_margin_has_zero_gradient():
    """The projection is locally constant where no block pools: a documented limitation."""
    pred = torch.tensor([2.0, 0.0, 5.0], requires_grad=True)
    loss = rmse_loss(pred, torch.tensor([0, 1, 2]))
    loss.backward()
    assert float(loss.detach()) > 0 and float(pred.grad.abs().sum()) == 0.0
