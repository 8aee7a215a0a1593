"""A small numpy multilayer perceptron trained by Adam on a caller-supplied loss.

Used for both networks of DLPT: the structured response net θ_η(x) ∈ R^{q+1} (loss
mean (y − θ(x)ᵀφ(t))²) and the policy net g_ω(x) (loss −mean ψ_i(π_ω)). Inputs are standardised
with the training rows' mean and scale (stored in the net), hidden layers are ReLU, the output
layer is linear. Training: mini-batch Adam with decoupled weight decay on the weights, early
stopping on an inner validation split (the best epoch's parameters are kept).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

Array = NDArray[np.float64]
# loss(out, rows) -> (value, d value / d out), ``rows`` indexing the caller's data arrays
LossFn = Callable[[Array, NDArray[np.intp]], tuple[float, Array]]


@dataclass
class TrainConfig:
    """Optimiser settings (Adam, weight decay, early stopping)."""

    lr: float = 2e-3
    weight_decay: float = 0.05
    epochs: int = 200
    batch_size: int = 1024
    patience: int = 10
    val_fraction: float = 0.15


@dataclass
class MLP:
    """ReLU network ``sizes[0] → … → sizes[-1]`` with input standardisation."""

    weights: list[Array]
    biases: list[Array]
    x_mean: Array
    x_scale: Array
    history: list[float] = field(default_factory=list)

    @classmethod
    def init(cls, d_in: int, hidden: Sequence[int], d_out: int, rng: np.random.Generator) -> MLP:
        sizes = [d_in, *hidden, d_out]
        weights, biases = [], []
        for i, (a, b) in enumerate(itertools.pairwise(sizes)):
            last = i == len(sizes) - 2
            scale = 0.1 / np.sqrt(a) if last else np.sqrt(2.0 / a)
            # the output layer is drawn 16 wide and sliced, so nets that differ only in their
            # output width (degrees q of one CV comparison) share every initial weight
            width = max(b, 16) if last else b
            weights.append(rng.normal(0.0, scale, size=(a, width))[:, :b])
            biases.append(np.zeros(b))
        return cls(weights, biases, np.zeros(d_in), np.ones(d_in))

    def forward(self, X: Array) -> tuple[Array, list[Array]]:
        h = (X - self.x_mean) / self.x_scale
        acts = [h]
        for i, (W, b) in enumerate(zip(self.weights, self.biases)):
            h = h @ W + b
            if i < len(self.weights) - 1:
                h = np.maximum(h, 0.0)
            acts.append(h)
        return h, acts

    def __call__(self, X: Array) -> Array:
        return self.forward(X)[0]

    def backward(self, acts: list[Array], grad: Array) -> tuple[list[Array], list[Array]]:
        gW: list[Array] = [np.empty(0)] * len(self.weights)
        gb: list[Array] = [np.empty(0)] * len(self.weights)
        for i in range(len(self.weights) - 1, -1, -1):
            gW[i] = acts[i].T @ grad
            gb[i] = grad.sum(axis=0)
            if i > 0:
                grad = (grad @ self.weights[i].T) * (acts[i] > 0)
        return gW, gb

    def params(self) -> list[Array]:
        return [*self.weights, *self.biases]

    def copy_params(self) -> list[Array]:
        return [p.copy() for p in self.params()]

    def set_params(self, params: list[Array]) -> None:
        k = len(self.weights)
        self.weights = [p.copy() for p in params[:k]]
        self.biases = [p.copy() for p in params[k:]]


def train(
    net: MLP,
    X: Array,
    loss: LossFn,
    config: TrainConfig,
    rng: np.random.Generator,
    rows: NDArray[np.intp] | None = None,
) -> MLP:
    """Fit ``net`` on rows ``rows`` of ``X`` (all by default) minimising ``loss``.

    A ``val_fraction`` of the rows is held out for early stopping (no patience improvement →
    stop, restore the best parameters). ``loss`` receives the net's outputs and the data row
    indices they belong to and returns the mean loss and its gradient w.r.t. the outputs.
    """
    rows = np.arange(X.shape[0]) if rows is None else np.asarray(rows)
    perm = rng.permutation(rows)
    n_val = max(1, round(config.val_fraction * perm.size))
    val, tr = perm[:n_val], perm[n_val:]
    net.x_mean = X[tr].mean(axis=0)
    sd = X[tr].std(axis=0)
    net.x_scale = np.where(sd > 1e-12, sd, 1.0)
    best_params = net.copy_params()
    with threadpool_limits(limits=1, user_api="blas"):
        _epochs(net, X, loss, config, rng, tr, val, best_params)
    return net


def _epochs(
    net: MLP,
    X: Array,
    loss: LossFn,
    config: TrainConfig,
    rng: np.random.Generator,
    tr: NDArray[np.intp],
    val: NDArray[np.intp],
    best_params: list[Array],
) -> None:
    params = net.params()
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    b1, b2, eps = 0.9, 0.999, 1e-8
    step, best, bad = 0, np.inf, 0
    n_w = len(net.weights)
    for _epoch in range(config.epochs):
        order = rng.permutation(tr)
        for start in range(0, order.size, config.batch_size):
            idx = order[start : start + config.batch_size]
            out, acts = net.forward(X[idx])
            _, g = loss(out, idx)
            gW, gb = net.backward(acts, g)
            step += 1
            lr_t = config.lr * np.sqrt(1 - b2**step) / (1 - b1**step)
            for j, (p, gp) in enumerate(zip(net.params(), [*gW, *gb])):
                m[j] = b1 * m[j] + (1 - b1) * gp
                v[j] = b2 * v[j] + (1 - b2) * gp * gp
                p -= lr_t * m[j] / (np.sqrt(v[j]) + eps)
                if j < n_w:
                    p -= config.lr * config.weight_decay * p
        val_loss = loss(net(X[val]), val)[0]
        net.history.append(float(val_loss))
        if not np.isfinite(best) or val_loss < best - 1e-7 * max(1.0, abs(best)):
            best, bad = val_loss, 0
            best_params[:] = net.copy_params()
        else:
            bad += 1
            if bad >= config.patience:
                break
    net.set_params(best_params)
