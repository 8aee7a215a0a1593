"""Equivariant building blocks of the GSE-Flow network (our reconstruction).

A segment of ``T`` frames of ``N`` nodes holds ``(T, N)`` node-frames, each carrying an
:class:`e3nn_jax.IrrepsArray` of hidden features; messages travel along pairs of node-frames:

* spatial pairs: the graph's edges, repeated in every frame;
* temporal pairs: the same node at frames ``t`` and ``t ± k``;
* context pairs: a future node-frame reading the history frames of the node and of its neighbours.

Pairs are dense (padded neighbour lists, broadcast frames), never scatter-based, which is what
makes them fast on CPU. A message is the geometry-feature tensorization of the paper's abstract, as we reconstruct it:

.. math::

    m_{ij} = w(\\lVert r_{ij} \\rVert) \\odot \\big(h_j \\otimes Y^{l \\le l_{max}}(\\hat r_{ij})\\big),

an e3nn tensor product of the neighbour's features with the spherical harmonics of the relative
position, each output channel scaled by an invariant radial MLP of a Bessel basis with a smooth
polynomial cutoff. All distances use the double-``where`` safe norm (finite gradients at 0).

References:
    Wu, Liu, Yu, Sun. "Flow for Future: Geometric SE(3)-Equivariant Flow Matching for 3D
    Trajectory Prediction". ICML 2026 (OpenReview EBujA4tldV).
    Geiger & Smidt. "e3nn: Euclidean Neural Networks". arXiv:2207.09453, 2022.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import e3nn_jax as e3nn
import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

__all__ = [
    "Conv",
    "Graph",
    "fast_init",
    "make_graph",
    "masked_mean",
    "masked_softmax",
    "relabel_pseudoscalars",
    "safe_norm",
    "scale_by_mul",
    "seed_of",
    "temporal_index",
]


def safe_norm(r: jax.Array, axis: int = -1, keepdims: bool = False) -> jax.Array:
    """Euclidean norm with a finite (zero) gradient at the origin (double-``where`` trick)."""
    sq = jnp.sum(r * r, axis=axis, keepdims=keepdims)
    positive = sq > 0
    safe = jnp.where(positive, sq, 1.0)
    return jnp.where(positive, jnp.sqrt(safe), 0.0)


class Graph(NamedTuple):
    """A graph as padded neighbour lists (dense, scatter-free message passing).

    Attributes:
        neighbors: ``(N, D)`` int32, the senders of node ``i``'s incoming edges (padded with 0).
        mask: ``(N, D)`` 1.0 for a real neighbour, 0.0 for padding.
    """

    neighbors: jax.Array
    mask: jax.Array


def make_graph(edges: Any, n_nodes: int) -> Graph:
    """Padded neighbour lists from an edge index ``(2, E)`` of (sender, receiver) rows.

    Raises:
        ValueError: if ``edges`` is not ``(2, E)`` integers in ``[0, n_nodes)`` or has self-loops.
    """
    e = np.asarray(edges)
    if e.ndim != 2 or e.shape[0] != 2 or e.dtype.kind not in "iu":
        raise ValueError(f"edges must be an integer array of shape (2, E), got {e.dtype} {e.shape}")
    if e.size and (e.min() < 0 or e.max() >= n_nodes):
        raise ValueError(
            f"edges must index nodes in [0, {n_nodes - 1}], got range [{e.min()}, {e.max()}]"
        )
    if np.any(e[0] == e[1]):
        raise ValueError("edges must not contain self-loops, got sender == receiver")
    lists: list[list[int]] = [[] for _ in range(n_nodes)]
    for s, r in e.T:
        lists[int(r)].append(int(s))
    width = max(1, max((len(x) for x in lists), default=0))
    nb = np.zeros((n_nodes, width), np.int32)
    mask = np.zeros((n_nodes, width), np.float32)
    for i, x in enumerate(lists):
        nb[i, : len(x)] = x
        mask[i, : len(x)] = 1.0
    return Graph(jnp.asarray(nb), jnp.asarray(mask))


def masked_mean(x: jax.Array, mask: jax.Array, axes: tuple[int, ...]) -> jax.Array:
    """Mean of ``x[..., C]`` over ``axes`` where ``mask`` (same leading shape) is 1."""
    m = mask.astype(x.dtype)
    total = jnp.sum(x * m[..., None], axis=axes)
    count = jnp.sum(m, axis=axes)
    return total / jnp.maximum(count, 1.0)[..., None]


def masked_softmax(logits: jax.Array, mask: jax.Array, axes: tuple[int, ...]) -> jax.Array:
    """Softmax over ``axes`` restricted to ``mask == 1`` (attention over a node-frame's sources)."""
    neg = jnp.asarray(-1e30, logits.dtype)
    z = jnp.where(mask > 0, logits, neg)
    peak = jax.lax.stop_gradient(jnp.max(z, axis=axes, keepdims=True))
    e = jnp.exp(z - peak) * (mask > 0)
    return e / jnp.sum(e, axis=axes, keepdims=True)


def temporal_index(n_frames: int, window: int | None) -> tuple[np.ndarray, np.ndarray]:
    """Source frames ``(T, K)`` and mask for temporal pairs ``0 < |t − s| <= window``
    (``window=None``: every other frame, the history encoder's full temporal attention)."""
    w = n_frames - 1 if window is None else min(window, n_frames - 1)
    offsets = [k for k in range(-w, w + 1) if k != 0] or [0]
    t = np.arange(n_frames)[:, None] + np.asarray(offsets)[None, :]
    mask = ((t >= 0) & (t < n_frames) & (np.asarray(offsets)[None, :] != 0)).astype(np.float32)
    return np.clip(t, 0, n_frames - 1).astype(np.int32), mask


def seed_of(key: jax.Array) -> list[int]:
    """Integer words of a PRNG key (raw ``uint32`` or typed), to seed numpy."""
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.key_data(key)
    return [int(v) for v in np.asarray(key).ravel()]


@functools.lru_cache(maxsize=64)
def _shapes(build: Any, args: tuple, key: jax.ShapeDtypeStruct) -> Any:
    return eqx.filter_eval_shape(build, *args, key)


def fast_init(build: Any, key: jax.Array, *args: Any) -> Any:
    """Build ``build(*args, key)`` with its shapes only, then draw every weight with numpy.

    Equinox/e3nn constructors draw each weight with its own ``jax.random`` call, and on CPU
    each call is compiled separately (tens of seconds for one network). Here the module is
    traced abstractly (:func:`equinox.filter_eval_shape`, no compilation) and filled with the
    same laws: ``eqx.nn.Linear`` weights and biases ``U(±1/√fan_in)``, e3nn weights ``N(0, 1)``
    (their ``weight_std`` under the default ``path`` gradient normalization).

    The abstract module is cached per ``(build, args)`` (hashable ``args``), so models of one
    configuration share their static parts (e3nn's instruction objects compare by identity):
    a jitted function compiled for one of them is reused for the others, e.g. across seeds.
    """
    shapes = _shapes(build, args, jax.ShapeDtypeStruct(key.shape, key.dtype))
    rng = np.random.default_rng(seed_of(key))

    def fill(x: Any) -> Any:
        if isinstance(x, eqx.nn.Linear):
            fan_in = 1 if x.in_features == "scalar" else x.in_features
            lim = 1.0 / np.sqrt(fan_in)
            w = jnp.asarray(rng.uniform(-lim, lim, x.weight.shape), x.weight.dtype)
            new = eqx.tree_at(lambda m: m.weight, x, w)
            if x.bias is not None:
                b = jnp.asarray(rng.uniform(-lim, lim, x.bias.shape), x.bias.dtype)
                new = eqx.tree_at(lambda m: m.bias, new, b)
            return new
        if isinstance(x, jax.ShapeDtypeStruct):
            return jnp.asarray(rng.standard_normal(x.shape), x.dtype)
        return x

    return jax.tree_util.tree_map(
        fill, shapes, is_leaf=lambda x: isinstance(x, eqx.nn.Linear | jax.ShapeDtypeStruct)
    )


def _mul_index(irreps: e3nn.Irreps) -> np.ndarray:
    """For each component of ``irreps``, the index of its multiplicity channel."""
    out, k = [], 0
    for mul, ir in irreps:
        out.append(np.repeat(np.arange(k, k + mul), ir.dim))
        k += mul
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def scale_by_mul(x: e3nn.IrrepsArray, weights: jax.Array) -> e3nn.IrrepsArray:
    """Multiply every irrep channel of ``x`` by one invariant weight (``weights[..., num_irreps]``)."""
    idx = _mul_index(x.irreps)
    return e3nn.IrrepsArray(x.irreps, x.array * weights[..., idx])


def relabel_pseudoscalars(x: e3nn.IrrepsArray) -> e3nn.IrrepsArray:
    """Relabel ``0o`` channels as ``0e`` (the chiral variant: triple products feed scalars).

    This deliberately breaks reflection symmetry while keeping rotation symmetry: pseudoscalars
    are rotation-invariant, so using them as scalars is SE(3)- but not E(3)-equivariant.
    """
    irreps = e3nn.Irreps([(mul, "0e" if ir == e3nn.Irrep("0o") else ir) for mul, ir in x.irreps])
    return e3nn.IrrepsArray(irreps, x.array)


_RADIAL_GAIN = 4.0  # so that messages start at about the scale of the features


def _basis(d: jax.Array, n_basis: int, cutoff: float) -> jax.Array:
    """Bessel radial basis times a smooth polynomial envelope that vanishes at ``cutoff``."""
    x = jnp.clip(d / cutoff, 0.0, 1.0)
    env = e3nn.poly_envelope(5, 2)(x)
    return e3nn.bessel(d, n_basis, cutoff) * env[..., None] * np.sqrt(cutoff / 2.0)


class Conv(eqx.Module):
    """Radially weighted tensor product ``w(|r|) ⊙ (h_src ⊗ Y(r))`` for a list of pairs.

    Args:
        irreps_src: irreps of the source features.
        irreps_allowed: output irreps kept from the tensor product (the filter).
        sh_lmax: largest spherical-harmonic degree of ``Y``.
        n_basis: Bessel basis size.
        cutoff: radial cutoff (pairs beyond it send nothing).
        n_edge_features: extra invariant edge features appended to the radial basis.
        radial_hidden: width of the radial MLP.
        key: PRNG key.
    """

    radial: eqx.nn.MLP
    irreps_src: e3nn.Irreps = eqx.field(static=True)
    irreps_out: e3nn.Irreps = eqx.field(static=True)
    sh_irreps: e3nn.Irreps = eqx.field(static=True)
    filter_ir_out: tuple[str, ...] = eqx.field(static=True)
    n_basis: int = eqx.field(static=True)
    cutoff: float = eqx.field(static=True)

    def __init__(
        self,
        irreps_src: e3nn.Irreps,
        irreps_allowed: e3nn.Irreps,
        *,
        sh_lmax: int,
        n_basis: int,
        cutoff: float,
        n_edge_features: int,
        radial_hidden: int,
        key: jax.Array,
    ):
        self.irreps_src = e3nn.Irreps(irreps_src)
        self.sh_irreps = e3nn.Irreps.spherical_harmonics(sh_lmax, p=-1)
        self.filter_ir_out = tuple(sorted({str(ir) for _, ir in e3nn.Irreps(irreps_allowed)}))
        probe = e3nn.tensor_product(
            e3nn.zeros(self.irreps_src, ()),
            e3nn.zeros(self.sh_irreps, ()),
            filter_ir_out=self.filter_ir_out,
        )
        self.irreps_out = probe.irreps
        self.n_basis = n_basis
        self.cutoff = float(cutoff)
        self.radial = eqx.nn.MLP(
            n_basis + n_edge_features,
            self.irreps_out.num_irreps,
            radial_hidden,
            depth=2,
            activation=jax.nn.silu,
            key=key,
        )

    def __call__(
        self, h_src: e3nn.IrrepsArray, r: jax.Array, edge_features: jax.Array | None = None
    ) -> e3nn.IrrepsArray:
        """Messages for pairs with any leading shape: ``h_src`` ``(..., irreps_src)``,
        ``r`` ``(..., 3)``, ``edge_features`` ``(..., k)``."""
        d = safe_norm(r)
        feats = _basis(d, self.n_basis, self.cutoff)
        if edge_features is not None:
            feats = jnp.concatenate([feats, edge_features.astype(feats.dtype)], axis=-1)
        lead = feats.shape[:-1]
        w = jax.vmap(self.radial)(feats.reshape(-1, feats.shape[-1])).reshape(*lead, -1)
        w = _RADIAL_GAIN * w
        y = e3nn.spherical_harmonics(self.sh_irreps, r, normalize=True)
        tp = e3nn.tensor_product(h_src, y, filter_ir_out=self.filter_ir_out)
        return scale_by_mul(tp, w)
