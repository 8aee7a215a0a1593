"""Peers re-implemented on PerturbedVAE's interface (``fit(screen)`` / ``predict(conditions)``).

* :class:`ControlMean`: no change (the control cells themselves).
* :class:`Additive`: control mean + Σ_p (pseudobulk(p) − control mean) over the combination's singles.
* :class:`Ridge`: ridge regression from the multi-hot u to the pseudobulk of each training
  condition (intercept unpenalised), λ chosen by leave-one-condition-out cross-validation.
* :class:`NoSeparationVAE`: the ablation of PerturbedVAE's background / perturbation split:
  one latent z (of size d_ι + d_ν) inferred from x and u, prior N(Δu, I) (each perturbation a
  learned latent shift), the same decoder, sizes, warm-up and epochs.
* :class:`CPALike`: an autoencoder in the spirit of CPA (Lotfollahi et al., 2023): a basal latent
  made u-independent by an adversarial perturbation classifier behind gradient reversal, learned
  perturbation embeddings added in latent space, a Gaussian decoder with per-gene variance.

The mean-only peers return cells as training control cells shifted by their predicted Δ.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from torch import nn

from icml26_shared.checks import (
    SeedLike,
    check_positive,
    check_positive_int,
    int_from_seed,
    rng_from_seed,
)
from icml26_shared.experiment import progress as progress_bar
from icml26_shared.experiment import progress_enabled

from ._data import CONTROL, Screen, _parse_label, encode_conditions
from ._perturbedvae import Prediction, mlp

__all__ = ["Additive", "CPALike", "ControlMean", "NoSeparationVAE", "Ridge"]


class _MeanPeer:
    """Shared fit / predict of the peers that predict a pseudobulk shift."""

    def fit(self, screen: Screen) -> _MeanPeer:
        if not isinstance(screen, Screen):
            raise TypeError(
                f"screen must be a perturbedvae.data.Screen, got {type(screen).__name__}"
            )
        ctrl = screen.is_control
        if not ctrl.any():
            raise ValueError("screen has no control cells (condition 'ctrl')")
        self.perturbations = tuple(screen.perturbations)
        self.genes = tuple(screen.genes)
        self._controls = screen.X[ctrl]
        self.control_mean = self._controls.mean(0)
        self.seen = {p for p, used in zip(self.perturbations, screen.U.any(0)) if used}
        self._fit(screen)
        return self

    def _fit(self, screen: Screen) -> None:
        pass

    def _delta(self, condition: str) -> NDArray[np.float64]:
        raise NotImplementedError

    def predict(
        self, conditions: str | list[str], n_cells: int = 500, seed: SeedLike = 0
    ) -> Prediction:
        """Pseudobulk means and control cells shifted by the predicted Δ."""
        if not hasattr(self, "seen"):
            raise RuntimeError("call fit(screen) first")
        conds = _parse_request(conditions, self.seen)
        check_positive_int(n_cells, "n_cells")
        rng = rng_from_seed(seed)
        deltas = np.stack([self._delta(c) for c in conds])
        base = self._controls[rng.integers(0, len(self._controls), (len(conds), n_cells))]
        return Prediction(conds, base + deltas[:, None, :], self.control_mean + deltas)


def _parse_request(conditions: str | list[str], seen: set[str]) -> list[str]:
    if isinstance(conditions, str):
        conditions = [conditions]
    if len(conditions) == 0:
        raise ValueError("conditions must name at least one condition")
    parsed = [_parse_label(c, CONTROL, "+") for c in conditions]
    unseen = sorted({p for c in parsed if c != CONTROL for p in c.split("+")} - seen)
    if unseen:
        raise ValueError(f"perturbations not seen in training: {unseen}")
    return parsed


class ControlMean(_MeanPeer):
    """Predicts no change: the control mean for every condition."""

    def _delta(self, condition: str) -> NDArray[np.float64]:
        return np.zeros_like(self.control_mean)


class Additive(_MeanPeer):
    """Control mean plus the sum of the singles' pseudobulk deltas (needs every single observed)."""

    def _fit(self, screen: Screen) -> None:
        self.single_delta = {}
        for p in self.seen:
            mask = screen.conditions == p
            if mask.any():
                self.single_delta[p] = screen.X[mask].mean(0) - self.control_mean

    def _delta(self, condition: str) -> NDArray[np.float64]:
        out = np.zeros_like(self.control_mean)
        if condition == CONTROL:
            return out
        for p in condition.split("+"):
            if p not in self.single_delta:
                raise ValueError(f"Additive needs the single {p!r} observed on its own")
            out = out + self.single_delta[p]
        return out


class Ridge(_MeanPeer):
    """Ridge from multi-hot u to condition pseudobulk; λ by leave-one-condition-out CV.

    Args:
        lambdas: the grid of penalties searched (default 10^-3 … 10^3).
    """

    def __init__(self, lambdas: tuple[float, ...] | None = None) -> None:
        grid = tuple(np.logspace(-3, 3, 13)) if lambdas is None else tuple(lambdas)
        if not grid:
            raise ValueError("lambdas must not be empty")
        self.lambdas = tuple(check_positive(v, "lambdas") for v in grid)

    @staticmethod
    def _solve(U: NDArray, Y: NDArray, lam: float) -> tuple[NDArray, NDArray]:
        um, ym = U.mean(0), Y.mean(0)
        Uc, Yc = U - um, Y - ym
        W = np.linalg.solve(Uc.T @ Uc + lam * np.eye(U.shape[1]), Uc.T @ Yc)
        return W, ym - um @ W

    def _fit(self, screen: Screen) -> None:
        names = screen.condition_names()
        U = encode_conditions(names, self.perturbations)
        Y = np.stack([screen.pseudobulk(c) for c in names])
        cv = []
        for lam in self.lambdas:
            err = 0.0
            for i in range(len(names)):
                keep = np.arange(len(names)) != i
                W, b = self._solve(U[keep], Y[keep], lam)
                err += float(((U[i] @ W + b - Y[i]) ** 2).mean())
            cv.append(err)
        self.lambda_ = self.lambdas[int(np.argmin(cv))]
        self.W, self.b = self._solve(U, Y, self.lambda_)

    def _delta(self, condition: str) -> NDArray[np.float64]:
        u = encode_conditions([condition], self.perturbations)[0]
        return u @ self.W + self.b - self.control_mean


class _GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: float) -> torch.Tensor:  # type: ignore[override]
        ctx.weight = weight
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:  # type: ignore[override]
        return -ctx.weight * grad, None


class CPALike:
    """A CPA-like compositional autoencoder (the same sizes and epochs as PerturbedVAE).

    z_basal = enc(x); an adversary predicts u from z_basal through gradient reversal (weight
    ``adversary_weight``), so the encoder learns to remove u; z = z_basal + Σ_p u_p e_p;
    x ~ N(dec(z), diag σ²). Prediction encodes control cells and adds the embeddings.
    """

    def __init__(
        self, n_genes: int, n_perts: int, d_latent: int = 14, *, hidden: int = 256,
        adversary_weight: float = 1.0,
    ) -> None:  # fmt: skip
        self.n_genes = check_positive_int(n_genes, "n_genes")
        self.n_perts = check_positive_int(n_perts, "n_perts")
        self.d_latent = check_positive_int(d_latent, "d_latent")
        self.hidden = check_positive_int(hidden, "hidden")
        self.adversary_weight = check_positive(adversary_weight, "adversary_weight", strict=False)

    def fit(
        self, screen: Screen, epochs: int = 100, seed: SeedLike = 0, *, lr: float = 1e-4,
        batch_size: int = 64, progress: bool | None = None,
    ) -> CPALike:  # fmt: skip
        """Adam on the Gaussian NLL + adversarial BCE (gradient reversal); returns ``self``."""
        gen, X, U = _start_fit(self, screen, epochs, seed)
        self.enc = mlp(self.n_genes, self.hidden, self.d_latent)
        self.dec = mlp(self.d_latent, self.hidden, self.n_genes)
        self.adv = mlp(self.d_latent, self.hidden, self.n_perts)
        self.emb = nn.Parameter(0.1 * torch.randn(self.n_perts, self.d_latent))
        self.log_var = nn.Parameter(torch.zeros(self.n_genes))
        params = [*self.enc.parameters(), *self.dec.parameters(), *self.adv.parameters()]
        opt = torch.optim.Adam([*params, self.emb, self.log_var], lr=lr)
        bce = nn.BCEWithLogitsLoss()
        self._controls = screen.X[screen.is_control]
        for _ in progress_bar(
            range(epochs), enabled=progress_enabled(progress), total=epochs, desc="CPA-like"
        ):
            order = torch.randperm(len(X), generator=gen)
            for start in range(0, len(X), batch_size):
                idx = order[start : start + batch_size]
                xs = (X[idx] - self.x_mean) / self.x_std
                zb = self.enc(xs)
                h = self.dec(zb + U[idx] @ self.emb)
                nll = 0.5 * (((xs - h) ** 2) * torch.exp(-self.log_var) + self.log_var).sum(-1)
                adv = bce(self.adv(_GradReverse.apply(zb, self.adversary_weight)), U[idx])
                loss = nll.mean() + 0.5 * math.log(2 * math.pi) * self.n_genes + adv * self.n_perts
                opt.zero_grad()
                loss.backward()
                opt.step()
        return self

    def background(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        """The basal latent of cells ``X``."""
        with torch.no_grad():
            x = torch.as_tensor(np.asarray(X, dtype=np.float32))
            return self.enc((x - self.x_mean) / self.x_std).numpy().astype(np.float64)

    def predict(
        self, conditions: str | list[str], n_cells: int = 500, seed: SeedLike = 0
    ) -> Prediction:
        """Encode control cells, add the embeddings of the combination, decode (+ noise)."""
        return _predict_by_latent_shift(self, conditions, n_cells, seed, self.enc, self.emb)


class NoSeparationVAE:
    """PerturbedVAE without the background / perturbation separation (the ablation).

    One latent z ∈ R^{d_latent} with q(z | x, u) (a Gaussian MLP encoder that sees u) and prior
    p(z | u) = N(Δu, I); decoder and per-gene Gaussian variance as PerturbedVAE's, KL warm-up over
    the first ``warmup`` of the steps, L1 ``l1`` on Δ. Prediction encodes control cells with
    u = 0, adds Δu′ to their posterior means and decodes.
    """

    def __init__(
        self, n_genes: int, n_perts: int, d_latent: int = 14, *, hidden: int = 256,
        l1: float = 1e-3, delta_init: float = 0.5,
    ) -> None:  # fmt: skip
        self.n_genes = check_positive_int(n_genes, "n_genes")
        self.n_perts = check_positive_int(n_perts, "n_perts")
        self.d_latent = check_positive_int(d_latent, "d_latent")
        self.hidden = check_positive_int(hidden, "hidden")
        self.l1 = check_positive(l1, "l1", strict=False)
        self.delta_init = check_positive(delta_init, "delta_init")

    def fit(
        self, screen: Screen, epochs: int = 100, seed: SeedLike = 0, *, lr: float = 1e-4,
        batch_size: int = 64, warmup: float = 0.25, progress: bool | None = None,
    ) -> NoSeparationVAE:  # fmt: skip
        """Adam on the negative ELBO (+ L1 on Δ); returns ``self``."""
        check_positive_int(batch_size, "batch_size")
        gen, X, U = _start_fit(self, screen, epochs, seed)
        d = self.d_latent
        self.enc = mlp(self.n_genes + self.n_perts, self.hidden, 2 * d)
        self.dec = mlp(d, self.hidden, self.n_genes)
        self.delta = nn.Parameter(self.delta_init * torch.randn(self.n_perts, d))
        self.log_var = nn.Parameter(torch.zeros(self.n_genes))
        params = [*self.enc.parameters(), *self.dec.parameters(), self.delta, self.log_var]
        opt = torch.optim.Adam(params, lr=lr)
        self._controls = screen.X[screen.is_control]
        n = len(X)
        warm = warmup * epochs * math.ceil(n / batch_size)
        step = 0
        for _ in progress_bar(
            range(epochs), enabled=progress_enabled(progress), total=epochs, desc="no separation"
        ):
            order = torch.randperm(n, generator=gen)
            for start in range(0, n, batch_size):
                idx = order[start : start + batch_size]
                xs = (X[idx] - self.x_mean) / self.x_std
                mu, lv = self._encode(xs, U[idx])
                z = mu + torch.exp(0.5 * lv) * torch.randn(mu.shape, generator=gen)
                h = self.dec(z)
                nll = 0.5 * (((xs - h) ** 2) * torch.exp(-self.log_var) + self.log_var).sum(-1)
                prior_mu = U[idx] @ self.delta
                kl = 0.5 * ((mu - prior_mu) ** 2 + torch.exp(lv) - 1 - lv).sum(-1)
                beta = min(1.0, (step + 1) / warm) if warm > 0 else 1.0
                loss = (nll + beta * kl).mean() + self.l1 * self.delta.abs().sum()
                step += 1
                opt.zero_grad()
                loss.backward()
                opt.step()
        return self

    def _encode(self, xs: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.enc(torch.cat([xs, u], -1))
        return out[:, : self.d_latent], out[:, self.d_latent :].clamp(-12, 8)

    def latent(self, screen: Screen, *, use_u: bool = True) -> NDArray[np.float64]:
        """Posterior means of z for the cells of ``screen`` (``use_u=False``: u = 0)."""
        if not hasattr(self, "seen"):
            raise RuntimeError("call fit(screen) first")
        x = (torch.as_tensor(screen.X, dtype=torch.float32) - self.x_mean) / self.x_std
        u = torch.as_tensor(screen.U, dtype=torch.float32)
        with torch.no_grad():
            return self._encode(x, u if use_u else 0 * u)[0].numpy().astype(np.float64)

    def predict(
        self, conditions: str | list[str], n_cells: int = 500, seed: SeedLike = 0
    ) -> Prediction:
        """Encode control cells (u = 0), add Δu′ in latent space, decode (+ noise)."""

        def basal(xs: torch.Tensor) -> torch.Tensor:
            return self._encode(xs, torch.zeros(len(xs), self.n_perts))[0]

        return _predict_by_latent_shift(self, conditions, n_cells, seed, basal, self.delta)


def _start_fit(
    model: Any, screen: Screen, epochs: int, seed: int
) -> tuple[torch.Generator, torch.Tensor, torch.Tensor]:
    """The neural peers' common start of ``fit``: check the screen and ``epochs``, seed torch,
    record the perturbations (all, and those seen in training) and the per-gene standardisation;
    returns the batch generator and the screen's ``X`` and ``U`` as float32 tensors."""
    _check_peer_screen(screen, model.n_genes, model.n_perts)
    check_positive_int(epochs, "epochs")
    seed = int_from_seed(seed, "seed", bits=63)
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    model.perturbations = tuple(screen.perturbations)
    model.seen = {p for p, used in zip(model.perturbations, screen.U.any(0)) if used}
    X = torch.as_tensor(screen.X, dtype=torch.float32)
    U = torch.as_tensor(screen.U, dtype=torch.float32)
    model.x_mean, model.x_std = X.mean(0), X.std(0).clamp_min(1e-3)
    return gen, X, U


def _predict_by_latent_shift(
    model: Any,
    conditions: str | list[str],
    n_cells: int,
    seed: int,
    basal: Callable[[torch.Tensor], torch.Tensor],
    shift: torch.Tensor,
) -> Prediction:
    """The peers' prediction: the latents ``basal(x_0)`` of ``n_cells`` control cells (the same
    cells for every condition), plus ``u @ shift`` for each requested combination ``u``,
    decoded, plus Gaussian noise of the model's per-gene variance."""
    if not hasattr(model, "seen"):
        raise RuntimeError("call fit(screen) first")
    conds = _parse_request(conditions, model.seen)
    check_positive_int(n_cells, "n_cells")
    seed = int_from_seed(seed, "seed", bits=63)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    U = torch.as_tensor(encode_conditions(conds, model.perturbations), dtype=torch.float32)
    sd = torch.exp(0.5 * model.log_var) * model.x_std
    cells, means = [], []
    with torch.no_grad():
        x0 = torch.as_tensor(
            model._controls[rng.integers(0, len(model._controls), n_cells)], dtype=torch.float32
        )
        z0 = basal((x0 - model.x_mean) / model.x_std)
        for k in range(len(conds)):
            m = model.dec(z0 + U[k] @ shift) * model.x_std + model.x_mean
            cells.append((m + sd * torch.randn(m.shape, generator=gen)).numpy())
            means.append(m.mean(0).numpy())
    return Prediction(conds, np.stack(cells).astype(np.float64), np.stack(means).astype(np.float64))


def _check_peer_screen(screen: Screen, n_genes: int, n_perts: int) -> None:
    if not isinstance(screen, Screen):
        raise TypeError(f"screen must be a perturbedvae.data.Screen, got {type(screen).__name__}")
    if screen.n_genes != n_genes or len(screen.perturbations) != n_perts:
        raise ValueError(
            f"screen has {screen.n_genes} genes / {len(screen.perturbations)} perturbations, "
            f"the model expects {n_genes} / {n_perts}"
        )
    if not screen.is_control.any():
        raise ValueError("screen has no control cells (condition 'ctrl')")
