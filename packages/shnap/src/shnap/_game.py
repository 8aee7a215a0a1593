"""SHNAP: exact Shapley effects and pairwise interactions of objects edited out of a volume.

Players are ``N <= 12`` disjoint object masks. A coalition ``S`` keeps the objects in ``S``; all
others are inpainted by an editor (the union of their masks dilated by one voxel, minus the kept
objects) giving ``x_S``, and ``v(S) = f(x_S)`` is the model's risk logit, averaged over ``K``
seeded edits. On all ``2^N`` coalitions we compute exactly

.. math::

    SV_i = \\sum_{S \\subseteq N \\setminus i} \\frac{|S|!(n-|S|-1)!}{n!}\\,[v(S \\cup i) - v(S)],
    \\qquad
    SII_{ij} = \\sum_{S \\subseteq N \\setminus ij} \\frac{|S|!(n-|S|-2)!}{(n-1)!}\\,
    \\Delta_{ij} v(S),

with :math:`\\Delta_{ij} v(S) = v(S\\cup ij) - v(S\\cup i) - v(S\\cup j) + v(S)`, and the order-2
terms :math:`\\varphi_i = SV_i - \\tfrac12\\sum_{j\\neq i} SII_{ij}`, :math:`\\varphi_{ij} =
SII_{ij}`, :math:`\\varphi_\\emptyset = v(\\emptyset)`. For a game that is linear plus pairwise
(LMPI), :math:`v(S) = \\mu + \\sum_{i\\in S} a_i + \\sum_{i<j\\in S} b_{ij}`, these are exactly
``a_i`` and ``b_ij``; always :math:`\\sum_i \\varphi_i + \\sum_{i<j}\\varphi_{ij} = v(N) - v(\\emptyset)`.
The least-squares LMPI fit over all coalitions and its :math:`R^2` test the paper's "LMPI over
nodules" claim; its residual is the part of ``v`` orthogonal to the LMPI span.

Method of Sobieski, Grzywaczewski et al., "Auditing Sybil" (S(H)NAP), arXiv 2602.02560, ICML
2026; reconstructed here (the paper's code is not released).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from math import factorial
from typing import Any, Protocol

import numpy as np
from scipy import ndimage

from ._checks import check_players, check_volume
from ._models import RiskModel, evaluate_model

__all__ = [
    "Attribution",
    "Editor",
    "exact_sv_sii",
    "gshnap",
    "lmpi_fit",
    "order2_terms",
    "shnap",
]


class Editor(Protocol):
    """What SHNAP and SNAP need from an inpainting editor (the bridge, RePaint, naive fills).

    ``remove`` fills ``mask`` and must leave every voxel outside it bit-identical;
    ``remove_batch`` does the same for a batch ``(B, D, H, W)``.
    """

    name: str

    def remove(self, x: np.ndarray, mask: np.ndarray, seed: int) -> np.ndarray: ...

    def remove_batch(
        self, xs: np.ndarray, masks: np.ndarray, seeds: Sequence[int]
    ) -> np.ndarray: ...


# ---------------------------------------------------------------------------------------------
# the algebra on a game given as its 2^N values (index = bitmask of the kept players)
def _popcount(n_players: int) -> np.ndarray:
    idx = np.arange(2**n_players)
    return np.array([bin(s).count("1") for s in idx], dtype=np.int64)


def _game_values(values: Any) -> tuple[np.ndarray, int]:
    """``values`` as finite float64 ``(2^N,)`` and ``N``, or a ``ValueError`` naming the fault."""
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"values must be 2^N real game values, got {type(values).__name__}"
        ) from None
    n = v.size.bit_length() - 1
    if v.ndim != 1 or 2**n != v.size or n < 1:
        raise ValueError(f"values must hold 2^N game values (N >= 1), got shape {v.shape}")
    bad = np.flatnonzero(~np.isfinite(v))
    if bad.size:
        more = f" and {bad.size - 1} more" if bad.size > 1 else ""
        raise ValueError(
            f"values must be finite, got {v[bad[0]]} at coalition {int(bad[0])}{more} (bit i "
            "of the index = player i kept)"
        )
    return v, n


def exact_sv_sii(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact Shapley values ``(N,)`` and pairwise Shapley interactions ``(N, N)`` (symmetric,
    zero diagonal) of a game given by its values on all ``2^N`` coalitions (bit ``i`` of the
    index = player ``i`` kept).

    >>> v = np.array([0.0, 1.0, 2.0, 4.0])  # v({0,1}) = 1 + 2 + 1
    >>> sv, sii = exact_sv_sii(v)
    >>> sv.tolist(), float(sii[0, 1])
    ([1.5, 2.5], 1.0)
    """
    v, n = _game_values(values)
    size = _popcount(n)
    idx = np.arange(2**n)
    sv = np.zeros(n)
    for i in range(n):
        without = idx[(idx >> i) & 1 == 0]
        s = size[without]
        w = np.array([factorial(k) * factorial(n - k - 1) / factorial(n) for k in range(n)])
        sv[i] = np.sum(w[s] * (v[without | (1 << i)] - v[without]))
    sii = np.zeros((n, n))
    if n >= 2:
        w2 = np.array(
            [factorial(k) * factorial(n - k - 2) / factorial(n - 1) for k in range(n - 1)]
        )
        for i in range(n):
            for j in range(i + 1, n):
                rest = idx[((idx >> i) & 1 == 0) & ((idx >> j) & 1 == 0)]
                bi, bj = 1 << i, 1 << j
                delta = v[rest | bi | bj] - v[rest | bi] - v[rest | bj] + v[rest]
                sii[i, j] = sii[j, i] = np.sum(w2[size[rest]] * delta)
    return sv, sii


def order2_terms(sv: np.ndarray, sii: np.ndarray) -> np.ndarray:
    """``phi_i = SV_i - 1/2 sum_{j != i} SII_ij`` (the order-2 main effects)."""
    return sv - 0.5 * (sii.sum(axis=1) - np.diag(sii))


def _lmpi_design(n: int) -> np.ndarray:
    idx = np.arange(2**n)
    z = ((idx[:, None] >> np.arange(n)) & 1).astype(np.float64)
    pairs = [z[:, i] * z[:, j] for i in range(n) for j in range(i + 1, n)]
    return (
        np.column_stack([np.ones(2**n), z, *pairs])
        if pairs
        else np.column_stack([np.ones(2**n), z])
    )


@dataclass(frozen=True)
class LMPIFit:
    """Least-squares fit ``v(S) ~ mu + sum a_i z_i + sum b_ij z_i z_j`` over all coalitions."""

    mu: float
    a: np.ndarray
    b: np.ndarray
    r2: float
    residual: np.ndarray


def lmpi_fit(values: np.ndarray) -> LMPIFit:
    """Unweighted least squares of the linear-plus-pairwise model on all ``2^N`` coalitions.

    ``r2 = 1 - ||residual||^2 / ||v - mean(v)||^2`` (1 for a constant game); ``residual`` is the
    projection of ``v`` on the orthogonal complement of the LMPI span.

    >>> fit = lmpi_fit(np.array([1.0, 2.0, 3.0, 7.0]))
    >>> round(fit.r2, 12), np.round(fit.b, 12).tolist()
    (1.0, [[0.0, 3.0], [3.0, 0.0]])
    """
    v, n = _game_values(values)
    design = _lmpi_design(n)
    coef, *_ = np.linalg.lstsq(design, v, rcond=None)
    residual = v - design @ coef
    tot = float(np.sum((v - v.mean()) ** 2))
    r2 = 1.0 if tot <= 1e-300 else 1.0 - float(residual @ residual) / tot
    b = np.zeros((n, n))
    k = 1 + n
    for i in range(n):
        for j in range(i + 1, n):
            b[i, j] = b[j, i] = coef[k]
            k += 1
    return LMPIFit(float(coef[0]), coef[1 : 1 + n].copy(), b, r2, residual)


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Attribution:
    """SHNAP on one volume.

    ``values[k, S]`` is ``f(x_S)`` for edit ``k`` (bitmask ``S`` of kept players); ``sv``, ``sii``,
    ``phi``, ``phi_pair`` come from the edit-averaged game and ``*_spread`` are their standard
    deviations over the ``K`` per-edit games; ``r2`` is the LMPI fit's :math:`R^2`.
    """

    names: tuple[str, ...]
    values: np.ndarray
    sv: np.ndarray
    sii: np.ndarray
    phi: np.ndarray
    phi_pair: np.ndarray
    phi_empty: float
    r2: float
    lmpi: LMPIFit
    sv_spread: np.ndarray
    phi_spread: np.ndarray
    editor: str
    seconds: float
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def mean_values(self) -> np.ndarray:
        """Edit-averaged game ``v(S)`` on all coalitions."""
        return self.values.mean(axis=0)

    @property
    def total(self) -> float:
        """``v(N) - v(empty)`` (= sum of phi and phi_pair by efficiency)."""
        v = self.mean_values
        return float(v[-1] - v[0])

    def efficiency_gap(self) -> float:
        """``|sum phi_i + sum_{i<j} phi_ij - (v(N) - v(empty))|`` (0 up to rounding)."""
        iu = np.triu_indices(len(self.names), 1)
        return abs(float(self.phi.sum() + self.phi_pair[iu].sum()) - self.total)

    def __getitem__(self, name: str) -> float:
        """``phi`` of the player called ``name``."""
        return float(self.phi[self.names.index(name)])


def _attribution_from_values(
    values: np.ndarray, names: Sequence[str], editor: str, seconds: float
) -> Attribution:
    values = np.asarray(values, np.float64)
    mean = values.mean(axis=0)
    sv, sii = exact_sv_sii(mean)
    phi = order2_terms(sv, sii)
    per = [exact_sv_sii(v) for v in values]
    sv_k = np.array([p[0] for p in per])
    phi_k = np.array([order2_terms(*p) for p in per])
    fit = lmpi_fit(mean)
    return Attribution(
        names=tuple(names),
        values=values,
        sv=sv,
        sii=sii,
        phi=phi,
        phi_pair=sii.copy(),
        phi_empty=float(mean[0]),
        r2=fit.r2,
        lmpi=fit,
        sv_spread=sv_k.std(axis=0),
        phi_spread=phi_k.std(axis=0),
        editor=editor,
        seconds=seconds,
    )


def attribution_from_game(
    game: Callable[[np.ndarray], float], n_players: int, names: Sequence[str] | None = None
) -> Attribution:
    """SHNAP algebra on a plain set function ``game(keep) -> float`` (``keep``: bool ``(N,)``)."""
    idx = np.arange(2**n_players)
    keep = ((idx[:, None] >> np.arange(n_players)) & 1).astype(bool)
    values = np.array([[float(game(k)) for k in keep]])
    return _attribution_from_values(
        values, names or [str(i) for i in range(n_players)], "game", 0.0
    )


def _coalition_seed(seed: int, s: int, k: int) -> int:
    """Common random numbers: edit ``k`` uses one seed in every coalition, so an object removed
    in two coalitions with the same neighbourhood gets the same fill (lower-variance
    differences; the editor may also reuse identical crop jobs). ``s`` is unused on purpose."""
    del s
    return int(np.random.SeedSequence([seed, k]).generate_state(1)[0])


def shnap(
    model: RiskModel | Callable[..., Any] | Mapping[str, Any],
    x: np.ndarray,
    players: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    editor: Editor,
    k: int = 2,
    *,
    seed: int = 0,
    dilate: int = 1,
    batch_size: int = 64,
) -> Any:
    """Exact SHNAP of ``model`` on volume ``x`` over object ``players`` edited by ``editor``.

    Args:
        model: a :class:`~shnap.RiskModel` (or any callable) mapping ``(B, 1, D, H, W)`` float32
            to ``(B,)`` risk logits.
        x: the windowed volume ``(D, H, W)``.
        players: ``N <= 12`` disjoint boolean masks (a dict gives the names).
        editor: an :class:`Editor`; removed players' union, dilated by ``dilate`` voxels and
            minus the kept players, is inpainted.
        k: seeded edits per coalition (averaged; their spread is reported). The grand
            coalition needs no edit and is evaluated once.
        seed: base seed of the edits.
        dilate: voxels by which the removed union is dilated before the kept players are cut out.
        batch_size: coalition edits per ``editor.remove_batch`` call; the shipped editors sample
            a crop repeated within a call once (with common seeds, each object's crop recurs
            across coalitions), so a larger batch means fewer network calls and more memory.

    Returns:
        :class:`Attribution` with ``sv``, ``sii``, ``phi``, ``phi_pair``, ``r2``; its
        ``extra["locality_violations"]`` counts edited voxels outside the fill masks (0 for a
        local editor). A mapping of models gives a dict of attributions from the same edits.
    """
    t0 = time.perf_counter()
    x = check_volume(x, "x")
    names = [str(n) for n in players] if isinstance(players, Mapping) else None
    masks = check_players(dict(players) if isinstance(players, Mapping) else players, x, "players")
    names = names or [str(i) for i in range(len(masks))]
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
        raise ValueError(f"k must be an integer >= 1 (edits per coalition), got {k!r}")
    if not isinstance(dilate, int | np.integer) or dilate < 0:
        raise ValueError(f"dilate must be an integer >= 0, got {dilate!r}")
    if (
        isinstance(batch_size, bool)
        or not isinstance(batch_size, int | np.integer)
        or batch_size < 1
    ):
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    if not hasattr(editor, "remove_batch"):
        raise TypeError(
            f"editor must provide remove_batch (an Editor), got {type(editor).__name__}"
        )
    n = len(masks)
    full = 2**n - 1
    structure = ndimage.generate_binary_structure(3, 3)
    jobs: list[tuple[int, int, np.ndarray]] = []
    for s in range(full):
        removed = np.zeros(x.shape, bool)
        kept = np.zeros(x.shape, bool)
        for i, m in enumerate(masks):
            if (s >> i) & 1:
                kept |= m
            else:
                removed |= m
        if dilate:
            removed = ndimage.binary_dilation(removed, structure, iterations=int(dilate))
        removed &= ~kept
        jobs.extend((s, kk, removed) for kk in range(k))
    models = dict(model) if isinstance(model, Mapping) else {"model": model}
    values = {m: np.empty((k, 2**n), np.float64) for m in models}
    for m, f in models.items():
        values[m][:, full] = evaluate_model(f, x[None])[0]
    violations = 0
    for start in range(0, len(jobs), batch_size):
        chunk = jobs[start : start + batch_size]
        xs = np.repeat(x[None], len(chunk), axis=0)
        ms = np.stack([j[2] for j in chunk])
        seeds = [_coalition_seed(seed, s, kk) for s, kk, _ in chunk]
        edited = np.asarray(editor.remove_batch(xs, ms, seeds), np.float32)
        if edited.shape != xs.shape:
            raise ValueError(
                f"editor {getattr(editor, 'name', editor)!r} returned shape {edited.shape}, "
                f"expected {xs.shape}"
            )
        violations += int(np.count_nonzero((edited != xs) & ~ms))
        for m, f in models.items():
            out = evaluate_model(f, edited)
            for (s, kk, _), val in zip(chunk, out):
                values[m][kk, s] = val
    name = str(getattr(editor, "name", type(editor).__name__))
    seconds = time.perf_counter() - t0
    result = {}
    for m in models:
        att = _attribution_from_values(values[m], names, name, seconds)
        att.extra.update(locality_violations=violations, n_edits=len(jobs))
        result[m] = att
    return result if isinstance(model, Mapping) else result["model"]


def gshnap(
    model: RiskModel | Callable[..., Any] | Mapping[str, Any],
    x: np.ndarray,
    regions: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    editor: Editor,
    k: int = 2,
    *,
    seed: int = 0,
    batch_size: int = 64,
) -> Any:
    """gSHNAP: :func:`shnap` over arbitrary disjoint regions (lobes, shells, boxes), inpainted
    exactly as given (no dilation, so neighbouring regions stay untouched)."""
    return shnap(model, x, regions, editor, k, seed=seed, dilate=0, batch_size=batch_size)
