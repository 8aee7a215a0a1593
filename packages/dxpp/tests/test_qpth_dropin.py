"""dxpp.torch.QPFunction is a drop-in for qpth.qp.QPFunction: same conventions, same training."""

import copy

import numpy as np
import pytest

import dxpp

torch = pytest.importorskip("torch")
from dxpp.torch import QPFunction, QPLayer  # noqa: E402


class OptNetLayer(torch.nn.Module):
    """OptNet's QP layer (Amos & Kolter 2017, sec. 5): p from the input, Q = LLᵀ + εI, G and
    h = Gz₀ + s₀ learned and shared over the batch, no equalities (qpth's empty tensors)."""

    def __init__(self, qp_function, nfeat=5, nz=6, nineq=8):
        super().__init__()
        self.qp_function = qp_function
        self.fc = torch.nn.Linear(nfeat, nz).double()
        self.L = torch.nn.Parameter(torch.tril(torch.rand(nz, nz, dtype=torch.float64)))
        self.G = torch.nn.Parameter(torch.rand(nineq, nz, dtype=torch.float64) - 0.5)
        self.z0 = torch.nn.Parameter(torch.zeros(nz, dtype=torch.float64))
        self.s0 = torch.nn.Parameter(torch.ones(nineq, dtype=torch.float64))

    def forward(self, x):
        nz = self.L.shape[0]
        Q = self.L @ self.L.T + 1e-3 * torch.eye(nz, dtype=torch.float64)
        h = self.G @ self.z0 + self.s0
        e = torch.Tensor()
        return self.qp_function(verbose=-1)(Q, self.fc(x), self.G, h, e, e)


def _train(model, X, Y, steps=6, lr=0.05):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        loss = torch.nn.functional.mse_loss(model(X), Y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return np.array(losses)


def test_trains_like_qpth():
    from qpth.qp import QPFunction as QpthFunction

    torch.manual_seed(0)
    ours = OptNetLayer(QPFunction)
    theirs = copy.deepcopy(ours)
    theirs.qp_function = QpthFunction
    X = torch.randn(16, 5, dtype=torch.float64)
    Y = torch.randn(16, 6, dtype=torch.float64)
    l_ours, l_theirs = _train(ours, X, Y), _train(theirs, X, Y)
    assert l_ours[-1] < l_ours[0]  # it trains
    np.testing.assert_allclose(l_ours, l_theirs, rtol=0, atol=1e-5)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=0, atol=1e-5)


def test_empty_tensors_mean_no_constraints_and_output_is_batched():
    Q = torch.eye(3, dtype=torch.float64)
    p = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    e = torch.Tensor()
    x = QPFunction(verbose=-1)(Q, p, e, e, e, e)
    assert x.shape == (1, 3)
    np.testing.assert_allclose(x.numpy()[0], -p.numpy(), atol=1e-7)
    G, h = torch.ones(1, 3, dtype=torch.float64), torch.zeros(1, dtype=torch.float64)
    x = QPFunction()(Q, p.expand(4, 3), G, h, e, e)
    assert x.shape == (4, 3) and float(x.sum(-1).max()) <= 1e-7
    with pytest.raises(ValueError, match="G and h must both be empty or both be given"):
        QPFunction()(Q, p, G, e, e, e)


def test_broadcast_gradient_is_qpths_mean_or_the_sum():
    qp = dxpp.random_dense_qp(8, 0)
    ps = torch.tensor(np.stack([qp.q, 0.5 * qp.q, -qp.q]))
    grads = {}
    for conv in ("mean", "sum"):
        Q = torch.tensor(qp.Q, requires_grad=True)
        QPFunction(broadcast_grad=conv)(Q, ps, *(torch.tensor(a) for a in qp[2:])).sum().backward()
        grads[conv] = Q.grad
    Q = torch.tensor(qp.Q, requires_grad=True)
    QPLayer()(Q, ps, *(torch.tensor(a) for a in qp[2:])).sum().backward()
    # QPLayer solves at its own tolerance (1e-9, QPFunction at max(eps, 1e-10)): equal to 1e-6
    np.testing.assert_allclose(grads["sum"].numpy(), Q.grad.numpy(), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(grads["mean"].numpy(), grads["sum"].numpy() / 3, rtol=1e-12)


def test_bad_qpfunction_options():
    with pytest.raises(ValueError, match="broadcast_grad must be one of"):
        QPFunction(broadcast_grad="max")
    with pytest.raises(ValueError, match="eps must be a number > 0"):
        QPFunction(eps=-1.0)
    with pytest.raises(ValueError, match="maxIter must be an integer >= 1"):
        QPFunction(maxIter=0)
