"""Differentiable soft ranks (l2 regularisation) and the ranking mean squared error (rMSE).

The soft rank of ``v ∈ R^m`` with strength ``ε > 0`` is the Euclidean projection of ``v/ε``
onto the permutahedron ``P_m = conv{permutations of (1, …, m)}`` (Blondel, Teboul, Berthet and
Djolonga, "Fast differentiable sorting and ranking", ICML 2020)::

    r_ε(v) = argmin_{r ∈ P_m} ‖r − v/ε‖².

It is computed exactly by sorting ``s = sort_desc(v/ε)``, ``w = (m, m−1, …, 1)``, solving the
non-increasing isotonic regression ``u = argmin_{u₁ ≥ … ≥ u_m} ‖u − (s − w)‖²`` with
pool-adjacent-violators (PAV), and un-permuting ``s − u``. The PAV solution is piecewise
constant on blocks, each block holding the mean of ``s − w`` over it, so the Jacobian of ``u``
with respect to ``s`` is the block-averaging matrix ``B`` and ``∂(s − u)/∂s = I − B``: the
backward pass is exact (away from the measure-zero set where two blocks have equal means).

The rMSE loss of R4 (Kharyal, Muslimani and Taylor, "Reward Learning through Ranking Mean
Squared Error", ICML 2026, arXiv:2601.09236) compares the soft ranks of predicted returns with
the (detached) ranks of the ratings.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["rmse_loss", "soft_rank"]

_FLOATS = (torch.float32, torch.float64)


def _check_eps(eps: Any) -> float:
    try:
        e = float(eps)
    except (TypeError, ValueError):
        raise ValueError(f"eps must be a finite real number > 0, got {eps!r}") from None
    if not (e > 0 and e < float("inf")):
        raise ValueError(f"eps must be a finite real number > 0, got {eps!r}")
    return e


def _check_values(v: Any, name: str) -> torch.Tensor:
    if not isinstance(v, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor, got {type(v).__name__}")
    if v.is_complex():
        raise ValueError(f"{name} must be real-valued, got dtype {v.dtype}")
    if v.dtype not in _FLOATS:
        raise ValueError(f"{name} must have dtype float32 or float64, got {v.dtype}")
    if v.ndim < 1:
        raise ValueError(f"{name} must have shape (..., m) with at least one dimension, got ()")
    if v.device.type == "meta":
        raise ValueError(f"{name} must hold data (a cpu or cuda tensor), got device 'meta'")
    if v.numel() > 0 and not bool(torch.isfinite(v).all()):
        bad = v[~torch.isfinite(v)].flatten()[0].item()
        raise ValueError(f"{name} must be finite, got {bad}")
    return v


def _pav_nonincreasing(y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Batched pool-adjacent-violators for ``min ‖u − y‖²`` s.t. ``u₁ ≥ u₂ ≥ … ≥ u_m`` per row.

    All adjacent violating blocks of every row are pooled at once in each sweep (pooling a run
    of consecutive violators together equals pooling them one pair at a time, because the
    pooled mean of a violating pair lies between the two means, so the run still violates).
    A sweep removes at least one block boundary, hence at most ``m − 1`` sweeps.

    Args:
        y: ``(n, m)`` tensor.

    Returns:
        ``(u, block_id, count)``: the solution, each entry's block index (0-based, per row) and
        the size of each block (``(n, m)``; entries past the last block are 0).
    """
    n, m = y.shape
    start = torch.ones((n, m), dtype=torch.bool, device=y.device)
    ones = torch.ones_like(y)
    while True:
        block = torch.cumsum(start, dim=1) - 1
        sums = torch.zeros_like(y).scatter_add_(1, block, y)
        count = torch.zeros_like(y).scatter_add_(1, block, ones)
        u = (sums / count.clamp_min(1.0)).gather(1, block)
        violated = start[:, 1:] & (u[:, :-1] < u[:, 1:])
        if not bool(violated.any()):
            return u, block, count
        start[:, 1:] &= ~violated


def _block_mean(g: torch.Tensor, block: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    sums = torch.zeros_like(g).scatter_add_(1, block, g)
    return (sums / count.clamp_min(1.0)).gather(1, block)


class _SoftRank(torch.autograd.Function):
    """``r_ε`` on ``(n, m)`` rows; forward by sort + PAV, backward ``(I − B)`` un-permuted / ε."""

    @staticmethod
    def forward(ctx: Any, z: torch.Tensor) -> torch.Tensor:  # z = v / eps, shape (n, m)
        m = z.shape[1]
        s, perm = torch.sort(z, dim=1, descending=True, stable=True)
        w = torch.arange(m, 0, -1, dtype=z.dtype, device=z.device).expand_as(s)
        y = s - w
        u, block, count = _pav_nonincreasing(y)
        # w + (y − u) equals s − u, but is exactly w on unpooled entries (singleton blocks).
        out_sorted = w + (y - u)
        out = torch.empty_like(z).scatter_(1, perm, out_sorted)
        ctx.save_for_backward(perm, block, count)
        return out

    @staticmethod
    def backward(ctx: Any, grad_out: torch.Tensor) -> torch.Tensor:
        perm, block, count = ctx.saved_tensors
        g = grad_out.gather(1, perm)
        g_sorted = g - _block_mean(g, block, count)
        return torch.empty_like(grad_out).scatter_(1, perm, g_sorted)


def soft_rank(v: torch.Tensor, eps: float = 1.0) -> torch.Tensor:
    """Soft ascending ranks along the last axis: the projection of ``v/ε`` onto the permutahedron.

    ``r_ε(v) = argmin_{r ∈ conv{perm(1, …, m)}} ‖r − v/ε‖²`` (Blondel et al., ICML 2020; the
    operator of R4, arXiv:2601.09236). Facts: entries sum to ``m(m+1)/2``; if consecutive sorted
    gaps of ``v`` are all ``≥ ε`` the result is the exact ascending rank vector (the smallest
    entry gets rank 1, as ``scipy.stats.rankdata``); as ``ε → ∞`` every entry tends to
    ``(m+1)/2``; the map is permutation-equivariant. Differentiable with an exact backward.

    Args:
        v: float32/float64 tensor of shape ``(..., m)``; leading dimensions are a batch.
        eps: regularisation strength ``ε > 0``.

    Returns:
        Tensor of the shape and dtype of ``v``.

    Example:
        >>> import torch
        >>> soft_rank(torch.tensor([3.0, 1.0, 2.0]), eps=0.1)
        tensor([3., 1., 2.])
        >>> soft_rank(torch.tensor([0.0, 0.5]), eps=1.0)
        tensor([1.2500, 1.7500])
    """
    e = _check_eps(eps)
    v = _check_values(v, "v")
    m = v.shape[-1]
    if v.numel() == 0 or m == 0:
        return v.clone()
    flat = v.reshape(-1, m) / e
    return _SoftRank.apply(flat).reshape(v.shape)


def rmse_loss(pred_returns: torch.Tensor, ratings: Any, eps: float = 1.0) -> torch.Tensor:
    """Ranking mean squared error of R4: ``mean_items (1/m) ‖r_ε(Ĝ) − r_ε(c)‖²``.

    Each item (a row of the leading dimensions) holds ``m`` trajectories' predicted returns
    ``Ĝ`` and their ratings ``c``; the target ranks ``r_ε(c)`` are detached. With one trajectory
    per distinct rating the targets are exact integer ranks, so the loss is 0 exactly when ``Ĝ``
    orders the items as the ratings do *with consecutive gaps ≥ ε* (a margin), and any
    inversion makes it positive: a concrete form of the paper's minimal and complete solution
    set (Kharyal et al., ICML 2026, arXiv:2601.09236).

    Args:
        pred_returns: float tensor ``(..., m)`` with ``m ≥ 2``.
        ratings: tensor or array-like of the same shape (ordinal ratings, any real dtype).
        eps: soft-rank strength ``ε > 0`` (used for both sides).

    Returns:
        A scalar tensor.

    Example:
        >>> import torch
        >>> float(rmse_loss(torch.tensor([0.0, 2.0, 5.0]), torch.tensor([0, 1, 2])))
        0.0
        >>> float(rmse_loss(torch.tensor([2.0, 0.0, 5.0]), torch.tensor([0, 1, 2]))) > 0
        True
    """
    e = _check_eps(eps)
    pred = _check_values(pred_returns, "pred_returns")
    target = torch.as_tensor(ratings, device=pred.device)
    if target.is_complex():
        raise ValueError(f"ratings must be real-valued, got dtype {target.dtype}")
    if target.shape != pred.shape:
        raise ValueError(
            f"ratings must have the shape of pred_returns {tuple(pred.shape)}, "
            f"got {tuple(target.shape)}"
        )
    if pred.shape[-1] < 2:
        raise ValueError(f"pred_returns must have m >= 2 entries per item, got {pred.shape[-1]}")
    target = target.to(pred.dtype)
    target = _check_values(target, "ratings")
    with torch.no_grad():
        target_ranks = soft_rank(target, eps=e)
    diff = soft_rank(pred, eps=e) - target_ranks
    return (diff * diff).mean()
