"""DLPT: debiased values and learned continuous policies from a discrete-arm randomised trial.

Reconstruction of Zhang, Zeng, Zhan, Zhang, "Personalized Policy Learning through Discrete
Experimentation" (ICML 2026, arXiv 2602.05099; no public code), consistent with its abstract:
a structured network θ_η(x) ∈ R^{q+1} with response μ̂(x, t) = θ̂(x)ᵀφ(t) (Farrell, Liang, Misra
2021), cross-fitted over L folds, plus a Neyman-orthogonal score with the *known* design matrix
Λ(x) = Σ_k p_k(x) φ(t_k)φ(t_k)ᵀ:

    ψ_i(π) = θ̂(x_i)ᵀφ(π(x_i)) + φ(π(x_i))ᵀ Λ(x_i)⁻¹ φ(t_i) (y_i − θ̂(x_i)ᵀφ(t_i))
           = φ(π(x_i))ᵀ β_i,     β_i = θ̂(x_i) + Λ(x_i)⁻¹φ(t_i)(y_i − θ̂(x_i)ᵀφ(t_i)).

Because E[φ(T)φ(T)ᵀ | x] = Λ(x), E[β_i | x_i] = θ(x_i) whenever μ(x, ·) ∈ span φ, for *any*
θ̂ not fitted on unit i: E[ψ_i | x_i] = μ(x_i, π(x_i)). The network's error costs variance, never
bias. V̂(π) = mean ψ_i, SE = sd(ψ)/√n, CI = V̂ ± z_{1−α/2} SE; contrasts use paired differences.
A policy π_ω(x) = t_min + (t_max − t_min)·sigmoid(g_ω(x)) is learned by maximising mean ψ_i(π_ω),
started from the plug-in argmax_t θ̂(x)ᵀφ(t); ``split="honest"`` learns on one half of the units
and reports V̂(π̂) ± CI on the other.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from icml26_shared.checks import (
    SeedLike,
    check_alpha,
    check_choice,
    check_finite_array,
    check_positive,
    check_positive_int,
    check_same_length,
    int_from_seed,
)
from icml26_shared.experiment import progress as _progress
from icml26_shared.experiment import say

from ._basis import check_arms, gram, make_basis, resolve_probs, solve_gram
from ._data import evaluate_policy
from ._mlp import MLP, TrainConfig, train

Array = NDArray[np.float64]
PolicyLike = Callable[[Array], ArrayLike] | float | ArrayLike


def check_hidden(hidden: Any, name: str) -> tuple[int, ...]:
    """Layer widths as a tuple of positive ints (``()`` for none); an int alone is refused."""
    if isinstance(hidden, str | bytes) or not isinstance(hidden, Sequence | np.ndarray):
        raise ValueError(
            f"{name} must be a sequence of layer widths such as (32, 32) or (32,), got {hidden!r}"
        )
    return tuple(check_positive_int(h, name) for h in hidden)


@dataclass(frozen=True)
class ValueEstimate:
    """A debiased policy value (or contrast) with its standard error.

    Attributes:
        v: V̂ = mean ψ_i.
        se: sd(ψ) / √n.
        ci: (V̂ − z SE, V̂ + z SE) at level 1 − alpha; after ``degree="cv"`` chose a degree
            below K − 1, the union of that interval with the saturated degree's.
        psi: the per-unit scores ψ_i (n,).
        alpha: miscoverage of ``ci``.
    """

    v: float
    se: float
    ci: tuple[float, float]
    psi: Array = field(repr=False)
    alpha: float = 0.05

    @classmethod
    def from_scores(cls, psi: Array, alpha: float = 0.05) -> ValueEstimate:
        v = float(np.mean(psi))
        se = float(np.std(psi, ddof=1) / np.sqrt(psi.size))
        z = float(
            special.ndtri(1 - alpha / 2)
        )  # the normal quantile; scipy.stats is slow to import
        return cls(v, se, (v - z * se, v + z * se), psi, alpha)


def orthogonal_scores(theta: Array, w: Array, resid: Array, phi_pi: Array) -> tuple[Array, Array]:
    """(ψ, β) with β_i = θ̂_i + w_i r_i, ψ_i = φ(π_i)ᵀβ_i, where w_i = Λ(x_i)⁻¹φ(t_i) and
    r_i = y_i − θ̂_iᵀφ(t_i)."""
    beta = theta + w * resid[:, None]
    return np.einsum("nk,nk->n", phi_pi, beta), beta


@dataclass
class Policy:
    """A learned continuous policy π(x) = lo + (hi − lo)·sigmoid(g(x)), callable X → t (n,).

    Attributes:
        net: the network g.
        lo, hi: the dose range (the tested range, widened by ``extrapolate``).
        value: V̂(π̂) ± CI on the held-out half (``split="honest"``) or in-sample (``"none"``,
            optimistic).
        split: how it was learned.
        plug_in_value: V̂ of the plug-in start π⁰ on the same units as ``value``.
    """

    net: MLP
    lo: float
    hi: float
    value: ValueEstimate | None = None
    split: str = "honest"
    plug_in_value: ValueEstimate | None = None

    def __call__(self, X: ArrayLike) -> Array:
        Xa = check_finite_array(X, "X", ndim=2)
        if Xa.shape[1] != self.net.x_mean.size:
            raise ValueError(f"X must have {self.net.x_mean.size} columns, got {Xa.shape[1]}")
        return self.lo + (self.hi - self.lo) * special.expit(self.net(Xa)[:, 0])


class DLPT:
    """Deep learning for policy targeting from a K-arm randomised trial with known propensities.

    Args:
        degree: polynomial degree q of the dose basis (K ≥ q + 1), or ``"cv"`` to choose
            q ∈ {1, …, K − 1}: the degree of least out-of-fold squared error (candidates compared
            on the representation of the saturated network of each fold; see ``_cv_degrees``),
            raised until the debiased coefficients above q of the saturated fit are not
            significantly non-zero (``select_degree``; the saturated K − 1 is never refused).
            The score is unbiased only when μ(x, ·) has degree ≤ q, and a test cannot rule
            out a small higher-order term, so after choosing q < K − 1 ``value`` and
            ``contrast`` report the union of the degree-q and degree-(K − 1) intervals: the
            coverage of the saturated interval, which is valid whenever μ(x, ·) has degree
            ≤ K − 1, whatever was chosen.
        hidden: hidden layer widths of θ_η(x) (``()`` gives a linear θ).
        folds: cross-fitting folds L (``1`` is the no-cross-fitting ablation: θ̂ then sees each
            unit's own outcome and the score is no longer exactly unbiased).
        seed: random seed (folds, initialisation, mini-batches): a non-negative int, a numpy
            integer, a ``numpy.random.Generator`` or ``None`` (one draw of it becomes the int
            seed ``self.seed``).
        basis: ``"legendre"`` (default) or ``"monomial"``; values do not depend on it.
        weight_decay, lr, epochs, batch_size, patience: training of θ_η (Adam, early stopping on
            an inner 15% validation split of the training folds).

    Examples:
        >>> from dlpt.data import simulate_rct
        >>> data = simulate_rct(3000, seed=1)
        >>> model = DLPT(degree=2, hidden=(16,), folds=2, seed=0)
        >>> model = model.fit(data.X, data.t, data.y, data.arms, data.probs)
        >>> est = model.value(1.1)
        >>> abs(est.v - data.true_value(1.1, n_mc=100_000)) < 4 * est.se
        True
    """

    def __init__(
        self,
        degree: int | str = 2,
        hidden: Sequence[int] = (64, 64),
        folds: int = 5,
        seed: SeedLike = 0,
        *,
        basis: str = "legendre",
        weight_decay: float = 0.05,
        lr: float = 2e-3,
        epochs: int = 200,
        batch_size: int = 1024,
        patience: int = 10,
    ) -> None:
        if degree != "cv":
            check_positive_int(degree, "degree")
        self.degree = degree
        self.hidden = check_hidden(hidden, "hidden")
        self.folds = check_positive_int(folds, "folds")
        # an int (folds, initialisation, mini-batches use [seed, fold]); a Generator or None
        # gives one draw of it
        self.seed = int_from_seed(seed, bits=63)
        self.basis = check_choice(basis, "basis", ("legendre", "monomial"))
        for name, v in (("lr", lr), ("weight_decay", weight_decay)):
            if isinstance(v, str | bytes | bool):
                raise TypeError(f"{name} must be a real number, got {v!r}")
        self.config = TrainConfig(
            lr=check_positive(lr, "lr"),
            weight_decay=check_positive(weight_decay, "weight_decay", strict=False),
            epochs=check_positive_int(epochs, "epochs"),
            batch_size=check_positive_int(batch_size, "batch_size"),
            patience=check_positive_int(patience, "patience"),
        )

    # ------------------------------------------------------------------ fitting
    def fit(
        self,
        X: ArrayLike,
        t: ArrayLike,
        y: ArrayLike,
        arms: ArrayLike,
        probs: Any = None,
        *,
        progress: bool | None = None,
    ) -> DLPT:
        """Cross-fit θ̂ and compute the orthogonal-score ingredients.

        Args:
            X: covariates (n, d).
            t: assigned doses (n,), each one of ``arms`` (tolerance 1e-9).
            y: outcomes (n,).
            arms: the K tested dose levels (distinct).
            probs: known assignment probabilities: (K,), (n, K) or a callable X → (n, K);
                entries > 0, rows summing to 1 (1e-8). Never estimated.
            progress: show the cross-fitting folds (``None``: a bar on a terminal, a start and
                an end line on stderr when piped; ``False``: silent).
        """
        self._progress = progress
        X = check_finite_array(X, "X", ndim=2)
        t = check_finite_array(t, "t", ndim=1)
        y = check_finite_array(y, "y", ndim=1)
        check_same_length(X=X, t=t, y=y)
        a = check_arms(arms, None if self.degree == "cv" else int(self.degree))
        p = resolve_probs(probs, X, a.size)
        k = np.argmin(np.abs(t[:, None] - a[None, :]), axis=1)
        off = np.abs(t - a[k]) > 1e-9 * max(1.0, float(np.max(np.abs(a))))
        if off.any():
            i = int(np.argmax(off))
            raise ValueError(f"t must take values among arms {a.tolist()}, got {t[i]} at index {i}")
        self.X_, self.t_, self.y_, self.arms_, self.probs_ = X, a[k], y, a, p
        self.arm_index_ = k
        self.fold_ = self._assign_folds(k, a.size)
        self.saturated_: _Scores | None = None
        if self.degree == "cv":
            # one cross-fit of the saturated degree K − 1 gives every fold's representation;
            # the candidate degrees are compared on it (paired), then the chosen one is fitted
            K = a.size
            sat_models, sat_theta, _ = self._cross_fit(K - 1)
            self.cv_mse_ = self._cv_degrees(sat_models, K)
            sat = _Scores.build(make_basis(K - 1, a, self.basis), sat_theta, self.t_, y, a, p)
            self.higher_order_pvalue_ = _higher_order_pvalues(sat.beta)
            q = select_degree(self.cv_mse_, self.higher_order_pvalue_)
            self.degree_ = q
            if q == K - 1:
                self.models_, self.theta_ = sat_models, sat_theta
            else:
                self.models_, self.theta_, _ = self._cross_fit(q)
                self.saturated_ = sat
        else:
            self.degree_ = int(self.degree)
            self.models_, self.theta_, mse = self._cross_fit(self.degree_)
            self.cv_mse_ = {self.degree_: mse}
        if self.degree_ == a.size - 1:
            warnings.warn(
                f"degree q = K - 1 = {self.degree_}: the basis interpolates the {a.size} arm "
                "means exactly, leaving no room to detect misspecification between arms",
                UserWarning,
                stacklevel=2,
            )
        self.basis_ = make_basis(self.degree_, a, self.basis)
        phi_t = self.basis_(self.t_)
        self.lambda_ = gram(self.basis_, a, p)
        self.w_ = solve_gram(self.lambda_, phi_t)
        self.resid_ = y - np.einsum("nk,nk->n", self.theta_, phi_t)
        return self

    def _assign_folds(self, k: NDArray[np.intp], K: int) -> NDArray[np.intp]:
        """Folds stratified by arm; every training fold must contain every arm."""
        rng = np.random.default_rng(self.seed)
        fold = np.zeros(k.size, dtype=np.intp)
        if self.folds == 1:
            return fold
        for j in range(K):
            idx = np.flatnonzero(k == j)
            fold[rng.permutation(idx)] = (np.arange(idx.size) + rng.integers(self.folds)) % (
                self.folds
            )
        for f in range(self.folds):
            present = np.unique(k[fold != f])
            if present.size < K:
                missing = sorted(set(range(K)) - set(present.tolist()))
                raise ValueError(
                    f"arm(s) {[float(self.arms_[m]) for m in missing]} missing from the "
                    f"training folds of fold {f}: every arm needs units in at least two folds"
                )
        return fold

    def _cross_fit(self, q: int) -> tuple[list[MLP], Array, float]:
        """Fold models, out-of-fold θ̂ (n, q+1) and the out-of-fold mean squared error."""
        basis = make_basis(q, self.arms_, self.basis)
        phi = basis(self.t_)
        theta = np.zeros((self.t_.size, q + 1))
        models = []
        show = getattr(self, "_progress", False)
        desc = f"DLPT.fit: training θ̂ (degree {q}) on {self.folds} fold(s)"
        for f in _progress(range(self.folds), enabled=show, desc=desc):
            test = np.flatnonzero(self.fold_ == f)
            tr = np.flatnonzero(self.fold_ != f) if self.folds > 1 else test
            net = self._fit_response(phi, tr, q, f)
            models.append(net)
            theta[test] = self._theta_of(net, self.X_[test])
        mse = float(np.mean((self.y_ - np.einsum("nk,nk->n", theta, phi)) ** 2))
        return models, theta, mse

    def _cv_degrees(self, sat_models: list[MLP], K: int) -> dict[int, float]:
        """Out-of-fold mean squared error of each degree q ∈ {1, …, K − 1}.

        For fold f, the saturated network trained without f supplies features h(x) (its last
        hidden layer and a constant); the degree-q model θ(x) = W h(x) has its head W refitted
        by (lightly ridged) least squares on y ~ h(x) ⊗ φ_q(t) over the training folds and is
        scored on fold f. Sharing h across q makes the comparison paired: independently trained
        networks differ by more, in squared error, than the misspecification CV must detect.
        """
        n = self.t_.size
        pred = {q: np.zeros(n) for q in range(1, K)}
        for f, net in enumerate(sat_models):
            test = self.fold_ == f
            tr = ~test if self.folds > 1 else test
            acts = net.forward(self.X_)[1]
            H = np.column_stack([acts[-2], np.ones(n)])
            for q in pred:
                phi = make_basis(q, self.arms_, self.basis)(self.t_)
                Z = (H[:, :, None] * phi[:, None, :]).reshape(n, -1)
                G = Z[tr].T @ Z[tr]
                G[np.diag_indices_from(G)] += 1e-6 * np.trace(G) / G.shape[0] + 1e-12
                coef = np.linalg.solve(G, Z[tr].T @ self.y_[tr])
                pred[q][test] = Z[test] @ coef
        return {q: float(np.mean((self.y_ - p) ** 2)) for q, p in pred.items()}

    def _fit_response(self, phi: Array, rows: NDArray[np.intp], q: int, f: int) -> MLP:
        # seeds do not depend on q: the candidate degrees of a CV comparison share their
        # initial hidden weights and mini-batch order (common random numbers)
        rng = np.random.default_rng([self.seed, f])
        y_mean, y_sd = float(self.y_[rows].mean()), float(self.y_[rows].std()) or 1.0
        ys = (self.y_ - y_mean) / y_sd

        def loss(out: Array, idx: NDArray[np.intp]) -> tuple[float, Array]:
            r = np.einsum("nk,nk->n", out, phi[idx]) - ys[idx]
            return float(np.mean(r**2)), (2.0 / idx.size) * r[:, None] * phi[idx]

        net = MLP.init(self.X_.shape[1], self.hidden, q + 1, rng)
        train(net, self.X_, loss, self.config, np.random.default_rng([self.seed, f, 1]), rows)
        net.y_mean, net.y_sd = y_mean, y_sd  # type: ignore[attr-defined]
        return net

    @staticmethod
    def _theta_of(net: MLP, X: Array) -> Array:
        th = net(X) * net.y_sd  # type: ignore[attr-defined]
        th[:, 0] += net.y_mean  # type: ignore[attr-defined]  (φ₀ ≡ 1 in both bases)
        return th

    def _with_theta(self, theta: Array) -> DLPT:
        """A shallow copy whose nuisance θ̂(x_i) is replaced by ``theta`` (n, q+1) (residuals
        recomputed): the oracle-θ ablation and the orthogonality check use it."""
        self._check_fitted()
        other = DLPT.__new__(DLPT)
        other.__dict__.update(self.__dict__)
        other.theta_ = np.asarray(theta, dtype=np.float64)
        other.resid_ = self.y_ - np.einsum("nk,nk->n", other.theta_, self.basis_(self.t_))
        return other

    def _check_fitted(self) -> None:
        if not hasattr(self, "theta_"):
            raise RuntimeError("DLPT is not fitted: call fit(X, t, y, arms, probs) first")

    # ------------------------------------------------------------------ inference
    def theta(self, X: ArrayLike) -> Array:
        """θ̂(x) (n, q+1) for new units: the mean of the L fold networks."""
        self._check_fitted()
        Xa = check_finite_array(X, "X", ndim=2)
        if Xa.shape[1] != self.X_.shape[1]:
            raise ValueError(f"X must have {self.X_.shape[1]} columns, got {Xa.shape[1]}")
        return np.mean([self._theta_of(m, Xa) for m in self.models_], axis=0)

    def response(self, X: ArrayLike, t_grid: ArrayLike) -> Array:
        """μ̂(x_i, t_g) = θ̂(x_i)ᵀφ(t_g): shape (n, G)."""
        grid = check_finite_array(t_grid, "t_grid", ndim=1)
        return self.theta(X) @ self.basis_(grid).T

    def _doses(self, policy: PolicyLike, name: str = "policy") -> Array:
        n = self.X_.shape[0]
        if isinstance(policy, str | bytes) or not (callable(policy) or np.ndim(policy) in (0, 1)):
            raise ValueError(
                f"{name} must be a callable X -> doses (n,), a constant dose or an array of the "
                f"{n} training units' doses, got {type(policy).__name__} of shape "
                f"{np.shape(policy)}"
            )
        if callable(policy) or np.ndim(policy) == 0:
            try:
                pi = evaluate_policy(policy, self.X_)
            except ValueError as exc:
                raise ValueError(str(exc).replace("policy", name, 1)) from None
        else:
            pi = np.asarray(policy)
            if pi.shape != (n,) or pi.dtype.kind not in "iuf":
                raise ValueError(
                    f"{name} as an array must hold the doses of the {n} training units "
                    f"(numbers, shape ({n},)), got shape {pi.shape} of dtype {pi.dtype}"
                )
            pi = check_finite_array(pi, name)
        lo, hi = self.basis_.lo, self.basis_.hi
        tol = 1e-9 * max(1.0, hi - lo)
        if (pi < lo - tol).any() or (pi > hi + tol).any():
            warnings.warn(
                f"{name} leaves the tested range [{lo}, {hi}] (doses in [{pi.min():.4g}, "
                f"{pi.max():.4g}]): the value there rests on polynomial extrapolation",
                UserWarning,
                stacklevel=3,
            )
        return pi

    def scores(self, policy: PolicyLike) -> Array:
        """Per-unit orthogonal scores ψ_i(π) of the chosen degree on the training units (n,)."""
        self._check_fitted()
        return self._scores_at(self._doses(policy))

    def value(self, policy: PolicyLike, alpha: float = 0.05) -> ValueEstimate:
        """Debiased V̂(π) = mean ψ_i(π) with SE and a 1 − alpha normal CI.

        ``policy`` is a callable X → doses (n,), a constant dose (untested levels included), or
        an array of the n training units' doses. When ``degree="cv"`` chose q < K − 1, ``v`` and
        ``se`` are those of degree q and ``ci`` is the union of the degree-q interval with the
        saturated degree K − 1's (the selection cannot cost coverage; see the class docstring).
        """
        alpha = check_alpha(alpha)
        self._check_fitted()
        pi = self._doses(policy)
        est = ValueEstimate.from_scores(self._scores_at(pi), alpha)
        return self._post_selection(est, self._saturated_scores_at(pi), alpha)

    def contrast(self, p1: PolicyLike, p2: PolicyLike, alpha: float = 0.05) -> ValueEstimate:
        """V̂(π₁) − V̂(π₂) with the paired-difference SE and CI (a union as in ``value`` after
        ``degree="cv"`` chose q < K − 1)."""
        alpha = check_alpha(alpha)
        self._check_fitted()
        d1, d2 = self._doses(p1), self._doses(p2)
        est = ValueEstimate.from_scores(self._scores_at(d1) - self._scores_at(d2), alpha)
        sat = None
        if self.saturated_ is not None:
            sat = self._saturated_scores_at(d1) - self._saturated_scores_at(d2)
        return self._post_selection(est, sat, alpha)

    def _scores_at(self, pi: Array) -> Array:
        self._check_fitted()
        return orthogonal_scores(self.theta_, self.w_, self.resid_, self.basis_(pi))[0]

    def _saturated_scores_at(self, pi: Array) -> Array | None:
        sat = getattr(self, "saturated_", None)
        return None if sat is None else sat.scores(pi)

    @staticmethod
    def _post_selection(est: ValueEstimate, sat: Array | None, alpha: float) -> ValueEstimate:
        if sat is None:
            return est
        lo, hi = ValueEstimate.from_scores(sat, alpha).ci
        return replace(est, ci=(min(est.ci[0], lo), max(est.ci[1], hi)))

    @property
    def beta_(self) -> Array:
        """Debiased per-unit coefficients β_i (n, q+1): ψ_i(π) = φ(π(x_i))ᵀβ_i."""
        self._check_fitted()
        return self.theta_ + self.w_ * self.resid_[:, None]

    # ------------------------------------------------------------------ policy learning
    def learn_policy(
        self,
        split: str = "honest",
        *,
        hidden: Sequence[int] = (32, 32),
        extrapolate: float | None = None,
        alpha: float = 0.05,
        seed: SeedLike = None,
        progress: bool | None = None,
    ) -> Policy:
        """Learn π_ω by maximising mean ψ_i(π_ω), started from the plug-in argmax.

        Args:
            split: ``"honest"``: refit θ̂ on each half of the units, learn on one, report
                V̂(π̂) ± CI on the other (nothing of the evaluation half enters π̂);
                ``"none"``: learn and evaluate on all units (the value is optimistic).
            hidden: widths of the policy network g_ω.
            extrapolate: allow doses up to δ outside [t_min, t_max] (warns).
            alpha: miscoverage of the reported CI.
            seed: seed of the split and the policy net (default: the model's seed).
            progress: one line per stage on stderr (refits, policy optimisation); ``None``
                shows them, ``False`` is silent.
        """
        self._check_fitted()
        check_choice(split, "split", ("honest", "none"))
        alpha = check_alpha(alpha)
        seed = self.seed if seed is None else int_from_seed(seed, bits=63)
        lo, hi = self.basis_.lo, self.basis_.hi
        if extrapolate is not None:
            delta = check_positive(extrapolate, "extrapolate", strict=False)
            warnings.warn(
                f"extrapolate={delta}: the policy may leave the tested range [{lo}, {hi}]",
                UserWarning,
                stacklevel=2,
            )
            lo, hi = lo - delta, hi + delta
        hidden = check_hidden(hidden, "hidden")
        if split == "none":
            learner, evaluator = self, self
        else:
            say("DLPT.learn_policy: refitting θ̂ on each half of the units...", enabled=progress)
            perm = np.random.default_rng([seed, 7]).permutation(self.t_.size)
            half = perm.size // 2
            learner = self._refit(np.sort(perm[:half]))
            # the evaluation half re-selects the degree itself when degree="cv", so that its
            # interval keeps the post-selection union
            evaluator = self._refit(np.sort(perm[half:]), self.degree == "cv")
        say("DLPT.learn_policy: optimising the policy network...", enabled=progress)
        net = _optimise_policy(learner, lo, hi, hidden, self.config, seed)
        policy = Policy(net, lo, hi, split=split)
        pi0 = plug_in_policy(learner)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            policy.value = evaluator.value(policy, alpha)
            policy.plug_in_value = evaluator.value(pi0, alpha)
        return policy

    def _refit(self, rows: NDArray[np.intp], cv: bool = False) -> DLPT:
        """The same estimator cross-fitted on ``rows`` only (degree fixed to degree_, or chosen
        again by ``degree="cv"`` when ``cv``)."""
        other = DLPT.__new__(DLPT)
        other.__dict__.update({k: v for k, v in self.__dict__.items() if not k.endswith("_")})
        other.degree = "cv" if cv else self.degree_
        other.config = replace(self.config)
        p = self.probs_ if self.probs_.ndim == 1 else self.probs_[rows]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return other.fit(
                self.X_[rows], self.t_[rows], self.y_[rows], self.arms_, p, progress=False
            )


def plug_in_policy(model: DLPT) -> Callable[[Array], Array]:
    """The plug-in policy π⁰(x) = argmax_{t ∈ [t_min, t_max]} θ̂(x)ᵀφ(t) (fold-averaged θ̂)."""
    model._check_fitted()

    def pi0(X: Array) -> Array:
        return model.basis_.argmax(model.theta(X))

    return pi0


def _optimise_policy(
    model: DLPT,
    lo: float,
    hi: float,
    hidden: tuple[int, ...],
    base: TrainConfig,
    seed: int,
) -> MLP:
    """Policy net g: first regress logit of the (cross-fitted) plug-in dose, then maximise
    mean ψ_i(π_ω) with early stopping on a validation split of the learning units."""
    rng = np.random.default_rng([seed, 11])
    X, beta, basis = model.X_, model.beta_, model.basis_
    start = basis.argmax(model.theta_)
    frac = np.clip((start - lo) / (hi - lo), 0.02, 0.98)
    target = special.logit(frac)

    def warm(out: Array, idx: NDArray[np.intp]) -> tuple[float, Array]:
        r = out[:, 0] - target[idx]
        return float(np.mean(r**2)), (2.0 / idx.size) * r[:, None]

    net = MLP.init(X.shape[1], hidden, 1, rng)
    train(net, X, warm, replace(base, epochs=60, patience=5), rng)
    width = hi - lo

    def neg_value(out: Array, idx: NDArray[np.intp]) -> tuple[float, Array]:
        s = special.expit(out[:, 0])
        pi = lo + width * s
        val = np.einsum("nk,nk->n", basis(pi), beta[idx])
        dval = np.einsum("nk,nk->n", basis.derivative(pi), beta[idx]) * width * s * (1 - s)
        return -float(np.mean(val)), (-dval / idx.size)[:, None]

    cfg = replace(base, lr=base.lr / 4, epochs=100, patience=8, val_fraction=0.3)
    train(net, X, neg_value, cfg, rng)
    return net


@dataclass(frozen=True)
class _Scores:
    """Orthogonal-score ingredients of one degree: the basis, θ̂, w_i = Λ(x_i)⁻¹φ(t_i), r_i."""

    basis: Any
    theta: Array
    w: Array
    resid: Array

    @classmethod
    def build(cls, basis: Any, theta: Array, t: Array, y: Array, arms: Array, p: Array) -> _Scores:
        phi_t = basis(t)
        w = solve_gram(gram(basis, arms, p), phi_t)
        return cls(basis, theta, w, y - np.einsum("nk,nk->n", theta, phi_t))

    @property
    def beta(self) -> Array:
        return self.theta + self.w * self.resid[:, None]

    def scores(self, pi: Array) -> Array:
        return orthogonal_scores(self.theta, self.w, self.resid, self.basis(pi))[0]


def _higher_order_pvalues(beta: Array) -> dict[int, float]:
    """For each q < K − 1, the p-value of the Wald test that the debiased coefficients of
    degrees q + 1, …, K − 1 of the saturated fit have mean zero (χ² with K − 1 − q degrees of
    freedom; the nested bases make them zero for every x iff μ(x, ·) has degree ≤ q)."""
    n, K = beta.shape
    out = {}
    for q in range(1, K - 1):
        B = beta[:, q + 1 :]
        mean = B.mean(axis=0)
        cov = np.atleast_2d(np.cov(B, rowvar=False)) / n
        stat = float(mean @ np.linalg.lstsq(cov, mean, rcond=None)[0])
        out[q] = float(special.chdtrc(B.shape[1], stat))
    out[K - 1] = 1.0
    return out


def select_degree(
    cv_mse: dict[int, float], higher_order_pvalue: dict[int, float], level: float = 0.05
) -> int:
    """The least-CV-error degree, raised to the first q whose higher-order test is not
    rejected at ``level`` (the saturated degree always passes): CV alone picks a lower degree
    whenever the bias it causes is smaller than the variance it saves in squared error, which
    at large n is still many standard errors of V̂."""
    q = min(cv_mse, key=lambda d: cv_mse[d])
    while higher_order_pvalue.get(q, 1.0) <= level:
        q += 1
    return q
