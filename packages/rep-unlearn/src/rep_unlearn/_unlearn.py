"""Representation unlearning (Almudévar & Ortega, "Representation Unlearning: Forgetting
through Information Compression", ICML 2026, arXiv:2601.21564), implemented from its equations.

A frozen encoder ``h`` gives ``z = h(x)``; an adapter ``f_φ`` is trained so that the deployed
path ``x ↦ W f_φ(h(x)) + b`` keeps the information of retained data and drops that of the forget
set. With Monte-Carlo input noise ``z̃ = z + σε``, ``ε ~ N(0, I)`` (M draws):

Standard regime (retain and forget data)::

    L_r = E_{z_r, ε} ‖f(z_r + σε) − z_r‖²          (variational retention bound → reconstruction)
    L_f = E_{z_f, ε, z_ref} ‖f(z_f + σε) − z_ref‖²   (z_ref a fresh draw from retain ∪ forget)
    L   = L_r + β L_f

``L_f`` is minimised by sending each forget representation to the mean of the reference pool:
``Z′`` of a forget sample then carries no information about which sample it came from.

Zero-shot regime (forget data and head only; class forgetting), with one prototype ``w̃_c``
per head class::

    L_r = Σ_{c kept} p_c E_ε ‖f(w̃_c + σε) − w̃_c‖²
    L_f = E_{z_f, ε} Σ_{c all} π_c ‖f(z_f + σε) − w̃_c‖²
    L   = L_r + β L_f

The paper's prototypes are the head rows (here optionally rescaled to the features' scale,
``w̃_c = s w_c / ‖w_c‖``, ``s`` the mean ``‖z_f‖``). Our default reflects the forget mean ``z̄_f``
across each kept class's decision boundary with the forgotten class ``f``,
``w̃_c = z̄_f + 2 |m_c| (w_c − w_f) / ‖w_c − w_f‖²`` with ``m_c = logit_f(z̄_f) − logit_c(z̄_f)``,
clamped at 0 for non-negative (ReLU) features, and ``w̃_f = z̄_f``: the targets then sit where
features live (see :func:`zero_shot_targets`).

with ``p``, ``π`` uniform or user-given, never class counts of retain data (which zero-shot does
not have). Only ``φ`` trains (Adam); ``h``, ``W``, ``b`` stay untouched.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_positive,
    check_positive_int,
    int_from_seed,
)
from icml26_shared.experiment import progress as progress_bar

from ._adapter import Adapter
from ._checks import as_split_model, check_data, check_disjoint, forgetting_mode
from ._data import TensorData
from ._selection import select_candidate
from ._split import RewiredModel, SplitModel, encode
from ._train import Adam

__all__ = [
    "BETA_GRID",
    "PROTOTYPES",
    "Unlearner",
    "standard_loss",
    "zero_shot_loss",
    "zero_shot_targets",
]

BETA_GRID: tuple[float, ...] = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1, 1.0)


def _noisy(z: torch.Tensor, sigma: float, n_mc: int, gen: torch.Generator | None) -> torch.Tensor:
    """``M`` stacked copies of ``z`` (``(M·n, d)``), each plus ``σε`` when ``σ > 0``."""
    zz = z.repeat(n_mc, 1)
    if sigma > 0:
        zz = zz + sigma * torch.randn(zz.shape, generator=gen)
    return zz


def standard_loss(
    adapter: Adapter,
    z_r: torch.Tensor,
    z_f: torch.Tensor,
    z_ref: torch.Tensor,
    beta: torch.Tensor | float,
    *,
    sigma: float = 0.0,
    n_mc: int = 1,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(L, L_r, L_f)``, one entry per adapter candidate (shape ``(K,)``).

    ``L_r = mean_i ‖f(z_r,i + σε) − z_r,i‖²``, ``L_f = mean_j ‖f(z_f,j + σε) − z_ref,j‖²``
    (``z_ref`` paired row by row with ``z_f``), averaged over the ``M`` noise draws;
    ``L = L_r + β L_f`` with ``beta`` a scalar or one value per candidate.
    """
    out_r = adapter(_noisy(z_r, sigma, n_mc, generator))
    out_f = adapter(_noisy(z_f, sigma, n_mc, generator))
    k = adapter.n_candidates
    out_r, out_f = out_r.reshape(k, -1, adapter.dim), out_f.reshape(k, -1, adapter.dim)
    l_r = ((out_r - z_r.repeat(n_mc, 1)) ** 2).sum(-1).mean(-1)
    l_f = ((out_f - z_ref.repeat(n_mc, 1)) ** 2).sum(-1).mean(-1)
    b = torch.as_tensor(beta, dtype=l_r.dtype)
    return l_r + b * l_f, l_r, l_f


PROTOTYPES: tuple[str, ...] = ("reflect", "head_rows", "raw")


def zero_shot_targets(
    head: nn.Linear,
    z_f: torch.Tensor,
    forget_classes: Sequence[int] | None = None,
    prototypes: str = "reflect",
    *,
    clamp: bool | None = None,
) -> torch.Tensor:
    """Zero-shot prototypes, one row per head class (shape ``(C, d)``).

    ``"reflect"`` (default, ours): with ``z̄_f`` the mean forget feature and ``f`` the forget
    class of largest logit at ``z̄_f``, each kept class ``c`` gets the forget mean reflected
    across the ``c``-versus-``f`` decision boundary of the original head::

        d_c = w_c − w_f,   m_c = logit_f(z̄_f) − logit_c(z̄_f),
        p_c = z̄_f + 2 |m_c| d_c / ‖d_c‖²

    so that ``logit_c(p_c) − logit_f(p_c) = |m_c|``: ``p_c`` sits on ``c``'s side, as far from
    the boundary as the forget mean is on ``f``'s side. For a ReLU encoder ``p_c`` is clamped
    at 0 (``clamp=None`` decides from ``z_f``: clamp when no entry is negative and some are
    exactly 0, the mark of a ReLU; ``True`` / ``False`` force it). Forgotten classes get ``z̄_f``. The prototypes then lie where real
    features live, whereas head rows are centred at the origin with negative entries.

    If the original head does not rank ``c`` first at ``p_c`` (a third class wins there, as
    happens with few feature dimensions or several forgotten classes), ``p_c`` is replaced by
    the nearest point at which ``c`` leads every other class by ``|m_c|`` (or by the largest
    of ``|m_c|/2, |m_c|/4, …`` that is reachable; non-negative when clamping, unless the head
    never ranks ``c`` first on non-negative features, which is warned about). Every kept prototype is then classified as its own class by the original head.

    ``"head_rows"``: the paper's head rows rescaled to the feature norm,
    ``w̃_c = s w_c / ‖w_c‖`` with ``s = mean_j ‖z_f,j‖``. ``"raw"``: ``w̃_c = w_c``.

    References:
        Almudévar & Ortega, "Representation Unlearning: Forgetting through Information
        Compression", ICML 2026, arXiv:2601.21564 (zero-shot regime, head-row prototypes); the
        reflection is ours.

    Example:
        >>> head = nn.Linear(2, 2)
        >>> with torch.no_grad():
        ...     _ = head.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 1.0]]))
        ...     _ = head.bias.zero_()
        >>> zero_shot_targets(head, torch.tensor([[3.0, 1.0]]), [0])
        tensor([[3., 1.],
                [1., 3.]])
    """
    check_choice(prototypes, "prototypes", PROTOTYPES)
    w = head.weight.detach().float()
    if prototypes == "raw":
        return w.clone()
    if prototypes == "head_rows":
        norms = w.norm(dim=1, keepdim=True)
        if (norms == 0).any():
            raise ValueError("head rows must be non-zero to serve as prototypes, got a zero row")
        return z_f.norm(dim=1).mean() * w / norms
    if forget_classes is None or len(forget_classes) == 0:
        raise ValueError(
            "forget_classes must name the forgotten classes for prototypes='reflect', got "
            f"{forget_classes!r}"
        )
    n_classes = w.shape[0]
    forgotten = torch.as_tensor(sorted({int(c) for c in forget_classes}), dtype=torch.long)
    if forgotten.min() < 0 or forgotten.max() >= n_classes:
        raise ValueError(
            f"forget_classes must be head classes in [0, {n_classes - 1}], got {forgotten.tolist()}"
        )
    b = head.bias.detach().float() if head.bias is not None else torch.zeros(n_classes)
    z_mean = z_f.float().mean(0)
    logits = w @ z_mean + b
    f = int(forgotten[logits[forgotten].argmax()])
    d = w - w[f]  # (C, d)
    m = (logits[f] - logits).abs()  # (C,)
    dd = (d**2).sum(1)
    kept = torch.ones(n_classes, dtype=torch.bool)
    kept[forgotten] = False
    if (dd[kept] == 0).any():
        c = int(torch.nonzero(kept & (dd == 0))[0])
        raise ValueError(
            f"head row {c} must differ from the forgotten row {f} to reflect across their "
            "boundary, got identical rows"
        )
    protos = z_mean.expand(n_classes, -1).clone()
    protos[kept] = z_mean + (2 * m[kept] / dd[kept])[:, None] * d[kept]
    if clamp is None:
        clamp = bool((z_f >= 0).all() and (z_f == 0).any())
    reflected = protos.clone()
    if clamp:
        protos = protos.clamp_min(0)
    for c in torch.nonzero(kept).flatten().tolist():
        if int((w @ protos[c] + b).argmax()) == c:
            continue
        q = _lead_projection(protos[c], w, b, c, float(m[c]), clamp)
        if q is None and clamp:
            warnings.warn(
                f"the head never ranks class {c} first on non-negative features; its zero-shot "
                "prototype is left unclamped",
                UserWarning,
                stacklevel=2,
            )
            q = _lead_projection(reflected[c], w, b, c, float(m[c]), False)
        if q is None:
            warnings.warn(
                f"the head ranks class {c} first nowhere; its zero-shot prototype is the plain "
                "reflection",
                UserWarning,
                stacklevel=2,
            )
            q = reflected[c]
        protos[c] = q
    return protos


def _lead_projection(
    p: torch.Tensor, w: torch.Tensor, b: torch.Tensor, c: int, lead: float, nonneg: bool
) -> torch.Tensor | None:
    """The point nearest ``p`` at which class ``c`` leads every other class by ``λ``:
    ``argmin_q ‖q − p‖²`` s.t. ``(w_c − w_j)ᵀq + b_c − b_j ≥ λ`` for ``j ≠ c`` (and ``q ≥ 0``
    when ``nonneg``), a small quadratic programme solved with SLSQP. ``λ`` is the largest of
    ``lead, lead/2, …, lead/2¹⁰`` for which that set is reachable; ``None`` if none is."""
    import numpy as np
    from scipy.optimize import minimize

    others = [j for j in range(w.shape[0]) if j != c]
    A = (w[c] - w[others]).double().numpy()
    gap = (b[c] - b[others]).double().numpy()
    p0 = p.double().numpy()
    for halvings in range(11):
        rhs = lead / 2**halvings - gap
        res = minimize(
            lambda q: float(((q - p0) ** 2).sum()),
            p0,
            jac=lambda q: 2 * (q - p0),
            constraints=[{"type": "ineq", "fun": lambda q, r=rhs: A @ q - r, "jac": lambda q: A}],
            bounds=[(0.0, None)] * len(p0) if nonneg else None,
            method="SLSQP",
            options={"maxiter": 500, "ftol": 1e-12},
        )
        q = torch.as_tensor(np.maximum(res.x, 0) if nonneg else res.x, dtype=p.dtype)
        if res.success and int((w @ q + b).argmax()) == c:
            return q
    return None


def zero_shot_loss(
    adapter: Adapter,
    prototypes: torch.Tensor,
    kept: torch.Tensor,
    p: torch.Tensor,
    pi: torch.Tensor,
    z_f: torch.Tensor,
    beta: torch.Tensor | float,
    *,
    sigma: float = 0.0,
    n_mc: int = 1,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(L, L_r, L_f)`` of the zero-shot regime, one entry per candidate.

    ``L_r = Σ_{c kept} p_c mean_ε ‖f(w̃_c + σε) − w̃_c‖²`` and
    ``L_f = mean_{j, ε} Σ_c π_c ‖f(z_f,j + σε) − w̃_c‖²``; ``p`` sums to 1 over ``kept``,
    ``π`` over all classes.
    """
    k, d = adapter.n_candidates, adapter.dim
    w_kept = prototypes[kept]
    out_r = adapter(_noisy(w_kept, sigma, n_mc, generator)).reshape(k, n_mc, -1, d)
    l_r = (((out_r - w_kept) ** 2).sum(-1).mean(1) * p).sum(-1)
    out_f = adapter(_noisy(z_f, sigma, n_mc, generator)).reshape(k, -1, 1, d)
    dist = ((out_f - prototypes) ** 2).sum(-1)  # (K, M·n, C)
    l_f = (dist * pi).sum(-1).mean(-1)
    b = torch.as_tensor(beta, dtype=l_r.dtype)
    return l_r + b * l_f, l_r, l_f


def _cycled(n: int, total: int, gen: torch.Generator) -> torch.Tensor:
    """``total`` indices from consecutive random permutations of ``range(n)`` (a cycled loader)."""
    perms = [torch.randperm(n, generator=gen) for _ in range(math.ceil(total / n))]
    return torch.cat(perms)[:total]


class Unlearner:
    """Learn an adapter ``f_φ`` between a frozen encoder and head so a forget set is forgotten.

    Args:
        adapter: ``"mlp"`` (``z + g(z)``, ReLU MLP with ``hidden`` widths) or ``"linear"``.
        hidden: hidden widths of the MLP adapter.
        beta: weight of the forgetting term, a number ``>= 0`` or ``"auto"`` (validation rule
            over ``beta_grid``, see :mod:`rep_unlearn._selection`).
        sigma: Monte-Carlo input noise (standard regime), ``>= 0``.
        n_mc: number ``M >= 1`` of noise draws per sample.
        epochs: passes over the forget set (one Adam step per forget batch).
        batch_size: forget / retain / reference batch size.
        lr: Adam learning rate.
        residual: identity-initialised residual MLP (``False``: the paper's plain MLP).
        beta_grid: ascending β candidates for ``beta="auto"`` (all trained in one batched pass).
        zero_shot_noise: zero-shot ``σ`` relative to ``s = mean ‖z_f‖`` (ours: 0.03, chosen on
            validation accuracy of the retained classes over 12 digits seeds, MLP and CNN).
        zero_shot_mc: zero-shot ``M`` (ours: 8).
        zero_shot_epochs, zero_shot_batch_size: zero-shot passes and batch size (ours: 30
            and 8; prototypes give a weaker retention signal than retain data, so more steps).
        prototypes: zero-shot targets, ``"reflect"`` (default: the forget mean reflected
            across each kept class's boundary with the forgotten class, clamped at 0 for
            non-negative features), ``"head_rows"`` (the paper's head rows rescaled to ``s``) or
            ``"raw"`` (head rows as they are); see :func:`zero_shot_targets`.
        seed: seeds initialisation, batch order, reference draws and noise.
        progress: a progress bar over steps; ``None`` (default): a bar on a terminal, a start
            and an end line when stderr is piped; ``False``: silent.

    After ``fit``: ``model_`` (the returned model), ``beta_`` (chosen β), ``selection_``
    (validation record per β), ``mode_``, ``candidates_`` (the batched adapter of every β),
    ``betas_``.

    Unlike scikit-learn's ``fit``, which returns ``self``, ``fit`` and ``fit_zero_shot`` return
    the unlearned model: an ``Unlearner`` is a recipe that holds no model of its own until fitted
    and has no ``predict``, while the product is an ``nn.Module`` to deploy in place of the
    original. ``model_`` keeps the same object on the fitted ``Unlearner``.

    Example:
        >>> import rep_unlearn as ru
        >>> task = ru.data.gaussian_clusters("class:0", n_per_class=40, seed=0)
        >>> split = task.fit_original(seed=0)
        >>> model = ru.Unlearner(beta=1.0, epochs=2).fit(split, task.retain, task.forget)
        >>> model(task.forget.X).shape
        torch.Size([24, 6])
    """

    def __init__(
        self,
        adapter: str = "mlp",
        hidden: Sequence[int] = (64,),
        beta: float | str = "auto",
        sigma: float = 0.0,
        n_mc: int = 1,
        epochs: int = 10,
        batch_size: int = 32,
        lr: float = 1e-3,
        residual: bool = True,
        beta_grid: Sequence[float] = BETA_GRID,
        zero_shot_noise: float = 0.03,
        zero_shot_mc: int = 8,
        zero_shot_epochs: int = 30,
        zero_shot_batch_size: int = 8,
        prototypes: str = "reflect",
        seed: SeedLike = 0,
        progress: bool | None = None,
    ) -> None:
        self.adapter = check_choice(adapter, "adapter", ("linear", "mlp"))
        self.hidden = tuple(check_positive_int(h, "hidden width") for h in hidden)
        if isinstance(beta, str):
            check_choice(beta, "beta", ("auto",))
        else:
            check_positive(beta, "beta", strict=False)
        self.beta = beta
        self.sigma = check_positive(sigma, "sigma", strict=False)
        self.n_mc = check_positive_int(n_mc, "n_mc")
        self.epochs = check_positive_int(epochs, "epochs")
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.lr = check_positive(lr, "lr")
        self.residual = bool(residual)
        grid = tuple(check_positive(b, "beta_grid entry", strict=False) for b in beta_grid)
        if not grid:
            raise ValueError("beta_grid must hold at least one value, got ()")
        self.beta_grid = grid
        self.zero_shot_noise = check_positive(zero_shot_noise, "zero_shot_noise", strict=False)
        self.zero_shot_mc = check_positive_int(zero_shot_mc, "zero_shot_mc")
        self.zero_shot_epochs = check_positive_int(zero_shot_epochs, "zero_shot_epochs")
        self.zero_shot_batch_size = check_positive_int(zero_shot_batch_size, "zero_shot_batch_size")
        self.prototypes = check_choice(prototypes, "prototypes", PROTOTYPES)
        self.seed = int_from_seed(seed, "seed", bits=63)
        self.progress = progress  # None: a bar on a terminal, a line per stage when piped

    # -- shared pieces ------------------------------------------------------------------------
    def _betas(self) -> tuple[float, ...]:
        return self.beta_grid if self.beta == "auto" else (float(self.beta),)

    def _new_adapter(self, dim: int, k: int, gen: torch.Generator) -> Adapter:
        return Adapter(dim, self.adapter, self.hidden, self.residual, k, gen)

    def _finish(
        self,
        split: SplitModel,
        cands: Adapter,
        betas: tuple[float, ...],
        index: int,
        records: list[dict[str, Any]],
        mode: str,
    ) -> RewiredModel:
        self.candidates_ = cands
        self.betas_ = betas
        self.beta_ = betas[index]
        self.mode_ = mode
        self.selection_ = [{"beta": b, **r} for b, r in zip(betas, records)]
        for p in cands.parameters():
            p.requires_grad_(False)
        self.model_ = RewiredModel(split.encoder, cands.select(index), split.head).eval()
        return self.model_

    @torch.no_grad()
    def _candidate_logits(self, split: SplitModel, cands: Adapter, z: torch.Tensor) -> list:
        out = split.head(cands(z))  # (K, n, C)
        return list(out.unbind(0))

    # -- standard regime ----------------------------------------------------------------------
    def fit(
        self,
        split_model: SplitModel | nn.Sequential,
        retain: TensorData,
        forget: TensorData,
        val: TensorData | None = None,
        forget_classes: Sequence[int] | None = None,
    ) -> RewiredModel:
        """Unlearn ``forget`` using ``retain``; returns the rewired model ``h → f_φ → (W, b)``.

        ``val`` (unseen data of every class) drives ``beta="auto"``. Without it, class
        forgetting scores candidates on ``retain`` / ``forget`` themselves; random-subset
        forgetting needs ``val``. The mode is inferred (class forgetting when no forget label
        occurs in ``retain``) unless ``forget_classes`` is given.
        """
        split = as_split_model(split_model)
        retain, forget = check_data(retain, "retain"), check_data(forget, "forget")
        check_disjoint(retain, forget)
        mode, classes = forgetting_mode(retain, forget, forget_classes, split.n_classes)
        if self.beta == "auto" and mode == "random" and val is None:
            raise ValueError(
                "val must be given for beta='auto' with random-subset forgetting (unseen data "
                "stand in for retraining); pass val or a numeric beta"
            )
        z_r, z_f = (
            encode(split, retain.X, name="retain.X"),
            encode(split, forget.X, name="forget.X"),
        )
        betas = self._betas()
        gen = torch.Generator().manual_seed(self.seed)
        cands = self._new_adapter(split.dim, len(betas), gen)
        beta_t = torch.tensor(betas).float()
        opt = Adam(cands.parameters(), lr=self.lr)
        pool = torch.cat([z_r, z_f])
        n_steps = self.epochs * math.ceil(len(z_f) / self.batch_size)
        r_idx = _cycled(len(z_r), self.epochs * len(z_f), gen)
        used = 0
        bar = iter(
            progress_bar(range(n_steps), enabled=self.progress, total=n_steps, desc="unlearn")
        )
        for _ in range(self.epochs):
            for idx_f in torch.randperm(len(z_f), generator=gen).split(self.batch_size):
                idx_r = r_idx[used : used + len(idx_f)]
                used += len(idx_f)
                idx_ref = torch.randint(len(pool), (len(idx_f),), generator=gen)
                loss, _, _ = standard_loss(
                    cands,
                    z_r[idx_r],
                    z_f[idx_f],
                    pool[idx_ref],
                    beta_t,
                    sigma=self.sigma,
                    n_mc=self.n_mc,
                    generator=gen,
                )
                opt.zero_grad(set_to_none=True)
                loss.sum().backward()
                opt.step()
                next(bar, None)
        index, records = 0, [{}]
        if len(betas) > 1:
            index, records = self._select(split, cands, mode, classes, retain, forget, val)
        return self._finish(split, cands, betas, index, records, mode)

    def _select(
        self,
        split: SplitModel,
        cands: Adapter,
        mode: str,
        classes: tuple[int, ...],
        retain: TensorData,
        forget: TensorData,
        val: TensorData | None,
    ) -> tuple[int, list[dict[str, Any]]]:
        if val is None:  # class mode only: score on the training splits themselves
            X_v, y_v = torch.cat([retain.X, forget.X]), torch.cat([retain.y, forget.y])
        else:
            val = check_data(val, "val")
            X_v, y_v = val.X, val.y
        lv = self._candidate_logits(split, cands, encode(split, X_v, name="val.X"))
        lf = self._candidate_logits(split, cands, encode(split, forget.X, name="forget.X"))
        return select_candidate(mode, lv, y_v, lf, forget.y, classes)

    # -- zero-shot regime ---------------------------------------------------------------------
    def fit_zero_shot(
        self,
        split_model: SplitModel | nn.Sequential,
        forget: TensorData,
        forget_classes: Sequence[int],
        class_prior: Sequence[float] | None = None,
        val: TensorData | None = None,
    ) -> RewiredModel:
        """Forget ``forget_classes`` from forget samples and the head alone (no retain data).

        ``class_prior`` gives ``π`` over all classes (``p`` is ``π`` restricted to the kept
        classes, renormalised); default uniform. ``beta="auto"``: with ``val``, the
        class-forgetting rule; without, the smallest β whose accuracy on the forget samples is
        ``≤ 5%`` (ours; needs no retained data).
        """
        split = as_split_model(split_model)
        forget = check_data(forget, "forget")
        head = split.head
        if not isinstance(head, nn.Linear) or head.weight is None:
            raise ValueError("zero-shot unlearning needs the head's weights (an nn.Linear head)")
        C = split.n_classes
        _, classes = forgetting_mode(None, forget, forget_classes, C)
        if class_prior is None:
            pi = torch.full((C,), 1.0 / C)
        else:
            pi = torch.as_tensor(list(class_prior), dtype=torch.float32)
            if pi.shape != (C,) or not torch.isfinite(pi).all() or (pi < 0).any() or pi.sum() <= 0:
                raise ValueError(
                    f"class_prior must be {C} finite non-negative weights with a positive sum, "
                    f"got {list(class_prior)}"
                )
            pi = pi / pi.sum()
        kept = torch.ones(C, dtype=torch.bool)
        kept[list(classes)] = False
        p = (
            pi[kept] / pi[kept].sum()
            if pi[kept].sum() > 0
            else torch.full((int(kept.sum()),), 1.0 / int(kept.sum()))
        )
        z_f = encode(split, forget.X, name="forget.X")
        protos = zero_shot_targets(head, z_f, classes, self.prototypes)
        s = float(z_f.norm(dim=1).mean())
        sigma = self.zero_shot_noise * s
        betas = self._betas()
        gen = torch.Generator().manual_seed(self.seed)
        cands = self._new_adapter(split.dim, len(betas), gen)
        beta_t = torch.tensor(betas).float()
        opt = Adam(cands.parameters(), lr=self.lr)
        bs, epochs = self.zero_shot_batch_size, self.zero_shot_epochs
        n_steps = epochs * math.ceil(len(z_f) / bs)
        bar = iter(
            progress_bar(range(n_steps), enabled=self.progress, total=n_steps, desc="zero-shot")
        )
        for _ in range(epochs):
            for idx_f in torch.randperm(len(z_f), generator=gen).split(bs):
                loss, _, _ = zero_shot_loss(
                    cands,
                    protos,
                    kept,
                    p,
                    pi,
                    z_f[idx_f],
                    beta_t,
                    sigma=sigma,
                    n_mc=self.zero_shot_mc,
                    generator=gen,
                )
                opt.zero_grad(set_to_none=True)
                loss.sum().backward()
                opt.step()
                next(bar, None)
        self.prototypes_ = protos
        index, records = 0, [{}]
        if len(betas) > 1:
            if val is not None:
                val = check_data(val, "val")
                lv = self._candidate_logits(split, cands, encode(split, val.X, name="val.X"))
                index, records = select_candidate("class", lv, val.y, forget_classes=classes)
            else:
                lf = self._candidate_logits(split, cands, z_f)
                records = [
                    {"forget_acc": float((lg.argmax(1) == forget.y).float().mean())} for lg in lf
                ]
                ok = [i for i, r in enumerate(records) if r["forget_acc"] <= 0.05]
                index = (
                    ok[0]
                    if ok
                    else min(range(len(records)), key=lambda i: records[i]["forget_acc"])
                )
        return self._finish(split, cands, betas, index, records, "zero-shot")
