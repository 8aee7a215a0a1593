"""The GSE-Flow velocity network (our reconstruction from the paper's abstract).

One window holds ``H`` observed frames and ``F`` future frames of ``N`` nodes. The network
predicts the flow-matching velocity ``v_θ(x_τ, τ | history)`` of shape ``(F, N, 3)``:

1. **Centring and differences.** Positions are centred on the centroid of the last observed
   frame ``x_H``; every node-frame carries the vectors ``x_t − x_H`` (offset to its node's last
   observed position) and ``v_t = x_t − x_{t−1}`` (frame velocity), and scalars (node scalars,
   frame-index features, a history flag, the two vector norms).
2. **Time-modulated embedding** (future node-frames only). With ``γ, β`` MLPs of invariants only
   (τ embedding, speed norms, node scalars)

   .. math:: s \\leftarrow (1 + γ_s) \\odot s + β_s, \\qquad
             V_c \\leftarrow (1 + γ_{v,c}) V_c + β_{v,c}\\, v_t,

   an affine map that commutes with rotations because ``γ, β`` are invariant and ``v_t`` is a
   vector. It is applied after the embedding and in every future layer.
3. **Geometry-feature tensorization.** Each layer sends tensor-product messages
   ``w(|r|) ⊙ (h_j ⊗ Y(r̂))`` along spatial edges (per frame) and temporal edges (along each
   node's frames) and updates ``h ← h + Gate(Linear([h, m̄]))``.
4. **Context-flow fusion.** In future layer ``ℓ`` each node-frame also attends over all history
   frames of the node and of its neighbours: invariant attention
   ``α = softmax(⟨q(s_dst), k(s_src)⟩/√d + b(|r|))`` weights tensor-product messages of a
   projection of the history features of layer ``ℓ``. The history never reads the future, so
   its encoding (all layers, keys and values) is computed once per window and cached across
   ODE steps (:meth:`GSEFlow.encode_history`).
5. **Readout.** One ``1o`` channel per future node-frame, ``r = σ·out``. With
   ``parametrization="x1"`` (default) the endpoint is predicted with an EDM-style skip
   connection (Karras et al. 2022, written for the straight path):

   .. math:: x̂_1 = μ + c_{skip}(τ)(x_τ − μ) + \\frac{ρ(1 − τ)}{\\sqrt{D}}\\, r,\\qquad
             c_{skip} = \\frac{ρ^2 τ}{D},\\quad D = ρ^2τ^2 + (1 − τ)^2,

   i.e. ``E[x1 | x_τ]`` when the residual ``x1 − μ`` is Gaussian with scale ρσ (ρ =
   ``data_scale``, default 1), plus a learned correction; the velocity
   ``(x̂₁ − x_τ)/(1 − τ)`` then has the closed form

   .. math:: v_θ(x_τ, τ) = \\frac{τ(1 + ρ^2) − 1}{D}(x_τ − μ) + \\frac{ρ}{\\sqrt{D}}\\, r,

   finite on all of ``[0, 1]`` (no clipping at τ → 1) and the exact marginal field of that
   Gaussian case when ``r = 0``. With ``r = 0`` it maps ``x_0 − μ`` to ``ρ(x_0 − μ)``: ρ = 1
   passes all the prior noise through, and the network must learn to cancel it; on
   deterministic dynamics (N-body) a ρ < 1 makes the default field contract the noise.
   ``parametrization="x1-plain"`` is ``x̂₁ = μ + r`` and
   ``v = (x̂₁ − x_τ)/max(1 − τ, δ)`` (δ = ``tau_floor``): its Bayes-optimal readout gives
   ``v ≈ 0`` at τ = 1 instead of ``E[x1 − x0 | x1]``, so Heun is only first order there.
   ``parametrization="velocity"`` reads out ``v_θ = r`` directly. For ``"x1"`` the
   readout term's norm per node-frame is squashed, ``t ← t·cσ·tanh(|t|/cσ)/|t|`` for
   ``t = b(τ) r`` (``readout_bound`` c, default 6, in units of σ): since ``a(τ) ≤ 1`` and
   ``h·a(τ) ≥ −2`` on every uniform grid (``tests/test_stability.py``), every Euler step
   satisfies ``|d'| ≤ e^h |d| + h c σ`` for ``d = x − μ``, so samples stay within
   ``e(|x_0 − μ| + c σ)`` of the prior mean. σ may be one value per future frame
   (then ``r = σ_f·out`` and the anchor offset is divided by σ_f). The future
   node-frames also receive the anchor offset ``(x_τ − μ)/σ`` (a translation-invariant
   vector) and its norm, so the network knows its prior mean (essential in enhance mode).

Parity: by default the features are ``0e``, ``1o``, ``2e`` and the tensor products keep parity,
so the network is E(3)-equivariant (reflections too, like EGNN). ``chiral=True`` adds ``1e``
channels and lets ``0o`` paths (triple products) feed the scalar channels: SE(3)-equivariant
only, so mirror images get different predictions.

References:
    Wu, Liu, Yu, Sun. "Flow for Future: Geometric SE(3)-Equivariant Flow Matching for 3D
    Trajectory Prediction". ICML 2026 (OpenReview EBujA4tldV).
    Lipman et al. "Flow Matching for Generative Modeling". ICLR 2023.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import e3nn_jax as e3nn
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from icml26_shared.checks import check_choice, check_positive, check_positive_int

from ._layers import (
    Conv,
    Graph,
    _basis,
    fast_init,
    masked_mean,
    masked_softmax,
    relabel_pseudoscalars,
    safe_norm,
    temporal_index,
)

__all__ = [
    "PARAMETRIZATIONS",
    "PRIORS",
    "PRIOR_NOISES",
    "GSEFlow",
    "HistoryCache",
    "check_key",
    "correlate_noise",
    "precondition",
]

PRIORS = ("last", "cv")
PRIOR_NOISES = ("white", "walk")
PARAMETRIZATIONS = ("x1", "x1-plain", "velocity")


def check_key(key: Any, name: str = "key") -> jax.Array:
    """Raise a ``TypeError`` naming ``name`` unless ``key`` is a JAX PRNG key (a typed
    ``jax.random.key`` or a raw ``uint32`` ``(2,)`` ``jax.random.PRNGKey``)."""
    dtype = getattr(key, "dtype", None)
    shape = getattr(key, "shape", None)
    if dtype is not None and jnp.issubdtype(dtype, jax.dtypes.prng_key) and shape == ():
        return key
    if dtype is not None and dtype == jnp.uint32 and shape == (2,):
        return key
    got = f"{type(key).__name__}" + (f" of dtype {dtype}, shape {shape}" if dtype else "")
    raise TypeError(
        f"{name} must be a JAX PRNG key (jax.random.key(seed) or jax.random.PRNGKey(seed)), "
        f"got {got}"
    )


def _is_traced(*xs: Any) -> bool:
    return any(isinstance(x, jax.core.Tracer) for x in xs)


_N_TIME = 8


def _check_sigma(sigma: Any, n_future: int) -> float | tuple[float, ...]:
    """σ_p: a positive finite float, or ``n_future`` of them (one per future frame)."""
    if np.ndim(sigma) == 0:
        return check_positive(float(sigma), "sigma")
    arr = np.asarray(sigma, np.float64)
    if arr.shape != (n_future,) or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(
            f"sigma must be a positive float or {n_future} positive finite values (one per "
            f"future frame, n_future={n_future}), got shape {arr.shape}"
        )
    return tuple(float(v) for v in arr)


def precondition(tau: jax.Array, rho: float = 1.0) -> tuple[jax.Array, jax.Array]:
    """``(a, b)`` of the ``"x1"`` velocity ``v = a(τ)(x_τ − μ) + b(τ) r``:
    ``a = (τ(1 + ρ²) − 1)/D``, ``b = ρ/√D``, ``D = ρ²τ² + (1 − τ)²`` (finite on ``[0, 1]``;
    ρ = ``data_scale``, the assumed scale of the residual ``x1 − μ`` in units of σ; ρ = 1 gives
    ``a = (2τ − 1)/D``, ``b = 1/√D``). With ``r = 0`` the field maps ``x0 − μ`` to
    ``ρ (x0 − μ)``: it passes the fraction ρ of the prior noise through."""
    dd = (rho * tau) ** 2 + (1.0 - tau) ** 2
    # a ≤ 1 holds exactly (equality at τ = 1); the minimum removes float32 rounding above it,
    # which the sampler's stability bound assumes away.
    return jnp.minimum((tau * (1.0 + rho**2) - 1.0) / dd, 1.0), rho / jnp.sqrt(dd)


def correlate_noise(eps: jax.Array, kind: str = "white") -> jax.Array:
    """Shape white noise ``(..., F, N, 3)`` along the future frames (axis −3).

    ``"white"``: unchanged (independent frames). ``"walk"``: a normalised random walk,
    ``ε̃_f = (ε_1 + … + ε_f)/√f``: still unit variance in every frame, with correlation
    ``√(min(f, g)/max(f, g))`` between frames ``f`` and ``g``, so a sample is a smooth path
    rather than independent jitter per frame (the residual of a Langevin trajectory around its
    extrapolation grows like such a walk). Linear and acting on the time axis only, so it keeps
    the node mean at zero and commutes with rotations and node permutations.
    """
    check_choice(kind, "prior_noise", PRIOR_NOISES)
    if kind == "white":
        return eps
    F = eps.shape[-3]
    norm = jnp.sqrt(jnp.arange(1, F + 1, dtype=eps.dtype))[:, None, None]
    return jnp.cumsum(eps, axis=-3) / norm


class HistoryCache(NamedTuple):
    """Everything the future layers need from the history, computed once per window.

    Attributes:
        centre: ``(3,)`` centroid of the last observed frame.
        history: ``(H, N, 3)`` centred history positions.
        node_attr: ``(N, S)`` node scalars.
        graph: padded neighbour lists.
        sources: ``(H, N, D+1, 3)`` positions of each node's context sources (itself first,
            then its neighbours) in every history frame.
        source_mask: ``(N, D+1)`` which sources are real.
        keys: per future layer, ``(H, N, D+1, d_k)`` attention keys of the sources.
        values: per future layer, ``(H, N, D+1, irreps_ctx.dim)`` context values.
    """

    centre: jax.Array
    history: jax.Array
    node_attr: jax.Array
    graph: Graph
    sources: jax.Array
    source_mask: jax.Array
    keys: tuple[jax.Array, ...]
    values: tuple[jax.Array, ...]


def _time_embedding(tau: jax.Array) -> jax.Array:
    freqs = jnp.pi * 2.0 ** jnp.arange(_N_TIME // 2, dtype=tau.dtype)
    return jnp.concatenate([jnp.sin(freqs * tau), jnp.cos(freqs * tau)])


def _hidden_irreps(irreps_hidden: str | e3nn.Irreps, chiral: bool) -> e3nn.Irreps:
    irreps = e3nn.Irreps(irreps_hidden).regroup()
    if any(ir.p != (-1) ** ir.l for _, ir in irreps):
        raise ValueError(f"irreps_hidden must hold only 0e, 1o, 2e, ... irreps, got {irreps}")
    mul0 = irreps.count("0e")
    mul1 = irreps.count("1o")
    if mul0 < 1 or mul1 < 1:
        raise ValueError(f"irreps_hidden must contain 0e and 1o channels, got {irreps}")
    if chiral:
        irreps = (irreps + e3nn.Irreps(f"{mul1}x1e")).regroup()
    return irreps


def _gated(irreps: e3nn.Irreps) -> e3nn.Irreps:
    """Irreps of a Linear output that :func:`e3nn.gate` turns into ``irreps``."""
    n_gates = sum(mul for mul, ir in irreps if ir.l > 0)
    return (irreps + e3nn.Irreps(f"{n_gates}x0e")).regroup()


class _Update(eqx.Module):
    linear: e3nn.equinox.Linear
    irreps: e3nn.Irreps = eqx.field(static=True)

    def __init__(self, irreps_in: e3nn.Irreps, irreps: e3nn.Irreps, key: jax.Array):
        self.irreps = irreps
        self.linear = e3nn.equinox.Linear(
            irreps_out=_gated(irreps), irreps_in=irreps_in, force_irreps_out=True, key=key
        )

    def __call__(self, h: e3nn.IrrepsArray, *messages: e3nn.IrrepsArray) -> e3nn.IrrepsArray:
        x = e3nn.concatenate([h, *[relabel_pseudoscalars(m) for m in messages]], axis=-1)
        x = x.regroup()
        out = e3nn.gate(self.linear(x)).regroup()
        return e3nn.IrrepsArray(h.irreps, h.array + out.array)


def _concat_irreps(*irreps: e3nn.Irreps) -> e3nn.Irreps:
    total = e3nn.Irreps("")
    for ir in irreps:
        total = total + e3nn.Irreps([(mul, "0e" if i == e3nn.Irrep("0o") else i) for mul, i in ir])
    return total.regroup()


class _Modulation(eqx.Module):
    """Equivariant affine time modulation of scalar and vector channels."""

    mlp: eqx.nn.MLP
    mul0: int = eqx.field(static=True)
    mul1: int = eqx.field(static=True)

    def __init__(self, n_inv: int, mul0: int, mul1: int, width: int, key: jax.Array):
        self.mul0, self.mul1 = mul0, mul1
        self.mlp = eqx.nn.MLP(n_inv, 2 * mul0 + 2 * mul1, width, 1, jax.nn.silu, key=key)

    def identity(self) -> _Modulation:
        """The same module with a zero last layer: the identity map at initialisation."""
        last = self.mlp.layers[-1]
        return eqx.tree_at(
            lambda m: (m.mlp.layers[-1].weight, m.mlp.layers[-1].bias),
            self,
            (jnp.zeros_like(last.weight), jnp.zeros_like(last.bias)),
        )

    def __call__(self, h: e3nn.IrrepsArray, inv: jax.Array, vel: jax.Array) -> e3nn.IrrepsArray:
        lead = inv.shape[:-1]
        out = jax.vmap(self.mlp)(inv.reshape(-1, inv.shape[-1])).reshape(*lead, -1)
        m0, m1 = self.mul0, self.mul1
        g_s, b_s = out[..., :m0], out[..., m0 : 2 * m0]
        g_v, b_v = out[..., 2 * m0 : 2 * m0 + m1], out[..., 2 * m0 + m1 :]
        s = h.filter(keep="0e").array
        v = h.filter(keep="1o").array.reshape(*lead, m1, 3)
        s = (1.0 + g_s) * s + b_s
        v = (1.0 + g_v)[..., None] * v + b_v[..., None] * vel[..., None, :]
        rest = h.filter(drop=["0e", "1o"])
        parts = [
            e3nn.IrrepsArray(f"{m0}x0e", s),
            e3nn.IrrepsArray(f"{m1}x1o", v.reshape(*lead, 3 * m1)),
        ]
        out_arr = e3nn.concatenate([*parts, rest], axis=-1).regroup()
        return e3nn.IrrepsArray(h.irreps, out_arr.array)


class _HistoryLayer(eqx.Module):
    conv: Conv
    update: _Update

    def __init__(self, irreps: e3nn.Irreps, allowed: e3nn.Irreps, cfg: dict, key: jax.Array):
        k1, k2 = jax.random.split(key)
        self.conv = Conv(irreps, allowed, n_edge_features=2, key=k1, **cfg)
        self.update = _Update(_concat_irreps(irreps, self.conv.irreps_out), irreps, k2)


class _FutureLayer(eqx.Module):
    conv: Conv
    ctx_conv: Conv
    value: e3nn.equinox.Linear
    query: eqx.nn.Linear
    key_proj: eqx.nn.Linear
    bias: eqx.nn.Linear
    modulation: _Modulation
    update: _Update

    def __init__(
        self,
        irreps: e3nn.Irreps,
        allowed: e3nn.Irreps,
        irreps_ctx: e3nn.Irreps,
        n_inv: int,
        d_key: int,
        cfg: dict,
        key: jax.Array,
    ):
        ks = jax.random.split(key, 8)
        mul0 = irreps.count("0e")
        self.conv = Conv(irreps, allowed, n_edge_features=2, key=ks[0], **cfg)
        ctx_cfg = dict(cfg, sh_lmax=1)
        self.ctx_conv = Conv(irreps_ctx, allowed, n_edge_features=0, key=ks[1], **ctx_cfg)
        self.value = e3nn.equinox.Linear(irreps_out=irreps_ctx, irreps_in=irreps, key=ks[2])
        self.query = eqx.nn.Linear(mul0, d_key, key=ks[3])
        self.key_proj = eqx.nn.Linear(mul0, d_key, key=ks[4])
        self.bias = eqx.nn.Linear(cfg["n_basis"], 1, key=ks[5])
        self.modulation = _Modulation(n_inv, mul0, irreps.count("1o"), 32, ks[6])
        irreps_in = _concat_irreps(irreps, self.conv.irreps_out, self.ctx_conv.irreps_out)
        self.update = _Update(irreps_in, irreps, ks[7])


def _frame_features(n_frames: int, offset: int, total: int, dtype) -> jax.Array:
    t = (jnp.arange(n_frames, dtype=dtype) + offset) / total
    return jnp.stack([jnp.sin(np.pi * t), jnp.cos(np.pi * t), t], axis=-1)


def _build_parts(
    irreps_s: str,
    allowed_s: str,
    ctx_s: str,
    cfg_items: tuple,
    n_scalar: int,
    n_inv: int,
    d_key: int,
    n_layers: int,
    key: jax.Array,
) -> dict:
    """Create every sub-module (called through :func:`fast_init`)."""
    irreps, allowed, irreps_ctx = e3nn.Irreps(irreps_s), e3nn.Irreps(allowed_s), e3nn.Irreps(ctx_s)
    cfg = dict(cfg_items)
    mul0, mul1 = irreps.count("0e"), irreps.count("1o")
    keys = jax.random.split(key, 6 + 2 * n_layers)
    chiral = irreps.count("1e") > 0
    vec_in = e3nn.Irreps(f"{mul0}x0e+2x1o" + ("+1x1e" if chiral else ""))
    fut_in = e3nn.Irreps(f"{mul0}x0e+3x1o" + ("+1x1e" if chiral else ""))
    return {
        "embed_scalars": eqx.nn.MLP(n_scalar, mul0, 2 * mul0, 1, jax.nn.silu, key=keys[0]),
        "embed_hist": e3nn.equinox.Linear(
            irreps_out=irreps, irreps_in=vec_in, force_irreps_out=True, key=keys[1]
        ),
        "embed_fut": e3nn.equinox.Linear(
            irreps_out=irreps, irreps_in=fut_in, force_irreps_out=True, key=keys[2]
        ),
        "embed_mod": _Modulation(n_inv, mul0, mul1, 32, keys[3]),
        "history_layers": [
            _HistoryLayer(irreps, allowed, cfg, keys[6 + i]) for i in range(n_layers)
        ],
        "future_layers": [
            _FutureLayer(irreps, allowed, irreps_ctx, n_inv, d_key, cfg, keys[6 + n_layers + i])
            for i in range(n_layers)
        ],
        "readout": e3nn.equinox.Linear(irreps_out="1x1o", irreps_in=irreps, key=keys[4]),
    }


class GSEFlow(eqx.Module):
    """SE(3)/E(3)-equivariant flow-matching velocity network for trajectories (reconstruction).

    ``__call__`` handles one window; batch with ``jax.vmap``. See the module docstring for the
    architecture and :func:`gse_flow.flow_matching_loss` / :func:`gse_flow.sample` for use.

    Args:
        n_history: H, observed frames (>= 2).
        n_future: F, predicted frames.
        node_attr_dim: S, number of node scalars (e.g. 1 for charges).
        irreps_hidden: hidden irreps (only ``l``-even-parity ``0e, 1o, 2e, ...``).
        n_layers: message-passing layers (history and future each).
        chiral: SE(3)-only variant where pseudoscalar (``0o``) paths feed scalar channels.
        sh_lmax: spherical-harmonic degree of the messages.
        n_basis: Bessel radial basis size.
        cutoff: radial cutoff (in the data's length unit).
        radial_hidden: width of the radial MLPs.
        prior: ``"last"`` (x_H repeated) or ``"cv"`` (constant-velocity extrapolation) as the
            prior mean of x0.
        sigma: prior noise scale σ_p (also the scale of the readout): a float, or one value
            per future frame (length ``n_future``; see ``prior_scale(..., per_frame=True)``).
        length_scale: scale dividing the input offset and velocity vectors (the same rule as
            the EGNN's: the RMS frame displacement, see :func:`gse_flow.prior_scale`);
            distances in the radial basis stay in the data's unit.
        parametrization: ``"x1"`` (endpoint with the skip connection, closed-form finite
            velocity; default), ``"x1-plain"`` (0.2.0: ``v = (μ + r − x_τ)/max(1 − τ, δ)``) or
            ``"velocity"`` (``v = r``).
        tau_floor: δ, the floor on ``1 − τ`` in the ``"x1-plain"`` parametrisation.
        readout_bound: ``c``, bound on the norm of the readout term ``b(τ) r`` of the
            ``"x1"`` velocity per node-frame in units of σ: ``t ← t · cσ tanh(|t|/cσ)/|t|``,
            equivariant and ≈ ``t`` for ``|t| ≪ cσ``; it keeps the sampler's ODE bounded
            (``None``: no bound).
        data_scale: ρ in ``[0.05, 1]``, the scale of the residual ``x1 − μ`` the ``"x1"`` skip
            connection assumes, in units of σ (``c_skip = ρ²τ/D``, ``D = ρ²τ² + (1 − τ)²``).
            ρ = 1 (0.3.0) treats the residual as prior-sized noise: with ``r = 0`` the sampler
            passes all of the prior noise through, and the fraction it passes grows with the
            Euler steps (0, 0.5, 0.77, 0.88, 0.94 at 1, 2, 5, 10, 20 steps). ρ < 1 expects a
            residual that the history mostly determines (deterministic dynamics): the field
            contracts the noise to ρ by default.
        prior_noise: ``"white"`` (independent noise per future frame) or ``"walk"`` (noise
            correlated along time, a normalised random walk; :func:`gse_flow.correlate_noise`):
            ``x0 = μ + σ_f ε̃_f``, unit variance per frame either way.
        readout_init: scale of the readout's initial weights (``0``: the network starts at
            the Gaussian field ``r = 0``, i.e. the prior mean plus calibrated noise).
        history_window: temporal edges of the history encoder (``None``: all frame pairs).
        future_window: temporal edges of the future decoder (frames ``t ± k``, k <= window).
        key: PRNG key.

    References:
        Wu, Liu, Yu, Sun. ICML 2026 (OpenReview EBujA4tldV); reconstructed, not the authors' code.
    """

    embed_scalars: eqx.nn.MLP
    embed_hist: e3nn.equinox.Linear
    embed_fut: e3nn.equinox.Linear
    embed_mod: _Modulation
    history_layers: list[_HistoryLayer]
    future_layers: list[_FutureLayer]
    readout: e3nn.equinox.Linear
    irreps: e3nn.Irreps = eqx.field(static=True)
    n_history: int = eqx.field(static=True)
    n_future: int = eqx.field(static=True)
    node_attr_dim: int = eqx.field(static=True)
    chiral: bool = eqx.field(static=True)
    prior: str = eqx.field(static=True)
    sigma_bits: jax.Array
    length_scale: float = eqx.field(static=True)
    parametrization: str = eqx.field(static=True)
    tau_floor: float = eqx.field(static=True)
    readout_bound: float | None = eqx.field(static=True)
    data_scale: float = eqx.field(static=True)
    history_window: int | None = eqx.field(static=True)
    future_window: int = eqx.field(static=True)
    d_key: int = eqx.field(static=True)
    prior_noise: str = eqx.field(static=True)

    def __init__(
        self,
        *,
        n_history: int = 10,
        n_future: int = 20,
        node_attr_dim: int = 1,
        irreps_hidden: str = "32x0e+16x1o+8x2e",
        n_layers: int = 4,
        chiral: bool = False,
        sh_lmax: int = 2,
        n_basis: int = 8,
        cutoff: float = 5.0,
        radial_hidden: int = 32,
        prior: str = "last",
        sigma: float | Sequence[float] = 1.0,
        length_scale: float = 1.0,
        history_window: int | None = None,
        future_window: int = 1,
        parametrization: str = "x1",
        tau_floor: float = 0.05,
        readout_bound: float | None = 6.0,
        readout_init: float = 1.0,
        data_scale: float = 1.0,
        prior_noise: str = "white",
        key: jax.Array,
    ):
        check_key(key)
        self.prior_noise = check_choice(prior_noise, "prior_noise", PRIOR_NOISES)
        data_scale = float(data_scale)
        if not (np.isfinite(data_scale) and 0.05 <= data_scale <= 1.0):
            raise ValueError(f"data_scale must be in [0.05, 1], got {data_scale}")
        self.data_scale = data_scale
        self.parametrization = check_choice(parametrization, "parametrization", PARAMETRIZATIONS)
        tau_floor = check_positive(tau_floor, "tau_floor")
        if tau_floor >= 1.0:
            raise ValueError(f"tau_floor must be in (0, 1), got {tau_floor}")
        self.tau_floor = tau_floor
        self.n_history = check_positive_int(n_history, "n_history", minimum=2)
        self.n_future = check_positive_int(n_future, "n_future")
        self.node_attr_dim = check_positive_int(node_attr_dim, "node_attr_dim", minimum=0)
        n_layers = check_positive_int(n_layers, "n_layers")
        if chiral and n_layers < 2:
            raise ValueError(f"n_layers must be >= 2 when chiral=True, got {n_layers}")
        self.chiral = bool(chiral)
        self.prior = check_choice(prior, "prior", PRIORS)
        # σ_p as its float32 bit pattern: an input of compiled code rather than a constant
        # baked into it (models that differ only in σ_p share one compilation), and not an
        # inexact array, so no optimizer or parameter count ever sees it
        sig = np.asarray(_check_sigma(sigma, self.n_future), np.float32)
        self.sigma_bits = jnp.asarray(sig.view(np.uint32))
        self.readout_bound = (
            None if readout_bound is None else check_positive(readout_bound, "readout_bound")
        )
        if not (np.isfinite(readout_init) and readout_init >= 0):
            raise ValueError(f"readout_init must be a finite number >= 0, got {readout_init}")
        self.length_scale = check_positive(length_scale, "length_scale")
        if history_window is not None:
            history_window = check_positive_int(history_window, "history_window")
        self.history_window = history_window
        self.future_window = check_positive_int(future_window, "future_window")
        self.irreps = _hidden_irreps(irreps_hidden, chiral)
        check_positive_int(sh_lmax, "sh_lmax")
        allowed = self.irreps + e3nn.Irreps("0o") if chiral else self.irreps
        mul0 = self.irreps.count("0e")
        mul1 = self.irreps.count("1o")
        irreps_ctx = e3nn.Irreps(f"{max(mul0 // 4, 2)}x0e+{max(mul1 // 4, 2)}x1o")
        self.d_key = max(mul0 // 4, 4)
        cfg = dict(
            sh_lmax=sh_lmax,
            n_basis=check_positive_int(n_basis, "n_basis"),
            cutoff=check_positive(cutoff, "cutoff"),
            radial_hidden=check_positive_int(radial_hidden, "radial_hidden"),
        )
        n_scalar = self.node_attr_dim + 3 + 1 + 2
        n_inv = _N_TIME + 3 + self.node_attr_dim
        parts = fast_init(
            _build_parts,
            key,
            str(self.irreps),
            str(allowed),
            str(irreps_ctx),
            tuple(sorted(cfg.items())),
            n_scalar,
            n_inv,
            self.d_key,
            n_layers,
        )
        # the time modulations start at the identity map
        mods = [parts["embed_mod"], *[layer.modulation for layer in parts["future_layers"]]]
        mods = [m.identity() for m in mods]
        parts["embed_mod"] = mods[0]
        parts["future_layers"] = [
            eqx.tree_at(lambda layer: layer.modulation, layer, m)
            for layer, m in zip(parts["future_layers"], mods[1:])
        ]
        self.embed_scalars = parts["embed_scalars"]
        self.embed_hist = parts["embed_hist"]
        self.embed_fut = parts["embed_fut"]
        self.embed_mod = parts["embed_mod"]
        self.history_layers = parts["history_layers"]
        self.future_layers = parts["future_layers"]
        self.readout = jax.tree_util.tree_map(
            lambda w: w * readout_init if eqx.is_inexact_array(w) else w, parts["readout"]
        )

    # ------------------------------------------------------------------ helpers
    @property
    def sigma(self) -> float | tuple[float, ...]:
        """σ_p (float32-rounded): a float, or one value per future frame."""
        v = np.asarray(self.sigma_bits).view(np.float32)
        return float(v) if v.ndim == 0 else tuple(float(x) for x in v)

    def noise_scale(self, dtype: Any = jnp.float32) -> jax.Array:
        """σ_p as an array broadcastable to ``(F, N, 3)``: a scalar, or ``(F, 1, 1)``."""
        sig = jax.lax.bitcast_convert_type(self.sigma_bits, jnp.float32).astype(dtype)
        return sig[:, None, None] if sig.ndim == 1 else sig

    def correlate(self, eps: jax.Array) -> jax.Array:
        """White noise ``(..., F, N, 3)`` shaped by this model's ``prior_noise``
        (:func:`gse_flow.correlate_noise`); ``x0 = μ + σ · correlate(ε)``."""
        return correlate_noise(eps, self.prior_noise)

    def prior_mean(self, history: jax.Array) -> jax.Array:
        """Prior mean of x0, ``(F, N, 3)``: x_H repeated (``"last"``) or CV extrapolation."""
        last = history[-1]
        steps = jnp.arange(1, self.n_future + 1, dtype=history.dtype)[:, None, None]
        if self.prior == "cv":
            return last[None] + steps * (last - history[-2])[None]
        return jnp.broadcast_to(last[None], (self.n_future, *last.shape))

    def _embed(
        self,
        pos: jax.Array,
        prev: jax.Array,
        anchor: jax.Array,
        node_attr: jax.Array,
        frame_offset: int,
        is_history: bool,
        extra: jax.Array | None = None,
    ) -> tuple[e3nn.IrrepsArray, jax.Array, jax.Array]:
        """Features of a segment ``pos`` ``(T, N, 3)``; ``prev`` is the frame before it;
        ``extra`` ``(T, N, 3)`` an additional input vector (the future's anchor offset)."""
        T, N, _ = pos.shape
        dtype = pos.dtype
        offset = (pos - anchor[None]) / self.length_scale
        vel = jnp.diff(jnp.concatenate([prev[None], pos], axis=0), axis=0) / self.length_scale
        if is_history:  # the first observed frame has no predecessor
            vel = vel.at[0].set(0.0)
        frame = _frame_features(T, frame_offset, self.n_history + self.n_future, dtype)
        flag = jnp.full((T, N, 1), 1.0 if is_history else 0.0, dtype)
        norms = jnp.stack([safe_norm(offset), safe_norm(vel)], axis=-1)
        scal = jnp.concatenate(
            [
                jnp.broadcast_to(node_attr[None], (T, N, self.node_attr_dim)).astype(dtype),
                jnp.broadcast_to(frame[:, None], (T, N, 3)),
                flag,
                norms,
            ],
            axis=-1,
        ).reshape(T * N, -1)
        s = jax.vmap(self.embed_scalars)(scal).reshape(T, N, -1)
        vlist = [offset, vel] if extra is None else [offset, vel, extra]
        vecs = jnp.stack(vlist, axis=-2).reshape(T, N, 3 * len(vlist))
        parts = [
            e3nn.IrrepsArray(f"{s.shape[-1]}x0e", s),
            e3nn.IrrepsArray(f"{len(vlist)}x1o", vecs),
        ]
        if self.chiral:  # the pseudovector offset × velocity; with Y^1 it makes triple products
            cross = jnp.cross(offset, vel)
            scale = norms[..., :1] * norms[..., 1:] + 1e-3
            parts.append(e3nn.IrrepsArray("1x1e", cross / scale))
        x = e3nn.concatenate(parts, axis=-1)
        lin = self.embed_hist if is_history else self.embed_fut
        h = lin(x)
        h = e3nn.IrrepsArray(self.irreps, h.regroup().array)
        return h, vel, norms

    def _intra(
        self,
        layer: _HistoryLayer | _FutureLayer,
        h: e3nn.IrrepsArray,
        pos: jax.Array,
        graph: Graph,
        window: int | None,
    ) -> e3nn.IrrepsArray:
        """Spatial + temporal tensor-product messages within one segment ``(T, N)``, each kind
        mean-aggregated over the receiver's sources, then summed."""
        T, _, _ = pos.shape
        x = pos
        dtype = x.dtype
        nb = graph.neighbors
        # spatial: neighbours in the same frame
        h_sp = e3nn.IrrepsArray(h.irreps, h.array[:, nb])
        r_sp = x[:, :, None, :] - x[:, nb]
        e_sp = jnp.broadcast_to(jnp.asarray([1.0, 0.0], dtype), (*r_sp.shape[:-1], 2))
        m_sp = layer.conv(h_sp, r_sp, e_sp)
        mask_sp = jnp.broadcast_to(graph.mask[None], r_sp.shape[:-1])
        spatial = masked_mean(m_sp.array, mask_sp, (2,))
        # temporal: the same node in other frames of the segment
        idx, tmask = temporal_index(T, window)
        h_tm = e3nn.IrrepsArray(h.irreps, jnp.swapaxes(h.array[idx], 1, 2))  # (T, N, K, C)
        r_tm = x[:, :, None, :] - jnp.swapaxes(x[idx], 1, 2)
        e_tm = jnp.broadcast_to(jnp.asarray([0.0, 1.0], dtype), (*r_tm.shape[:-1], 2))
        m_tm = layer.conv(h_tm, r_tm, e_tm)
        mask_tm = jnp.broadcast_to(jnp.asarray(tmask, dtype)[:, None, :], r_tm.shape[:-1])
        temporal = masked_mean(m_tm.array, mask_tm, (2,))
        return e3nn.IrrepsArray(m_sp.irreps, spatial + temporal)

    # ------------------------------------------------------------------ public
    def encode_history(
        self, history: jax.Array, node_attr: jax.Array, graph: Graph
    ) -> HistoryCache:
        """Encode one window's history ``(H, N, 3)``; the result is reused for every ODE step.

        Raises:
            ValueError: if ``history`` is not ``(n_history, N, 3)`` or its node count differs
                from ``graph``'s or ``node_attr``'s.
        """
        if history.ndim != 3 or history.shape[0] != self.n_history or history.shape[2] != 3:
            raise ValueError(
                f"history must have shape ({self.n_history}, N, 3), got {tuple(history.shape)}"
            )
        N = history.shape[1]
        if graph.neighbors.shape[0] != N:
            raise ValueError(
                f"history has {N} nodes but graph has {graph.neighbors.shape[0]}: build the graph "
                f"with make_graph(edges, {N})"
            )
        if node_attr.shape != (N, self.node_attr_dim):
            raise ValueError(
                f"node_attr must have shape ({N}, {self.node_attr_dim}), got "
                f"{tuple(node_attr.shape)}"
            )
        centre = jnp.mean(history[-1], axis=0)
        hist = history - centre
        N = hist.shape[1]
        h, _, _ = self._embed(hist, hist[0], hist[-1], node_attr, 0, True)
        src = jnp.concatenate(
            [jnp.arange(N, dtype=graph.neighbors.dtype)[:, None], graph.neighbors], 1
        )
        src_mask = jnp.concatenate([jnp.ones((N, 1), graph.mask.dtype), graph.mask], 1)
        keys, values = [], []
        for hl, fl in zip(self.history_layers, self.future_layers):
            h = hl.update(h, self._intra(hl, h, hist, graph, self.history_window))
            values.append(fl.value(h).array[:, src])
            keys.append(jax.vmap(jax.vmap(fl.key_proj))(h.filter(keep="0e").array)[:, src])
        return HistoryCache(
            centre, hist, node_attr, graph, hist[:, src], src_mask, tuple(keys), tuple(values)
        )

    def _readout(
        self, cache: HistoryCache, x_tau: jax.Array, tau: jax.Array, anchor: jax.Array | None
    ) -> tuple[jax.Array, jax.Array]:
        """``(out, x)``: the readout ``σ·out`` ``(F, N, 3)`` and the centred ``x_τ``."""
        hist = cache.history
        expected = (self.n_future, hist.shape[1], 3)
        if tuple(x_tau.shape) != expected:
            raise ValueError(
                f"x_tau must have shape {expected} (n_future={self.n_future}), "
                f"got {tuple(x_tau.shape)}"
            )
        if anchor is not None and tuple(anchor.shape) != expected:
            raise ValueError(f"prior_mean must have shape {expected}, got {tuple(anchor.shape)}")
        F, N, _ = x_tau.shape
        H = hist.shape[0]
        x = x_tau - cache.centre
        sig = self.noise_scale(x.dtype)
        rel = (x - self._anchor(cache, anchor)) / sig
        h, vel, norms = self._embed(x, hist[-1], hist[-1], cache.node_attr, H, False, rel)
        dtype = x.dtype
        tau_emb = _time_embedding(jnp.asarray(tau, dtype))
        inv = jnp.concatenate(
            [
                jnp.broadcast_to(tau_emb, (F, N, _N_TIME)),
                norms,
                safe_norm(rel)[..., None],
                jnp.broadcast_to(cache.node_attr[None], (F, N, self.node_attr_dim)).astype(dtype),
            ],
            axis=-1,
        )
        h = self.embed_mod(h, inv, vel)
        # context geometry: future node-frame (f, i) vs source (h, src of i): (F, H, N, D+1, 3)
        r_ctx = x[:, None, :, None, :] - cache.sources[None]
        conv0 = self.future_layers[0].ctx_conv
        basis = _basis(safe_norm(r_ctx), conv0.n_basis, conv0.cutoff)
        mask = jnp.broadcast_to(cache.source_mask[None, None], r_ctx.shape[:-1])
        for layer, keys, values in zip(self.future_layers, cache.keys, cache.values):
            h = layer.modulation(h, inv, vel)
            intra = self._intra(layer, h, x, cache.graph, self.future_window)
            q = jax.vmap(jax.vmap(layer.query))(h.filter(keep="0e").array)
            logits = jnp.einsum("fnk,hndk->fhnd", q, keys) / np.sqrt(self.d_key)
            logits = logits + (basis @ layer.bias.weight[0]) + layer.bias.bias[0]
            alpha = masked_softmax(logits, mask, (1, 3))
            val = jnp.broadcast_to(values[None], (*r_ctx.shape[:-1], values.shape[-1]))
            msg = layer.ctx_conv(e3nn.IrrepsArray(layer.ctx_conv.irreps_src, val), r_ctx)
            ctx = jnp.einsum("fhnd,fhndc->fnc", alpha, msg.array)
            h = layer.update(h, intra, e3nn.IrrepsArray(msg.irreps, ctx))
        out = self.readout(h).array
        return sig * out, x

    def _squash(self, term: jax.Array) -> jax.Array:
        """Bound the norm of ``term`` (data units) per node-frame to ``c σ``:
        ``t ← t · cσ tanh(|t|/cσ)/|t|`` (equivariant, ≈ ``t`` for ``|t| ≪ cσ``)."""
        if self.readout_bound is None:
            return term
        cs = self.readout_bound * self.noise_scale(term.dtype)
        n = jnp.sqrt(jnp.sum(term * term, axis=-1, keepdims=True) + 1e-12 * cs**2)
        return term * (cs * jnp.tanh(n / cs) / n)

    def _anchor(self, cache: HistoryCache, prior_mean: jax.Array | None) -> jax.Array:
        """Centred prior mean μ ``(F, N, 3)``: the model's prior or ``prior_mean``."""
        if prior_mean is None:
            return self.prior_mean(cache.history)
        return prior_mean - cache.centre

    def denoise(
        self,
        cache: HistoryCache,
        x_tau: jax.Array,
        tau: jax.Array,
        prior_mean: jax.Array | None = None,
    ) -> jax.Array:
        """Predicted endpoint ``x̂₁(x_τ, τ | history)`` ``(F, N, 3)``: ``"x1-plain"``:
        ``μ + r``; otherwise ``x_τ + (1 − τ) v_θ`` (for ``"x1"`` this is
        ``μ + c_skip(x_τ − μ) + (1 − τ) r/√D``)."""
        if self.parametrization == "x1-plain":
            out, _ = self._readout(cache, x_tau, tau, prior_mean)
            return self._anchor(cache, prior_mean) + out + cache.centre
        return x_tau + (1.0 - tau) * self.velocity(cache, x_tau, tau, prior_mean)

    def velocity(
        self,
        cache: HistoryCache,
        x_tau: jax.Array,
        tau: jax.Array,
        prior_mean: jax.Array | None = None,
    ) -> jax.Array:
        """Velocity ``v_θ(x_τ, τ | history)`` ``(F, N, 3)`` from a cached history encoding
        (``prior_mean``: the enhance-mode anchor of the ``"x1"`` parametrisation)."""
        if self.parametrization == "x1-plain":
            x1 = self.denoise(cache, x_tau, tau, prior_mean)
            return (x1 - x_tau) / jnp.maximum(1.0 - tau, self.tau_floor)
        out, x = self._readout(cache, x_tau, tau, prior_mean)
        if self.parametrization == "velocity":
            return out
        a, b = precondition(jnp.asarray(tau, x.dtype), self.data_scale)
        return a * (x - self._anchor(cache, prior_mean)) + self._squash(b * out)

    def __call__(
        self,
        x_tau: jax.Array,
        tau: jax.Array,
        history: jax.Array,
        node_attr: jax.Array,
        graph: Graph,
        prior_mean: jax.Array | None = None,
    ) -> jax.Array:
        """Velocity for one window: ``x_tau`` ``(F, N, 3)``, scalar ``tau``, ``history``
        ``(H, N, 3)``, ``node_attr`` ``(N, S)``, ``graph`` from :func:`gse_flow.make_graph`;
        returns ``(F, N, 3)``.

        Raises:
            ValueError: on a shape mismatch (future length other than ``n_future``, node count
                differing from the graph's) or, outside ``jit``/``vmap``, non-finite inputs.
        """
        if not _is_traced(x_tau, tau, history, node_attr):
            for name, arr in (("x_tau", x_tau), ("tau", tau), ("history", history)):
                if not bool(jnp.all(jnp.isfinite(jnp.asarray(arr)))):
                    raise ValueError(f"{name} must be finite, got NaN or inf")
            # an eager e3nn-jax call dispatches hundreds of small ops (tens of seconds); compile
            return _call_jit(self, x_tau, tau, history, node_attr, graph, prior_mean)
        return _call(self, x_tau, tau, history, node_attr, graph, prior_mean)


def _call(model, x_tau, tau, history, node_attr, graph, prior_mean):
    cache = model.encode_history(history, node_attr, graph)
    return model.velocity(cache, x_tau, tau, prior_mean)


_call_jit = eqx.filter_jit(_call)
