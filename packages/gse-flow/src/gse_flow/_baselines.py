"""Deterministic baselines, trained by the same trainer (:func:`gse_flow.train` with
:func:`gse_flow.mse_loss`).

* :func:`constant_velocity`: ``x̂_{H+f} = x_H + f (x_H − x_{H−1})``.
* :class:`EGNN`: E(n)-equivariant GNN (Satorras, Hoogeboom, Welling, ICML 2021) with the
  history velocities as vector channels and all ``F`` future frames read out at once:

  .. math::

      m_{ij} = φ_e(h_i, h_j, \\lVert x_i − x_j \\rVert^2, ⟨V_i, V_j⟩),\\quad
      V_i ← (1 + φ_v(h_i)) ⊙ V_i + \\tfrac{1}{|N(i)|}\\sum_j (x_i − x_j)\\, φ_x(m_{ij})^\\top,\\quad
      h_i ← h_i + φ_h(h_i, \\textstyle\\sum_j m_{ij}),

  where ``V_i ∈ R^{F×3}`` starts as a learned channel mix of the ``H − 1`` history velocities
  (initialised to constant velocity) and ``x̂_{H+f} = x_H + V_{i,f}``.
* :class:`EquivariantGNN`: the GSE-Flow network without the flow: ``x̂ = μ + v_θ(μ, τ=0 | history)``
  with μ the prior mean, trained by MSE on x1; it isolates what the generative part adds.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from icml26_shared.checks import check_finite_array, check_positive_int

from ._layers import Graph, fast_init, masked_mean, safe_norm
from ._model import GSEFlow, check_key

__all__ = ["EGNN", "EquivariantGNN", "constant_velocity", "count_parameters"]


def constant_velocity(history: Any, n_future: int) -> np.ndarray:
    """Constant-velocity extrapolation of ``(..., H, N, 3)`` histories to ``(..., F, N, 3)``."""
    hist = check_finite_array(history, "history")
    if hist.ndim < 3 or hist.shape[-3] < 2:
        raise ValueError(f"history must have >= 2 frames (shape (..., H, N, 3)), got {hist.shape}")
    F = check_positive_int(n_future, "n_future")
    last, prev = hist[..., -1:, :, :], hist[..., -2:-1, :, :]
    steps = np.arange(1, F + 1).reshape(F, 1, 1)
    return last + steps * (last - prev)


def count_parameters(model: Any) -> int:
    """Number of trainable (inexact array) parameters of an equinox model."""
    leaves = jax.tree_util.tree_leaves(eqx.filter(model, eqx.is_inexact_array))
    return int(sum(x.size for x in leaves))


class _EGCL(eqx.Module):
    phi_e: eqx.nn.MLP
    phi_x: eqx.nn.MLP
    phi_v: eqx.nn.Linear
    phi_h: eqx.nn.MLP

    def __init__(self, hidden: int, n_vec: int, key: jax.Array):
        k = jax.random.split(key, 4)
        self.phi_e = eqx.nn.MLP(
            2 * hidden + 1 + n_vec, hidden, hidden, 1, jax.nn.silu, jax.nn.silu, key=k[0]
        )
        self.phi_x = eqx.nn.MLP(hidden, n_vec, hidden, 1, jax.nn.silu, key=k[1])
        self.phi_v = eqx.nn.Linear(hidden, n_vec, key=k[2])
        self.phi_h = eqx.nn.MLP(2 * hidden, hidden, hidden, 1, jax.nn.silu, key=k[3])

    def small(self) -> _EGCL:
        """Scale the coordinate updates down so the model starts at constant velocity."""
        return eqx.tree_at(
            lambda m: (
                m.phi_x.layers[-1].weight,
                m.phi_x.layers[-1].bias,
                m.phi_v.weight,
                m.phi_v.bias,
            ),
            self,
            (
                self.phi_x.layers[-1].weight * 0.01,
                self.phi_x.layers[-1].bias * 0.0,
                self.phi_v.weight * 0.01,
                self.phi_v.bias * 0.0,
            ),
        )

    def __call__(self, h, x, V, graph: Graph, scale: float):
        nb = graph.neighbors
        r = x[:, None, :] - x[nb]  # (N, D, 3), in the data's length unit
        d2 = jnp.sum(r * r, axis=-1, keepdims=True)
        dots = jnp.einsum("nfc,ndfc->ndf", V, V[nb]) / scale**2
        hi = jnp.broadcast_to(h[:, None], (*nb.shape, h.shape[-1]))
        m = jax.vmap(jax.vmap(self.phi_e))(jnp.concatenate([hi, h[nb], d2, dots], axis=-1))
        m = m * graph.mask[..., None]
        coef = jax.vmap(jax.vmap(self.phi_x))(m)  # (N, D, F)
        upd = masked_mean(
            jnp.einsum("ndf,ndc->ndfc", coef, r).reshape(*nb.shape, -1), graph.mask, (1,)
        )
        V = (1.0 + jax.vmap(self.phi_v)(h))[..., None] * V + upd.reshape(V.shape)
        h = h + jax.vmap(self.phi_h)(jnp.concatenate([h, jnp.sum(m, axis=1)], axis=-1))
        return h, V


def _build_egnn(node_attr_dim: int, n_history: int, n_future: int, hidden: int, n_layers: int, key):
    ks = jax.random.split(key, n_layers + 1)
    embed = eqx.nn.MLP(node_attr_dim + n_history - 1, hidden, hidden, 1, jax.nn.silu, key=ks[0])
    return embed, [_EGCL(hidden, n_future, ks[i + 1]) for i in range(n_layers)]


class EGNN(eqx.Module):
    """EGNN baseline (Satorras et al. 2021) predicting all F future frames at once.

    ``predict`` handles one window (vmap for batches); it is E(3)-equivariant.

    Args:
        n_history, n_future: H and F.
        node_attr_dim: node scalars S.
        hidden: width of the invariant channels.
        n_layers: EGCL layers.
        length_scale: typical frame displacement (normalises the velocity invariants).
        key: PRNG key.

    References:
        Satorras, Hoogeboom, Welling. "E(n) Equivariant Graph Neural Networks". ICML 2021.
    """

    embed: eqx.nn.MLP
    mix: jax.Array
    layers: list[_EGCL]
    n_history: int = eqx.field(static=True)
    n_future: int = eqx.field(static=True)
    length_scale: float = eqx.field(static=True)

    def __init__(
        self,
        *,
        n_history: int = 10,
        n_future: int = 20,
        node_attr_dim: int = 1,
        hidden: int = 64,
        n_layers: int = 4,
        length_scale: float = 1.0,
        key: jax.Array,
    ):
        check_key(key)
        self.n_history = check_positive_int(n_history, "n_history", minimum=2)
        self.n_future = check_positive_int(n_future, "n_future")
        hidden = check_positive_int(hidden, "hidden")
        n_layers = check_positive_int(n_layers, "n_layers")
        self.embed, layers = fast_init(
            _build_egnn, key, node_attr_dim, n_history, n_future, hidden, n_layers
        )
        self.layers = [layer.small() for layer in layers]
        mix = np.zeros((n_history - 1, n_future), np.float32)
        mix[-1] = np.arange(1, n_future + 1)  # constant velocity at initialisation
        self.mix = jnp.asarray(mix)
        self.length_scale = float(length_scale)

    def predict(self, history: jax.Array, node_attr: jax.Array, graph: Graph) -> jax.Array:
        """Future ``(F, N, 3)`` of one window ``history`` ``(H, N, 3)``."""
        x = history[-1] - jnp.mean(history[-1], axis=0)
        vel = jnp.diff(history, axis=0)  # (H-1, N, 3)
        speeds = safe_norm(vel).T / self.length_scale  # (N, H-1)
        h = jax.vmap(self.embed)(jnp.concatenate([node_attr.astype(x.dtype), speeds], axis=-1))
        V = jnp.einsum("kf,knc->nfc", self.mix, vel)  # (N, F, 3)
        for layer in self.layers:
            h, V = layer(h, x, V, graph, self.length_scale)
        return history[-1][None] + jnp.swapaxes(V, 0, 1)


class EquivariantGNN(eqx.Module):
    """Deterministic equivariant GNN: the GSE-Flow network without the flow.

    ``predict(history) = μ + v_θ(μ, τ = 0 | history)``, trained with :func:`gse_flow.mse_loss`.
    Takes the same keyword arguments as :class:`gse_flow.GSEFlow`.
    """

    net: GSEFlow

    def __init__(self, **kwargs: Any):
        self.net = GSEFlow(**kwargs)

    @property
    def n_future(self) -> int:
        return self.net.n_future

    def predict(self, history: jax.Array, node_attr: jax.Array, graph: Graph) -> jax.Array:
        """Future ``(F, N, 3)`` of one window."""
        mu = self.net.prior_mean(history)
        return mu + self.net(mu, jnp.zeros((), history.dtype), history, node_attr, graph)
