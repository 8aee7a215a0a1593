"""Per-image visual features from segmentation maps (MetaStreet, ICML 2026, visual channel).

For a category map ``M`` with ``K`` kept categories:

* proportions ``p_k = #{pixels with M = k} / #{pixels with a kept category}``;
* adjacency ``A_kl`` = number of horizontal plus vertical 4-neighbour pixel pairs with categories
  ``k != l`` (counted in both orders, so ``A`` is symmetric), divided by the total boundary
  count; entries below ``prune`` (1 %) of the boundary mass are set to 0; ``Ã = A + I``;
* category embeddings ``E`` (``K x dim``) from skip-gram with negative sampling on per-image
  "sentences" (categories present, ordered by area, window = whole sentence);
* image vector ``v = vec(Ã (p ⊙ E))`` of length ``K * dim``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from numpy.typing import NDArray

from icml26_shared.checks import SeedLike, int_from_seed

__all__ = [
    "adjacency_matrix",
    "batch_adjacency",
    "batch_image_features",
    "batch_proportions",
    "check_map",
    "image_features",
    "proportions",
    "skipgram_embeddings",
    "top_categories",
]


def check_map(m: object, n_all: int, name: str = "map") -> NDArray[np.int64]:
    """Return ``m`` as a 2-D int64 array of ids in ``[0, n_all)`` or raise naming ``name``."""
    arr = np.asarray(m)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D category map, got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer category ids, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty")
    if arr.min() < 0 or arr.max() >= n_all:
        raise ValueError(
            f"{name} category ids must lie in [0, {n_all}), got range [{arr.min()}, {arr.max()}]"
        )
    return arr.astype(np.int64, copy=False)


def _remap(m: NDArray[np.int64], keep: NDArray[np.int64], n_all: int) -> NDArray[np.int64]:
    lut = np.full(n_all, -1, dtype=np.int64)
    lut[keep] = np.arange(keep.size)
    return lut[m]


def proportions(m: NDArray[np.int64], keep: NDArray[np.int64], n_all: int) -> NDArray[np.float64]:
    """Area share of each kept category (ignored categories are left out of the total)."""
    r = _remap(m, keep, n_all).ravel()
    r = r[r >= 0]
    counts = np.bincount(r, minlength=keep.size).astype(np.float64)
    return counts / max(counts.sum(), 1.0)


def adjacency_matrix(
    m: NDArray[np.int64],
    keep: NDArray[np.int64],
    n_all: int,
    *,
    prune: float = 0.01,
    normalise: bool = True,
) -> NDArray[np.float64]:
    """Boundary counts between kept categories (symmetric, zero diagonal), see module doc.

    With ``normalise=False`` the raw symmetric counts are returned (no pruning).

    >>> m = np.array([[0, 0], [1, 1]])
    >>> adjacency_matrix(m, np.array([0, 1]), 2, normalise=False)
    array([[0., 2.],
           [2., 0.]])
    """
    r = _remap(m, keep, n_all)
    k = keep.size
    pairs = [(r[:, :-1], r[:, 1:]), (r[:-1, :], r[1:, :])]
    a = np.zeros((k, k), dtype=np.float64)
    for x, y in pairs:
        ok = (x >= 0) & (y >= 0) & (x != y)
        np.add.at(a, (x[ok], y[ok]), 1.0)
    a = a + a.T
    if not normalise:
        return a
    total = a.sum()
    if total > 0:
        a = a / total
        a[a < prune] = 0.0
    return a


def top_categories(maps: Sequence[NDArray[np.int64]], n_all: int, k: int) -> NDArray[np.int64]:
    """The ``k`` most frequent category ids (by pixel count) over ``maps`` (ties: lower id)."""
    counts = np.zeros(n_all, dtype=np.int64)
    for m in maps:
        counts += np.bincount(np.asarray(m).ravel(), minlength=n_all)
    order = np.lexsort((np.arange(n_all), -counts))
    return np.sort(order[: min(k, n_all)])


def skipgram_embeddings(
    maps: Sequence[NDArray[np.int64]],
    keep: NDArray[np.int64],
    n_all: int,
    *,
    dim: int = 16,
    negatives: int = 5,
    epochs: int = 200,
    seed: SeedLike = 0,
) -> NDArray[np.float64]:
    """Skip-gram with negative sampling over per-image category sentences (no labels used).

    Sentence = categories present, ordered by area; with the window covering the whole
    sentence every ordered pair of distinct present categories is a (centre, context) pair, so
    the order does not change the pair set. We minimise the SGNS objective in expectation over
    the negative draws (Levy and Goldberg, 2014):
    ``-Σ_ij C_ij [log σ(u_i·w_j) + negatives · Σ_n P(n) log σ(-u_i·w_n)]`` with ``C`` the pair
    counts and ``P`` the unigram distribution to the power 3/4. Returns the centre vectors ``u``.
    """
    k = keep.size
    present = batch_proportions(maps, keep, n_all) > 0
    pres = present.astype(np.float64)
    cooc = pres.T @ pres
    np.fill_diagonal(cooc, 0.0)
    freq = pres.sum(0) + 1e-3
    noise = freq**0.75 / np.sum(freq**0.75)
    gen = torch.Generator().manual_seed(int_from_seed(seed, "seed", bits=63))
    u = torch.nn.Parameter(torch.randn(k, dim, generator=gen, dtype=torch.float64) * 0.1)
    w = torch.nn.Parameter(torch.randn(k, dim, generator=gen, dtype=torch.float64) * 0.1)
    c = torch.as_tensor(cooc / max(cooc.sum(), 1.0))
    pn = torch.as_tensor(noise)
    opt = torch.optim.Adam([u, w], lr=0.05)
    for _ in range(epochs):
        s = u @ w.T
        pos = torch.nn.functional.logsigmoid(s)
        neg = (torch.nn.functional.logsigmoid(-s) * pn[None, :]).sum(1, keepdim=True)
        loss = -(c * (pos + negatives * neg)).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return u.detach().numpy()


def _stack(maps: Sequence[NDArray[np.int64]], keep: NDArray[np.int64], n_all: int) -> NDArray:
    lut = np.full(n_all, -1, dtype=np.int64)
    lut[keep] = np.arange(keep.size)
    return lut[np.stack([np.asarray(m) for m in maps])]


def batch_proportions(
    maps: Sequence[NDArray[np.int64]], keep: NDArray[np.int64], n_all: int
) -> NDArray[np.float64]:
    """:func:`proportions` of many same-shape maps at once, ``(N, K)``."""
    r = _stack(maps, keep, n_all).reshape(len(maps), -1)
    k = keep.size
    ok = r >= 0
    code = (np.arange(len(maps))[:, None] * k + r)[ok]
    counts = np.bincount(code, minlength=len(maps) * k).reshape(len(maps), k).astype(np.float64)
    return counts / np.maximum(counts.sum(1, keepdims=True), 1.0)


def batch_adjacency(
    maps: Sequence[NDArray[np.int64]], keep: NDArray[np.int64], n_all: int, *, prune: float = 0.01
) -> NDArray[np.float64]:
    """:func:`adjacency_matrix` (normalised, pruned) of many same-shape maps, ``(N, K, K)``."""
    r = _stack(maps, keep, n_all)
    n, k = len(maps), keep.size
    img = np.arange(n)[:, None, None]
    total = np.zeros(n * k * k, dtype=np.float64)
    for x, y in ((r[:, :, :-1], r[:, :, 1:]), (r[:, :-1, :], r[:, 1:, :])):
        ok = (x >= 0) & (y >= 0) & (x != y)
        ii = np.broadcast_to(img, x.shape)[ok]
        total += np.bincount((ii * k + x[ok]) * k + y[ok], minlength=n * k * k)
    a = total.reshape(n, k, k)
    a = a + a.transpose(0, 2, 1)
    s = a.sum((1, 2), keepdims=True)
    a = np.where(s > 0, a / np.maximum(s, 1.0), 0.0)
    a[a < prune] = 0.0
    return a


def batch_image_features(
    maps: Sequence[NDArray[np.int64]],
    embeddings: NDArray[np.float64],
    keep: NDArray[np.int64],
    n_all: int,
    *,
    use_adjacency: bool = True,
    prune: float = 0.01,
) -> NDArray[np.float64]:
    """:func:`image_features` of many same-shape maps, ``(N, K * dim)``."""
    p = batch_proportions(maps, keep, n_all)
    pe = p[:, :, None] * np.asarray(embeddings)[None]
    if use_adjacency:
        a = batch_adjacency(maps, keep, n_all, prune=prune) + np.eye(keep.size)[None]
        pe = a @ pe
    return pe.reshape(len(maps), -1)


def image_features(
    m: object,
    embeddings: NDArray[np.float64],
    keep: NDArray[np.int64] | None = None,
    n_all: int | None = None,
    *,
    use_adjacency: bool = True,
    prune: float = 0.01,
) -> NDArray[np.float64]:
    """``v = vec(Ã (p ⊙ E))`` for one category map (``Ã = I`` when ``use_adjacency=False``).

    >>> E = np.eye(2)
    >>> image_features(np.array([[0, 0], [1, 1]]), E).round(2)
    array([0.5 , 0.25, 0.25, 0.5 ])
    """
    emb = np.asarray(embeddings, dtype=np.float64)
    if emb.ndim != 2:
        raise ValueError(f"embeddings must be 2-D (K, dim), got shape {emb.shape}")
    k = emb.shape[0]
    keep = np.arange(k) if keep is None else np.asarray(keep, dtype=np.int64)
    if keep.size != k:
        raise ValueError(f"keep must name {k} categories (rows of embeddings), got {keep.size}")
    n_all = int(keep.max()) + 1 if n_all is None else int(n_all)
    arr = check_map(m, n_all)
    p = proportions(arr, keep, n_all)
    pe = p[:, None] * emb
    if use_adjacency:
        a = adjacency_matrix(arr, keep, n_all, prune=prune) + np.eye(k)
        pe = a @ pe
    return pe.ravel()
