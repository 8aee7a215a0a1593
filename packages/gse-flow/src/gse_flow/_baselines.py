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
* :func:`fit_noise` / :func:`noisy_samples`: any deterministic prediction turned into K samples
  by Gaussian noise with one scale per future frame and node, ``x̂ + s·r_{f,n}·ε̃`` (``r`` the
  RMS residual on validation windows, ε̃ white or random-walk noise along time), the multiplier
  ``s`` and the noise structure chosen by the energy score on those validation windows: the
  K-matched baselines a generative model is compared with.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from icml26_shared.checks import check_choice, check_finite_array, check_positive_int

from ._evaluate import energy_score
from ._layers import Graph, fast_init, masked_mean, safe_norm
from ._model import PRIOR_NOISES, GSEFlow, check_key, correlate_noise

__all__ = [
    "EGNN",
    "EquivariantGNN",
    "NoiseFit",
    "constant_velocity",
    "count_parameters",
    "fit_noise",
    "noisy_samples",
]

NOISE_MULTIPLIERS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5)


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


class NoiseFit(NamedTuple):
    """Gaussian noise around a deterministic predictor, chosen on validation windows.

    Attributes:
        scale: ``(F, N)`` noise standard deviation per future frame and node (per coordinate).
        structure: ``"white"`` or ``"walk"`` (:func:`gse_flow.correlate_noise`).
        multiplier: the chosen factor on the validation residual RMS.
        energy: validation energy score of the chosen noise.
    """

    scale: np.ndarray
    structure: str
    multiplier: float
    energy: float


def noisy_samples(pred: Any, noise: NoiseFit, key: jax.Array, k: int = 5) -> np.ndarray:
    """``k`` samples ``(B, k, F, N, 3)`` of ``pred`` ``(B, F, N, 3)`` plus ``noise``."""
    check_key(key)
    k = check_positive_int(k, "k")
    p = check_finite_array(pred, "pred", ndim=4)
    if p.shape[1:3] != noise.scale.shape:
        raise ValueError(
            f"pred must have shape (B, {noise.scale.shape[0]}, {noise.scale.shape[1]}, 3) "
            f"to match the noise scale, got {p.shape}"
        )
    eps = jax.random.normal(key, (p.shape[0], k, *p.shape[1:]), jnp.float32)
    eps = np.asarray(correlate_noise(eps, noise.structure))
    return (p[:, None] + noise.scale[None, None, :, :, None] * eps).astype(np.float32)


def fit_noise(
    pred: Any,
    future: Any,
    *,
    key: jax.Array,
    k: int = 5,
    multipliers: tuple[float, ...] = NOISE_MULTIPLIERS,
    structures: tuple[str, ...] = PRIOR_NOISES,
) -> NoiseFit:
    """Choose Gaussian noise for a deterministic predictor on validation windows.

    ``r_{f,n}`` is the RMS residual ``future − pred`` per future frame and node (over windows
    and coordinates); every ``(structure, s)`` pair of ``structures × multipliers`` is scored
    by the energy score of ``k`` samples ``pred + s·r·ε̃`` on the same windows (one fixed
    noise draw, so the comparison is paired) and the lowest wins.

    Args:
        pred: ``(B, F, N, 3)`` the predictor's validation output.
        future: ``(B, F, N, 3)`` the validation targets.
        key: PRNG key for the noise draw.
        k: samples per window K (the K of the comparison).
        multipliers: candidate factors ``s`` (positive).
        structures: candidate noise structures, among ``"white"`` and ``"walk"``.

    Returns:
        :class:`NoiseFit`.
    """
    check_key(key)
    k = check_positive_int(k, "k")
    p = check_finite_array(pred, "pred", ndim=4)
    y = check_finite_array(future, "future", ndim=4)
    if p.shape != y.shape:
        raise ValueError(f"pred must have the shape of future {y.shape}, got {p.shape}")
    if not multipliers or any(not (np.isfinite(m) and m > 0) for m in multipliers):
        raise ValueError(f"multipliers must be positive finite numbers, got {multipliers!r}")
    if not structures:
        raise ValueError("structures must name at least one of 'white', 'walk', got none")
    for st in structures:
        check_choice(st, "structures", PRIOR_NOISES)
    rms = np.sqrt(np.mean((y - p) ** 2, axis=(0, 3)))  # (F, N)
    best = None
    for st in structures:
        for m in multipliers:
            fit = NoiseFit(m * rms, st, float(m), float("nan"))
            es = energy_score(noisy_samples(p, fit, key, k), y)
            if best is None or es < best.energy:
                best = fit._replace(energy=es)
    return best
