"""PerturbedVAE: a dominant background latent z_ι beside sparse causal perturbation latents z_ν.

Jiang, Liu, Cai, Gao, Dong, Abbasnejad, Yao, Shi, "What Makes a Representation Good for
Single-Cell Perturbation Prediction?", ICML 2026 (arXiv 2605.19343). No code of the paper was
available; this is a reconstruction from its description, and the Gaussian SCM parametrisation
below is this package's.

Generative model (u ∈ {0, 1}^P multi-hot, 0 = control)::

    z_ι ~ N(0, I_{d_ι})
    z_ν = A z_ν + C z_ι + Δu + ε,    ε ~ N(0, diag ω²),   A strictly lower-triangular
        ⇒ p(z_ν | z_ι, u) = N((I − A)⁻¹(C z_ι + Δu), (I − A)⁻¹ diag ω² (I − A)⁻ᵀ)
    x ~ N(g(z_ι, z_ν), diag σ²)      or  NB(ℓ · softmax g(z_ι, z_ν), θ) for counts

Inference q(z_ν, z_ι | x, u) = q(z_ν | x, u) q(z_ι | x): the background encoder never sees u.
The loss (per cell) is::

    −E_q log p(x | z) + KL(q(z_ι|x) ‖ N(0, I)) + E_{q(z_ι)} KL(q(z_ν|x,u) ‖ p(z_ν|z_ι,u))
      + α · align(μ_ι(perturbed cells), μ_ι(control cells))  + λ₁ ‖Δ‖₁

The alignment term compares the background means μ_ι of each perturbation condition's cells
with those of control cells x⁰: ``align="mean"`` matches the group means, penalising
‖E μ_ι(x | c) − E μ_ι(x⁰)‖² with a gradient taken at running estimates of the two means
(:func:`smoothed_mean_gap`), so the spread inside a group is not penalised and a few cells per
group in a batch add no noise; ``align="mmd"`` matches the whole distributions per minibatch
(Gaussian-kernel MMD², :func:`alignment_term`); ``align="partner"`` is the random-partner term
‖μ_ι(x) − μ_ι(x⁰)‖², whose expectation adds both groups' variances to the mean gap.

Both KL terms are closed-form; with B = I − A (det B = 1), Σ_p⁻¹ = Bᵀ diag ω⁻² B and the
expectation over q(z_ι) = N(m_ι, diag s_ι²) is also exact::

    E KL = ½ [ Σ_k ω_k⁻² (Σ_j B_kj² s_νj² + Σ_j C_kj² s_ιj² + r_k²) − d_ν
               + Σ_k log ω_k² − Σ_j log s_νj² ],   r = B m_ν − C m_ι − Δu.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from numpy.typing import ArrayLike, NDArray
from torch import nn

from icml26_shared.checks import (
    SeedLike,
    check_finite_array,
    check_positive,
    check_positive_int,
    int_from_seed,
)
from icml26_shared.experiment import progress as progress_bar
from icml26_shared.experiment import progress_enabled

from ._data import CONTROL, Screen, _parse_label, encode_conditions, read_screen

__all__ = [
    "PerturbedVAE",
    "Prediction",
    "Programs",
    "alignment_term",
    "scm_kl",
    "smoothed_mean_gap",
]

LIKELIHOODS = ("gaussian", "nb")
INTERVENTIONS = ("hard", "soft")
ALIGNMENTS = ("mean", "mmd", "partner")


def mlp(n_in: int, hidden: int, n_out: int) -> nn.Sequential:
    """Two hidden layers of ``hidden`` units with LeakyReLU."""
    return nn.Sequential(
        nn.Linear(n_in, hidden),
        nn.LeakyReLU(0.01),
        nn.Linear(hidden, hidden),
        nn.LeakyReLU(0.01),
        nn.Linear(hidden, n_out),
    )


def scm_kl(
    mu_nu: torch.Tensor,
    logvar_nu: torch.Tensor,
    mu_bg: torch.Tensor,
    logvar_bg: torch.Tensor,
    A: torch.Tensor,
    C: torch.Tensor,
    shift: torch.Tensor,
    log_omega2: torch.Tensor,
) -> torch.Tensor:
    """E_{z_ι ~ N(mu_bg, e^{logvar_bg})} KL(N(mu_nu, e^{logvar_nu}) ‖ p(z_ν | z_ι, u)), per row.

    Args:
        mu_nu, logvar_nu: (n, d_ν) posterior of z_ν.
        mu_bg, logvar_bg: (n, d_ι) posterior of z_ι.
        A: (d_ν, d_ν) strictly lower-triangular DAG weights; C: (d_ν, d_ι).
        shift: (n, d_ν) the intervention term Δu.
        log_omega2: (d_ν,) or (n, d_ν) log noise variances.
    """
    d = mu_nu.shape[-1]
    B = torch.eye(d, dtype=A.dtype, device=A.device) - A
    inv_w = torch.exp(-log_omega2)
    r = mu_nu @ B.T - mu_bg @ C.T - shift
    tr_nu = torch.exp(logvar_nu) @ (B**2).T
    tr_bg = torch.exp(logvar_bg) @ (C**2).T
    quad = (inv_w * (r**2 + tr_nu + tr_bg)).sum(-1)
    logdet = log_omega2.sum(-1) - logvar_nu.sum(-1)
    return 0.5 * (quad - d + logdet)


def _kernel(a: torch.Tensor, b: torch.Tensor, kind: str) -> torch.Tensor:
    if kind == "mean":
        return a @ b.T
    d2 = (a[:, None, :] - b[None, :, :]).pow(2).sum(-1)
    h2 = float(a.shape[-1])  # the prior N(0, I) sets the scale; three bandwidths around it
    return sum(torch.exp(-d2 / (2 * s * h2)) for s in (0.25, 1.0, 4.0)) / 3


def alignment_term(
    mu: torch.Tensor, groups: torch.Tensor, mu0: torch.Tensor, kind: str = "mean"
) -> torch.Tensor:
    """Discrepancy between each group's background means and the controls', weighted by size.

    For every group c with n_c ≥ 2 cells (rows of ``mu`` where ``groups`` is ``c``; groups < 0
    are left out), the unbiased MMD² U-statistic against the m control rows ``mu0``::

        MMD²_c = Σ_{i≠j ∈ c} k(μ_i, μ_j) / (n_c(n_c−1)) + Σ_{r≠s} k(μ⁰_r, μ⁰_s) / (m(m−1))
                 − 2 Σ_{i ∈ c, r} k(μ_i, μ⁰_r) / (n_c m)

    with k(a, b) = aᵀb for ``kind="mean"`` (then MMD²_c is an unbiased estimate of the squared
    distance between the group means) or a mixture of Gaussian kernels with bandwidths² of
    d/4, d and 4d for ``kind="mmd"``. Returns Σ_c n_c MMD²_c / Σ_c n_c (0 if no group counts).

    Args:
        mu: (n, d) background means of perturbed cells.
        groups: (n,) integer group (condition) of each row.
        mu0: (m, d) background means of control cells, m ≥ 2.
        kind: ``"mean"`` or ``"mmd"``.
    """
    if kind not in ("mean", "mmd"):
        raise ValueError(f"kind must be 'mean' or 'mmd', got {kind!r}")
    m = mu0.shape[0]
    if m < 2:
        raise ValueError(f"mu0 needs at least 2 control rows, got {m}")
    keep = groups >= 0
    mu, groups = mu[keep], groups[keep]
    if mu.shape[0] == 0:
        return mu0.sum() * 0.0
    _, inv = torch.unique(groups, return_inverse=True)
    G = torch.nn.functional.one_hot(inv).to(mu.dtype)  # (n, C)
    n_c = G.sum(0)
    k_pp = _kernel(mu, mu, kind)
    within = ((G.T @ k_pp) * G.T).sum(-1) - G.T @ torch.diagonal(k_pp)
    pp = within / (n_c * (n_c - 1)).clamp_min(1.0)
    pr = (G.T @ _kernel(mu, mu0, kind)).sum(-1) / (n_c * m)
    k_rr = _kernel(mu0, mu0, kind)
    rr = (k_rr.sum() - torch.diagonal(k_rr).sum()) / (m * (m - 1))
    valid = (n_c >= 2).to(mu.dtype)
    if valid.sum() == 0:
        return mu0.sum() * 0.0
    return ((pp + rr - 2 * pr) * n_c * valid).sum() / (n_c * valid).sum()


def smoothed_mean_gap(
    mu: torch.Tensor,
    groups: torch.Tensor,
    mu0: torch.Tensor,
    ema: torch.Tensor,
    ema0: torch.Tensor,
    decay: float = 0.9,
) -> torch.Tensor:
    """Low-variance surrogate of Σ_c w_c ‖E μ_ι(x | c) − E μ_ι(x⁰)‖² for one minibatch.

    The batch means m_c (cells of group c in ``mu``) and m_0 (rows of ``mu0``) update running
    means ``ema`` (C, d) and ``ema0`` (d,) in place (``decay`` per batch); the returned value
    Σ_c w_c 2 ĝ_cᵀ (m_c − m_0), with ĝ_c = ema[c] − ema0 held fixed and w_c = n_c / Σ n_c, has
    the gradient of Σ_c w_c ‖m_c − m_0‖² at the smoothed gap ĝ_c. A gap that is 0 gives no
    gradient, so a few cells per group in a batch do not inject noise into the encoder (the
    squared batch gap, even unbiased, has a spread that grows with the background's).

    Args:
        mu: (n, d) background means of perturbed cells; groups: (n,) their group in [0, C),
            negative entries left out.
        mu0: (m, d) background means of control cells.
        ema, ema0: running group and control means (updated here).
    """
    keep = groups >= 0
    mu, groups = mu[keep], groups[keep]
    if mu.shape[0] == 0:
        return mu0.sum() * 0.0
    G = torch.nn.functional.one_hot(groups, ema.shape[0]).to(mu.dtype)  # (n, C)
    n_c = G.sum(0)
    present = n_c > 0
    m_c = (G.T @ mu)[present] / n_c[present, None]
    m_0 = mu0.mean(0)
    with torch.no_grad():
        ema[present] = decay * ema[present] + (1 - decay) * m_c.detach()
        ema0.mul_(decay).add_((1 - decay) * m_0.detach())
        gap = ema[present] - ema0
    w = n_c[present] / n_c.sum()
    return (2 * w[:, None] * gap * (m_c - m_0)).sum()


def _nb_log_prob(x: torch.Tensor, mu: torch.Tensor, log_theta: torch.Tensor) -> torch.Tensor:
    theta = torch.exp(log_theta)
    log_den = torch.log(theta + mu + 1e-8)
    return (
        torch.lgamma(x + theta)
        - torch.lgamma(theta)
        - torch.lgamma(x + 1)
        + theta * (log_theta - log_den)
        + x * (torch.log(mu + 1e-8) - log_den)
    )


class _Net(nn.Module):
    def __init__(
        self,
        G: int,
        P: int,
        d_bg: int,
        d_pert: int,
        hidden: int,
        soft: bool,
        nb: bool,
        omega0: float,
        delta0: float,
    ) -> None:
        super().__init__()
        self.enc_bg = mlp(G, hidden, 2 * d_bg)
        self.enc_pert = mlp(G + P, hidden, 2 * d_pert)
        self.dec = mlp(d_bg + d_pert, hidden, G)
        self.log_var_x = nn.Parameter(torch.zeros(G))
        self.log_theta = nn.Parameter(torch.full((G,), 2.0))
        self.A_free = nn.Parameter(torch.zeros(d_pert, d_pert))
        self.register_buffer("mask", torch.tril(torch.ones(d_pert, d_pert), -1))
        self.C = nn.Parameter(torch.zeros(d_pert, d_bg))
        self.delta = nn.Parameter(delta0 * torch.randn(P, d_pert))
        self.log_omega2 = nn.Parameter(torch.full((d_pert,), math.log(omega0**2)))
        self.gamma = nn.Parameter(torch.zeros(P, d_pert)) if soft else None
        self.register_buffer("x_mean", torch.zeros(G))
        self.register_buffer("x_std", torch.ones(G))
        self.nb = nb
        self.d_bg = d_bg

    @property
    def A(self) -> torch.Tensor:
        return self.A_free * self.mask

    def features(self, x: torch.Tensor) -> torch.Tensor:
        xin = torch.log1p(x) if self.nb else x
        return (xin - self.x_mean) / self.x_std

    def encode_bg(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.enc_bg(self.features(x))
        return out[:, : self.d_bg], out[:, self.d_bg :].clamp(-12, 8)

    def encode_pert(self, x: torch.Tensor, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out = self.enc_pert(torch.cat([self.features(x), u], -1))
        d = out.shape[-1] // 2
        return out[:, :d], out[:, d:].clamp(-12, 8)

    def log_omega2_of(self, u: torch.Tensor) -> torch.Tensor:
        if self.gamma is None:
            return self.log_omega2.expand(u.shape[0], -1)
        return self.log_omega2 + u @ self.gamma

    def prior_sample(
        self,
        z_bg: torch.Tensor,
        u: torch.Tensor,
        gen: torch.Generator,
        noise: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """z_ν = (I − A)⁻¹(C z_ι + Δu + ε), ε = ω(u) ⊙ ``noise``, noise ~ N(0, I) if not given."""
        d = self.A.shape[0]
        if noise is None:
            noise = torch.randn(z_bg.shape[0], d, generator=gen)
        eps = noise * torch.exp(0.5 * self.log_omega2_of(u))
        rhs = z_bg @ self.C.T + u @ self.delta + eps
        B = torch.eye(d) - self.A
        return torch.linalg.solve_triangular(B, rhs.T, upper=False, unitriangular=True).T

    def log_lik(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        h = self.dec(z)
        if self.nb:
            mu = x.sum(-1, keepdim=True) * torch.softmax(h, -1)
            return _nb_log_prob(x, mu, self.log_theta).sum(-1)
        xs = (x - self.x_mean) / self.x_std
        lv = self.log_var_x
        return -0.5 * (((xs - h) ** 2) * torch.exp(-lv) + lv + math.log(2 * math.pi)).sum(-1)

    def decode_mean(self, z: torch.Tensor, library: torch.Tensor | None) -> torch.Tensor:
        h = self.dec(z)
        if self.nb:
            return library[:, None] * torch.softmax(h, -1)  # type: ignore[index]
        return h * self.x_std + self.x_mean


@dataclass
class Prediction:
    """Predicted cells and pseudobulk means, one entry per requested condition.

    Attributes:
        conditions: canonical condition strings, in request order.
        cells: (K, n_cells, G) generated cells (observation noise included).
        mean: (K, G) pseudobulk means (noise-free decoder means averaged over cells).
    """

    conditions: list[str]
    cells: NDArray[np.float64]
    mean: NDArray[np.float64]

    def __getitem__(self, condition: str) -> NDArray[np.float64]:
        """The pseudobulk mean of ``condition`` (``"A+B"`` or ``"B+A"``)."""
        key = _parse_label(condition, CONTROL, "+")
        if key not in self.conditions:
            raise KeyError(f"{condition!r} was not predicted; have {self.conditions}")
        return self.mean[self.conditions.index(key)]


@dataclass
class Programs:
    """Readable perturbation → node → gene programs of a fitted model.

    Attributes:
        perturbations, genes: names.
        targets: (P, d_ν) direct intervention shifts Δᵀ (sparse under the L1 penalty).
        dag: (d_ν, d_ν) the strictly lower-triangular A (``dag[k, j]``: edge j → k).
        total_effects: (P, d_ν) the mean shift (I − A)⁻¹ δ_p each perturbation causes.
        node_genes: (d_ν, G) average decoder Jacobian ∂g/∂z_ν over control cells.
    """

    perturbations: tuple[str, ...]
    genes: tuple[str, ...]
    targets: NDArray[np.float64]
    dag: NDArray[np.float64]
    total_effects: NDArray[np.float64]
    node_genes: NDArray[np.float64]

    def perturbation_table(self, threshold: float = 0.1) -> dict[str, list[tuple[int, float]]]:
        """Perturbation → targeted nodes ``(node, δ)`` with |δ| ≥ ``threshold``·max|δ|, largest first."""
        out = {}
        for p, name in enumerate(self.perturbations):
            row = self.targets[p]
            cut = threshold * np.abs(row).max()
            order = np.argsort(-np.abs(row))
            out[name] = [(int(k), float(row[k])) for k in order if abs(row[k]) >= cut and cut > 0]
        return out

    def gene_table(self, k: int = 10) -> dict[int, list[tuple[str, float]]]:
        """Node → its ``k`` genes of largest |∂g/∂z_ν|, largest first."""
        out = {}
        for node, row in enumerate(self.node_genes):
            order = np.argsort(-np.abs(row))[:k]
            out[node] = [(self.genes[g], float(row[g])) for g in order]
        return out


class PerturbedVAE:
    """Fit on controls + perturbations; predict unseen combinations without retraining.

    Args:
        n_genes: G; n_perts: P (the screen's perturbation vocabulary).
        d_bg: background latent size d_ι; d_pert: perturbation latent size d_ν (< d_ι, else
            a warning).
        alpha: weight of the control-alignment term (≥ 0; 0 turns it off). The default 3 (with
            ``align="mean"``) was chosen on validation cells of the singles of a screen whose
            perturbations also shift the background; ``"partner"`` needs a far smaller α.
        align: how perturbed and control cells' background means μ_ι are matched:
            ``"mean"`` (each condition's mean against the controls'), ``"mmd"`` (each
            condition's distribution, Gaussian-kernel MMD) or ``"partner"`` (the squared distance
            to a random control partner, ‖μ_ι(x) − μ_ι(x⁰)‖²). See :func:`alignment_term`.
        likelihood: ``"gaussian"`` (log-normalised x, per-gene variance) or ``"nb"`` (counts).
        l1: L1 penalty on the intervention targets Δ (and on the soft-intervention scales).
        intervention: ``"hard"`` (shift only) or ``"soft"`` (also rescales ω at targeted nodes).
        hidden: width of every MLP.
        omega_init: initial SCM noise scale ω (learned). A small start keeps z_ν's exogenous
            noise below the background's scale, so background variation is explained by z_ι.
        delta_init: standard deviation of the random initial intervention targets Δ (learned).
            With ω = 0.1 a start of 0.5 puts each perturbation a few noise scales from the
            controls in z_ν from the first step; at 0.1 the z_ν route to the decoder starts
            too weak and the semi-synthetic effects were still under-fit after 100 epochs.

    Example:
        >>> from perturbedvae import PerturbedVAE
        >>> from perturbedvae.data import simulate_screen
        >>> split = simulate_screen(n_cells=20, n_controls=100, n_doubles=3, n_mc=500)
        >>> model = PerturbedVAE(100, 12, hidden=32).fit(split.train, epochs=2, lr=1e-3)
        >>> model.predict(split.doubles[:2], n_cells=10).mean.shape
        (2, 100)
    """

    def __init__(
        self,
        n_genes: int,
        n_perts: int,
        d_bg: int = 8,
        d_pert: int = 6,
        alpha: float = 3.0,
        likelihood: str = "gaussian",
        *,
        align: str = "mean",
        l1: float = 1e-3,
        intervention: str = "hard",
        hidden: int = 256,
        omega_init: float = 0.1,
        delta_init: float = 0.5,
    ) -> None:
        self.n_genes = check_positive_int(n_genes, "n_genes")
        self.n_perts = check_positive_int(n_perts, "n_perts")
        self.d_bg = check_positive_int(d_bg, "d_bg")
        self.d_pert = check_positive_int(d_pert, "d_pert")
        self.alpha = check_positive(alpha, "alpha", strict=False)
        self.l1 = check_positive(l1, "l1", strict=False)
        self.hidden = check_positive_int(hidden, "hidden")
        self.omega_init = check_positive(omega_init, "omega_init")
        self.delta_init = check_positive(delta_init, "delta_init")
        if likelihood not in LIKELIHOODS:
            raise ValueError(f"likelihood must be one of {LIKELIHOODS}, got {likelihood!r}")
        if align not in ALIGNMENTS:
            raise ValueError(f"align must be one of {ALIGNMENTS}, got {align!r}")
        if intervention not in INTERVENTIONS:
            raise ValueError(f"intervention must be one of {INTERVENTIONS}, got {intervention!r}")
        if self.d_pert >= self.d_bg:
            warnings.warn(
                f"d_pert={d_pert} >= d_bg={d_bg}: the method assumes a perturbation block "
                "smaller than the background",
                UserWarning,
                stacklevel=2,
            )
        self.likelihood = likelihood
        self.align = align
        self.intervention = intervention
        self.net: _Net | None = None
        self.history: list[float] = []

    # ------------------------------------------------------------------ checks
    def _as_screen(self, screen: Any, name: str = "screen") -> Screen:
        """A :class:`Screen`, or an ``AnnData`` read by ``read_screen`` with its defaults."""
        if type(screen).__name__ == "AnnData" and type(screen).__module__.startswith("anndata"):
            try:
                screen = read_screen(screen, keep_counts=self.likelihood == "nb")
            except ValueError as exc:
                raise ValueError(
                    f"{name}: an AnnData is read with read_screen's defaults ({exc}); "
                    "call perturbedvae.data.read_screen(adata, condition_key=..., control=..., "
                    "sep=...) and pass the Screen"
                ) from exc
        return self._check_screen(screen, name)

    def _check_screen(self, screen: Any, name: str = "screen") -> Screen:
        if not isinstance(screen, Screen):
            raise TypeError(
                f"{name} must be a perturbedvae.data.Screen or an AnnData, "
                f"got {type(screen).__name__}"
            )
        if screen.n_genes != self.n_genes:
            raise ValueError(f"{name} has {screen.n_genes} genes, the model expects {self.n_genes}")
        if len(screen.perturbations) != self.n_perts:
            raise ValueError(
                f"{name} has {len(screen.perturbations)} perturbations, the model expects {self.n_perts}"
            )
        if self.net is not None:
            if tuple(screen.genes) != self.genes:
                raise ValueError(f"{name}.genes differ from the training genes (names or order)")
            if tuple(screen.perturbations) != self.perturbations:
                raise ValueError(f"{name}.perturbations differ from the training vocabulary")
        if self.likelihood == "nb" and (screen.X < 0).any():
            raise ValueError(f"{name}.X has negative values; the nb likelihood needs counts >= 0")
        return screen

    def _warn_non_counts(self, X: NDArray[np.float64], name: str) -> None:
        if self.likelihood == "nb" and not np.array_equal(X, np.round(X)):
            bad = X[X != np.round(X)].flat[0]
            warnings.warn(
                f"{name}.X holds non-integer values (e.g. {bad:.4g}) but likelihood='nb' models "
                "raw counts; read counts with read_screen(..., keep_counts=True) or use "
                "likelihood='gaussian' for log-normalised data",
                UserWarning,
                stacklevel=3,
            )

    def _check_X(self, X: ArrayLike | Screen, name: str = "X") -> NDArray[np.float64]:
        if isinstance(X, Screen) or type(X).__name__ == "AnnData":
            return self._as_screen(X, name).X
        arr = check_finite_array(X, name, ndim=2)
        if arr.shape[1] != self.n_genes:
            raise ValueError(f"{name} must have {self.n_genes} gene columns, got {arr.shape[1]}")
        if self.likelihood == "nb" and (arr < 0).any():
            raise ValueError(f"{name} has negative values; the nb likelihood needs counts >= 0")
        return arr

    def _require_fit(self) -> _Net:
        if self.net is None:
            raise RuntimeError("call fit(screen) first")
        return self.net

    # ------------------------------------------------------------------ training
    def fit(
        self,
        screen: Screen | Any,
        epochs: int = 100,
        seed: SeedLike = 0,
        *,
        lr: float = 1e-4,
        batch_size: int = 64,
        warmup: float = 0.25,
        progress: bool | None = None,
        callback: Any = None,
    ) -> PerturbedVAE:
        """Maximise the ELBO (plus alignment and L1) with Adam; returns ``self``.

        Controls for the alignment term are drawn uniformly, or within the cell's batch when
        ``screen.batch`` is set (uniformly where its batch has no control). The KL terms are
        weighted by a linear warm-up from 0 to 1 over the first ``warmup`` fraction of the steps
        (a standard guard against posterior collapse; ``warmup=0`` trains the plain ELBO).

        ``screen`` may be an ``AnnData`` (read by :func:`~perturbedvae.data.read_screen` with its
        defaults, counts kept for ``likelihood="nb"``). ``likelihood="nb"`` on non-integer X
        warns. ``progress``: a bar per epoch; by default only when stderr is a terminal.
        ``callback(epoch, model)``, if given, is called after every epoch (1-based) with the
        model in eval mode (e.g. to score a validation split along the way).
        """
        screen = self._as_screen(screen)
        self._warn_non_counts(screen.X, "screen")
        check_positive_int(epochs, "epochs")
        check_positive_int(batch_size, "batch_size")
        check_positive(lr, "lr")
        if not 0 <= warmup < 1:
            raise ValueError(f"warmup must be in [0, 1), got {warmup}")
        ctrl = np.flatnonzero(screen.is_control)
        if ctrl.size == 0:
            raise ValueError("screen has no control cells (condition 'ctrl')")
        seed = int_from_seed(seed, "seed", bits=63)
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        rng = np.random.default_rng(seed)
        self.genes = tuple(screen.genes)
        self.perturbations = tuple(screen.perturbations)
        net = _Net(
            self.n_genes,
            self.n_perts,
            self.d_bg,
            self.d_pert,
            self.hidden,
            self.intervention == "soft",
            self.likelihood == "nb",
            self.omega_init,
            self.delta_init,
        ).float()
        X = torch.as_tensor(screen.X, dtype=torch.float32)
        U = torch.as_tensor(screen.U, dtype=torch.float32)
        feats = torch.log1p(X) if net.nb else X
        net.x_mean.copy_(feats.mean(0))
        net.x_std.copy_(feats.std(0).clamp_min(1e-3))
        self.net = net
        self.seen = {p for p, used in zip(self.perturbations, screen.U.any(0)) if used}
        keep = rng.choice(ctrl, size=min(ctrl.size, 5000), replace=False)
        self._controls = screen.X[keep]
        partner = _control_partners(screen, ctrl)
        names, cond_id = np.unique(screen.conditions, return_inverse=True)
        groups = torch.as_tensor(np.where(screen.is_control, -1, cond_id))
        with torch.no_grad():  # running background means for align="mean", from the start
            mu_all = net.encode_bg(X)[0]
            self._ema = torch.stack(
                [mu_all[torch.as_tensor(cond_id == k)].mean(0) for k in range(len(names))]
            )
            self._ema0 = mu_all[torch.as_tensor(screen.is_control)].mean(0)
        opt = torch.optim.Adam(net.parameters(), lr=lr)
        n = screen.n_cells
        self.history = []
        steps_total = epochs * math.ceil(n / batch_size)
        warm_steps = warmup * steps_total
        step = 0
        for _ in progress_bar(
            range(epochs),
            enabled=progress_enabled(progress),
            total=epochs,
            desc="PerturbedVAE",
        ):
            order = torch.randperm(n, generator=gen)
            total = 0.0
            for start in range(0, n, batch_size):
                idx = order[start : start + batch_size]
                x0_idx = torch.as_tensor(partner(idx.numpy(), rng))
                beta = min(1.0, (step + 1) / warm_steps) if warm_steps > 0 else 1.0
                loss = self._loss(net, X[idx], U[idx], X[x0_idx], gen, beta, groups[idx])
                step += 1
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach()) * idx.numel()
            self.history.append(total / n)
            if callback is not None:
                net.eval()
                callback(len(self.history), self)
                net.train()
        net.eval()
        return self

    def _loss(
        self,
        net: _Net,
        x: torch.Tensor,
        u: torch.Tensor,
        x0: torch.Tensor,
        gen: torch.Generator,
        beta: float = 1.0,
        groups: torch.Tensor | None = None,
    ) -> torch.Tensor:
        mu_b, lv_b = net.encode_bg(x)
        mu_n, lv_n = net.encode_pert(x, u)
        z_b = mu_b + torch.exp(0.5 * lv_b) * torch.randn(mu_b.shape, generator=gen, dtype=x.dtype)
        z_n = mu_n + torch.exp(0.5 * lv_n) * torch.randn(mu_n.shape, generator=gen, dtype=x.dtype)
        rec = -net.log_lik(x, torch.cat([z_b, z_n], -1))
        kl_b = 0.5 * (mu_b**2 + torch.exp(lv_b) - 1 - lv_b).sum(-1)
        kl_n = scm_kl(mu_n, lv_n, mu_b, lv_b, net.A, net.C, u @ net.delta, net.log_omega2_of(u))
        loss = (rec + beta * (kl_b + kl_n)).mean()
        if self.alpha > 0:
            perturbed = (u.sum(-1) > 0).to(x.dtype)
            mu0, _ = net.encode_bg(x0)
            if groups is None:
                groups = torch.where(perturbed > 0, 0, -1)
            if self.align == "partner":
                align = (((mu_b - mu0) ** 2).sum(-1) * perturbed).mean()
            elif self.align == "mean":
                align = smoothed_mean_gap(mu_b, groups, mu0, self._ema, self._ema0)
            else:
                align = alignment_term(mu_b, groups, mu0, "mmd")
            loss = loss + self.alpha * align
        penalty = net.delta.abs().sum()
        if net.gamma is not None:
            penalty = penalty + net.gamma.abs().sum()
        return loss + self.l1 * penalty

    # ------------------------------------------------------------------ inference
    @property
    def A(self) -> NDArray[np.float64]:
        """The learned DAG weights (strictly lower-triangular: exactly 0 on and above the diagonal)."""
        return self._require_fit().A.detach().numpy().copy()

    def background(self, X: ArrayLike | Screen) -> NDArray[np.float64]:
        """Posterior means μ_ι(x) of the background latent (depends on x only, never on u)."""
        net = self._require_fit()
        x = torch.as_tensor(self._check_X(X), dtype=torch.float32)
        with torch.no_grad():
            return net.encode_bg(x)[0].numpy().astype(np.float64)

    def perturbation_latent(self, screen: Screen, *, use_u: bool = True) -> NDArray[np.float64]:
        """Posterior means μ_ν(x, u) of the perturbation latent for the cells of ``screen``.

        ``use_u=False`` gives μ_ν(x, u = 0): the encoder asked from the expression alone, so a
        probe of these latents cannot read the perturbation label from the input u.
        """
        net = self._require_fit()
        screen = self._as_screen(screen)
        x = torch.as_tensor(screen.X, dtype=torch.float32)
        u = torch.as_tensor(screen.U, dtype=torch.float32)
        if not use_u:
            u = torch.zeros_like(u)
        with torch.no_grad():
            return net.encode_pert(x, u)[0].numpy().astype(np.float64)

    def _parse_request(self, conditions: str | list[str]) -> list[str]:
        if isinstance(conditions, str):
            conditions = [conditions]
        if len(conditions) == 0:
            raise ValueError("conditions must name at least one condition")
        parsed = [_parse_label(c, CONTROL, "+") for c in conditions]
        unseen = sorted({p for c in parsed if c != CONTROL for p in c.split("+")} - self.seen)
        if unseen:
            raise ValueError(f"perturbations not seen in training: {unseen}")
        return parsed

    def predict(
        self, conditions: str | list[str], n_cells: int = 500, seed: SeedLike = 0
    ) -> Prediction:
        """Predict cells of any combination of seen perturbations (no retraining).

        Control cells from training are encoded to μ_ι; z_ν ~ p(z_ν | μ_ι, u′) from the SCM prior;
        the decoder gives each cell's mean, observation noise gives the cells. Every condition of
        one call uses the same control cells and the same standard-normal SCM noise (common random
        numbers), so differences between the returned means carry no sampling noise of the
        background.
        """
        net = self._require_fit()
        conds = self._parse_request(conditions)
        check_positive_int(n_cells, "n_cells")
        seed = int_from_seed(seed, "seed", bits=63)
        gen = torch.Generator().manual_seed(seed)
        rng = np.random.default_rng(seed)
        U = torch.as_tensor(encode_conditions(conds, self.perturbations), dtype=torch.float32)
        cells, means = [], []
        with torch.no_grad():
            x0 = torch.as_tensor(
                self._controls[rng.integers(0, len(self._controls), n_cells)], dtype=torch.float32
            )
            z_b = net.encode_bg(x0)[0]
            noise = torch.randn(n_cells, self.d_pert, generator=gen)
            for k in range(len(conds)):
                u = U[k].expand(n_cells, -1)
                z_n = net.prior_sample(z_b, u, gen, noise)
                m = net.decode_mean(torch.cat([z_b, z_n], -1), x0.sum(-1))
                if net.nb:
                    theta = torch.exp(net.log_theta)
                    lam = torch.distributions.Gamma(theta, theta / (m + 1e-8)).sample()
                    c = torch.poisson(lam, generator=gen)
                else:
                    sd = torch.exp(0.5 * net.log_var_x) * net.x_std
                    c = m + sd * torch.randn(m.shape, generator=gen, dtype=m.dtype)
                cells.append(c.numpy())
                means.append(m.mean(0).numpy())
        return Prediction(
            conds, np.stack(cells).astype(np.float64), np.stack(means).astype(np.float64)
        )

    def programs(self) -> Programs:
        """Perturbation → node (Δ, (I − A)⁻¹Δ) and node → gene (mean decoder Jacobian) tables."""
        net = self._require_fit()
        with torch.no_grad():
            x0 = torch.as_tensor(self._controls[:500], dtype=torch.float32)
            z_b = net.encode_bg(x0)[0]
            z_n = torch.zeros(z_b.shape[0], self.d_pert, dtype=torch.float32) + z_b @ net.C.T
            B = torch.eye(self.d_pert, dtype=torch.float32) - net.A
            z_n = torch.linalg.solve_triangular(B, z_n.T, upper=False, unitriangular=True).T
            lib = x0.sum(-1)
        z_n = z_n.clone().requires_grad_(True)
        jac = torch.zeros(self.d_pert, self.n_genes, dtype=torch.float32)
        out = net.decode_mean(torch.cat([z_b, z_n], -1), lib)
        for g in range(self.n_genes):
            (grad,) = torch.autograd.grad(out[:, g].sum(), z_n, retain_graph=True)
            jac[:, g] = grad.mean(0)
        delta = net.delta.detach().numpy().copy()
        A = net.A.detach().numpy()
        total = np.linalg.solve(np.eye(self.d_pert) - A, delta.T).T
        return Programs(self.perturbations, self.genes, delta, A.copy(), total, jac.numpy())


def _control_partners(screen: Screen, ctrl: NDArray[np.intp]) -> Any:
    """A function drawing, per cell index, a control index (within its batch where possible)."""
    if screen.batch is None:
        return lambda idx, rng: ctrl[rng.integers(0, ctrl.size, len(idx))]
    groups = {b: ctrl[screen.batch[ctrl] == b] for b in np.unique(screen.batch)}
    batch = screen.batch

    def draw(idx: NDArray[np.intp], rng: np.random.Generator) -> NDArray[np.intp]:
        out = np.empty(len(idx), dtype=np.intp)
        for i, c in enumerate(idx):
            pool = groups.get(batch[c])
            pool = ctrl if pool is None or pool.size == 0 else pool
            out[i] = pool[rng.integers(0, pool.size)]
        return out

    return draw
