"""Graph pieces in plain torch/numpy: segment softmax, a GAT layer (Veličković et al., 2018),
Moran's I, pseudo-labels and the geography-aware InfoNCE of MetaStreet (ICML 2026).
"""

from __future__ import annotations

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray
from torch import Tensor, nn

__all__ = [
    "GATLayer",
    "info_nce",
    "knn_edges",
    "morans_i",
    "pseudo_labels",
    "segment_softmax",
    "with_self_loops",
]


def with_self_loops(edges: NDArray[np.int64], n: int, *, directed: bool = False) -> Tensor:
    """Directed ``(2, E')`` edge index: both directions of every undirected edge plus self-loops
    (duplicates and existing self-loops removed), rows = (source, target). ``directed=True``
    reads each pair ``(i, j)`` as "``j`` is a neighbour of ``i``" only (the k-NN graph):
    messages flow ``j → i``, so only the row ``(j, i)`` is kept."""
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    e = e[e[:, 0] != e[:, 1]]
    flows = [e[:, ::-1]] if directed else [e, e[:, ::-1]]
    both = np.concatenate([*flows, np.repeat(np.arange(n)[:, None], 2, 1)])
    both = np.unique(both, axis=0)
    return torch.as_tensor(both.T.copy())


def knn_edges(coords: ArrayLike, k: int = 5) -> NDArray[np.int64]:
    """Directed k-nearest-neighbour pairs ``(i, j)``: ``j`` is one of the ``k`` streets nearest
    to ``i`` (Euclidean distance between segment midpoints ``coords``, ``(n, 2)``; ties broken by
    index; ``i`` itself excluded). Row ``i`` of the graph has out-degree ``k``: the authors'
    street graph (k = 5).

    >>> knn_edges(np.array([[0.0, 0], [1, 0], [3, 0], [7, 0]]), k=1)
    array([[0, 1],
           [1, 0],
           [2, 1],
           [3, 2]])
    """
    xy = np.asarray(coords, dtype=np.float64)
    if xy.ndim != 2 or xy.shape[0] < 2 or not np.all(np.isfinite(xy)):
        raise ValueError(f"coords must be a finite (n >= 2, d) array, got shape {xy.shape}")
    n = xy.shape[0]
    if not (isinstance(k, int | np.integer) and 1 <= k < n):
        raise ValueError(f"k must be an integer in [1, {n - 1}] (n - 1 other streets), got {k!r}")
    d2 = ((xy[:, None, :] - xy[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d2, np.inf)
    nearest = np.argsort(d2, axis=1, kind="stable")[:, :k]
    return np.stack([np.repeat(np.arange(n), k), nearest.ravel()], 1).astype(np.int64)


def segment_softmax(scores: Tensor, index: Tensor, n: int) -> Tensor:
    """Softmax of ``scores`` (``(E, ...)``) within groups sharing ``index`` (``(E,)``, in
    ``[0, n)``): ``exp(s_e - max_g) / Σ_{e' in g} exp(s_e' - max_g)``."""
    shape = (n, *scores.shape[1:])
    idx = index.view(-1, *([1] * (scores.dim() - 1))).expand_as(scores)
    mx = torch.full(shape, -torch.inf, dtype=scores.dtype, device=scores.device).scatter_reduce(
        0, idx, scores, "amax", include_self=True
    )
    ex = torch.exp(scores - mx.gather(0, idx))
    den = torch.zeros(shape, dtype=scores.dtype, device=scores.device).scatter_add(0, idx, ex)
    return ex / den.gather(0, idx)


class GATLayer(nn.Module):
    """Multi-head graph attention: ``x'_i = ||_h Σ_j α^h_ij W^h x_j (+ b)`` with
    ``α^h_ij = softmax_j LeakyReLU(a_src^h·W^h x_j + a_dst^h·W^h x_i)`` over in-edges of ``i``
    (self-loops included by the caller). ``concat=False`` averages heads. Parameter names and
    shapes match PyG's ``GATConv`` (``lin.weight``, ``att_src``, ``att_dst``, ``bias``)."""

    def __init__(
        self,
        d_in: int,
        d_out: int,
        heads: int = 1,
        *,
        concat: bool = True,
        dropout: float = 0.0,
        negative_slope: float = 0.2,
    ) -> None:
        super().__init__()
        self.heads, self.d_out, self.concat = heads, d_out, concat
        self.dropout, self.negative_slope = dropout, negative_slope
        self.lin = nn.Linear(d_in, heads * d_out, bias=False)
        self.att_src = nn.Parameter(torch.empty(1, heads, d_out))
        self.att_dst = nn.Parameter(torch.empty(1, heads, d_out))
        self.bias = nn.Parameter(torch.zeros(heads * d_out if concat else d_out))
        nn.init.xavier_uniform_(self.lin.weight)
        nn.init.xavier_uniform_(self.att_src)
        nn.init.xavier_uniform_(self.att_dst)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        n = x.shape[0]
        src, dst = edge_index
        h = self.lin(x).view(n, self.heads, self.d_out)
        a_s = (h * self.att_src).sum(-1)
        a_d = (h * self.att_dst).sum(-1)
        e = nn.functional.leaky_relu(a_s[src] + a_d[dst], self.negative_slope)
        alpha = segment_softmax(e, dst, n)
        alpha = nn.functional.dropout(alpha, self.dropout, self.training)
        msg = h[src] * alpha.unsqueeze(-1)
        out = x.new_zeros(n, self.heads, self.d_out).index_add(0, dst, msg)
        out = out.reshape(n, -1) if self.concat else out.mean(1)
        return out + self.bias


class GCNLayer(nn.Module):
    """``D^-1/2 (A + I) D^-1/2 X W`` (Kipf and Welling, 2017); the "GCN for GAT" ablation."""

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        n = x.shape[0]
        src, dst = edge_index
        deg = x.new_zeros(n).index_add(0, dst, torch.ones_like(dst, dtype=x.dtype))
        w = (deg[src] * deg[dst]).rsqrt().unsqueeze(-1)
        h = self.lin(x)
        return torch.zeros_like(h).index_add(0, dst, h[src] * w)


def morans_i(values: ArrayLike, edges: ArrayLike, *, row_standardise: bool = True) -> float:
    """Moran's I with binary contiguity weights from undirected ``edges``:
    ``I = (n / S0) Σ_ij w_ij z_i z_j / Σ_i z_i²`` with ``z = x - mean(x)`` and
    ``S0 = Σ_ij w_ij``; ``row_standardise`` divides each row of ``w`` by its sum (esda's
    default ``transformation="r"``).

    >>> round(morans_i([1.0, 1.0, -1.0, -1.0], [[0, 1], [2, 3]]), 6)
    1.0
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError("values must be a finite 1-D array of length >= 2")
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    if e.size and (e.min() < 0 or e.max() >= x.size):
        raise ValueError(f"edges name unknown nodes: ids must lie in [0, {x.size})")
    e = e[e[:, 0] != e[:, 1]]
    e = np.unique(np.concatenate([e, e[:, ::-1]]), axis=0)
    i, j = e[:, 0], e[:, 1]
    w = np.ones(i.size)
    if row_standardise:
        deg = np.bincount(i, minlength=x.size).astype(np.float64)
        w = w / deg[i]
    z = x - x.mean()
    den = float(z @ z)
    if den == 0:
        raise ValueError("values are constant: Moran's I is undefined")
    return float(x.size / w.sum() * np.sum(w * z[i] * z[j]) / den)


def pseudo_labels(
    edges: NDArray[np.int64],
    y_train: NDArray[np.int64],
    n_classes: int,
    *,
    directed: bool = False,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Contrast anchors and their (pseudo-)labels.

    Anchors = labelled training streets (``y_train >= 0``, own label) plus their unlabelled
    1-hop neighbours, whose pseudo-label is the majority label of their labelled training
    neighbours; a tie drops the anchor. ``y_train`` must hold -1 for every street whose label
    training may not see (validation and test). ``directed=True`` reads each pair ``(i, j)``
    as "``j`` is a neighbour of ``i``" only (the k-NN graph); by default pairs are undirected.

    >>> y = np.array([0, 1, -1, 1, -1])
    >>> pseudo_labels(np.array([[0, 2], [1, 2], [3, 2], [0, 4], [1, 4]]), y, 2)
    (array([0, 1, 2, 3]), array([0, 1, 1, 1]))
    """
    y = np.asarray(y_train, dtype=np.int64)
    n = y.size
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    e = e[e[:, 0] != e[:, 1]]
    e = np.unique(e if directed else np.concatenate([e, e[:, ::-1]]), axis=0)
    votes = np.zeros((n, n_classes), dtype=np.int64)
    lab = y[e[:, 1]] >= 0
    np.add.at(votes, (e[lab, 0], y[e[lab, 1]]), 1)
    labelled = y >= 0
    top = votes.max(1)
    unique_top = (votes == top[:, None]).sum(1) == 1
    cand = ~labelled & (top > 0) & unique_top
    anchors = np.flatnonzero(labelled | cand)
    out = np.where(labelled[anchors], y[anchors], votes[anchors].argmax(1))
    return anchors, out


def info_nce(
    anchor: Tensor,
    positive: Tensor,
    negatives: Tensor,
    neg_mask: Tensor,
    tau: float,
    neg_index: Tensor | None = None,
) -> Tensor:
    """Mean over anchors of ``-log( e^{s⁺/τ} / (e^{s⁺/τ} + Σ_n m_n e^{s_n/τ}) )`` with cosine
    similarities ``s⁺ = cos(a, p)``, ``s_n = cos(a, n)``.

    Shapes: ``anchor``/``positive`` ``(A, d)``, ``neg_mask`` ``(A, M)`` boolean (padding slots
    are ``False``), and ``negatives`` either ``(A, M, d)`` or, with ``neg_index`` ``(A, M)``, a
    bank ``(T, d)`` whose rows ``neg_index`` picks. The bank form normalises each of the ``T``
    rows once and takes every ``s_n`` from one ``(A, T)`` matrix product, instead of
    materialising ``A·M`` copies (the same value; about 30% of a paper-size training step).
    """
    a = nn.functional.normalize(anchor, dim=-1)
    p = nn.functional.normalize(positive, dim=-1)
    ng = nn.functional.normalize(negatives, dim=-1)
    sp = (a * p).sum(-1, keepdim=True) / tau
    if neg_index is None:
        sn = (a.unsqueeze(1) * ng).sum(-1) / tau
    else:
        sn = (a @ ng.T).gather(1, neg_index) / tau
    sn = sn.masked_fill(~neg_mask, -torch.inf)
    logits = torch.cat([sp, sn], 1)
    return (torch.logsumexp(logits, 1) - sp.squeeze(1)).mean()
