"""Simulation populations and Monte Carlo runs of the stopping rules (used by ``reproduce``).

A :class:`Population` is a large finite sample treated as the true law: calibration scores are
resampled from it, so the exact expected set size of any fixed ``m`` is a Beta mixture over its
order statistics, the coverage of a threshold is exact (``F(q̂)``, no test-point noise), and
``E|T_∞| = g(F^{-1}(1 - α))``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy import special

from icml26_shared.datasets import dirichlet_classifier, load_digits

from ._scores import SetSizeCurve, aps_scores, conformal_rank, lac_scores
from ._session import _Session

FIXED_SIZES = (100, 500, 1000)


@dataclass
class Population:
    """A finite population standing in for the data law.

    Attributes:
        name: label used in tables.
        cal_scores: sorted calibration scores ``s(X, Y)`` (the law ``F``).
        truth: the set-size curve ``g`` of a large independent sample.
        rule_curve: the set-size curve of the unlabeled sample a calibrator would see.
        full_size: size of the full set.
    """

    name: str
    cal_scores: NDArray[np.float64]
    truth: SetSizeCurve
    rule_curve: SetSizeCurve
    full_size: float
    _h: NDArray[np.float64] | None = field(default=None, repr=False)

    @property
    def h(self) -> NDArray[np.float64]:
        """``g(s_(j))`` at every population order statistic."""
        if self._h is None:
            self._h = self.truth(self.cal_scores)
        return self._h

    def e_inf(self, alpha: float) -> float:
        """``E|T_∞| = g(F^{-1}(1 - α))``."""
        P = self.cal_scores.size
        return float(self.h[max(math.ceil((1 - alpha) * P - 1e-9) - 1, 0)])

    def expected_size(self, m: int, alpha: float) -> float:
        """Exact ``E|T_m|`` for ``m`` scores drawn from the population (Beta mixture)."""
        k = conformal_rank(m, alpha)
        if k > m:
            return self.full_size
        P = self.cal_scores.size
        sd = math.sqrt(alpha * (1 - alpha) / (m + 2)) + 1.0 / (m + 1)
        lo = max(0, math.floor((1 - alpha - 14 * sd) * P))
        edges = np.arange(lo, P + 1) / P
        cdf = special.betainc(k, m + 1 - k, edges)
        return float(np.sum(np.diff(cdf) * self.h[lo:]))

    def coverage(self, q: float) -> float:
        """``F(q)``: probability that a fresh score is ``<= q``."""
        return float(np.searchsorted(self.cal_scores, q, side="right") / self.cal_scores.size)

    def size(self, q: float) -> float:
        """``g(q)``: expected set size at threshold ``q``."""
        return float(self.truth(np.array([q]))[0])

    def cost_curve(self, ms: Iterable[int], alpha: float, n_future: float) -> NDArray[np.float64]:
        """Exact expected total cost ``m + N E|T_m|`` of fixed sizes."""
        return np.array([m + n_future * self.expected_size(int(m), alpha) for m in ms])


def dirichlet_population(
    n_classes: int = 10,
    *,
    concentration: float = 0.1,
    ai_noise: float = 0.5,
    score: str = "lac",
    size: int = 200_000,
    n_unlabeled: int = 5_000,
    seed: int = 1,
) -> Population:
    """Synthetic softmax classifier (``icml26_shared.datasets.dirichlet_classifier``)."""
    total = 2 * size + n_unlabeled
    d = dirichlet_classifier(
        total,
        n_classes,
        concentration=concentration,
        ai_noise=ai_noise,
        human_noise=None,
        seed=seed,
    )
    S = lac_scores(d.probs) if score == "lac" else aps_scores(d.probs)
    cal = np.sort(S[np.arange(size), d.y[:size]])
    return Population(
        name=f"Dirichlet K={n_classes} {score.upper()}",
        cal_scores=cal,
        truth=SetSizeCurve.from_scores(S[size : 2 * size]),
        rule_curve=SetSizeCurve.from_scores(S[2 * size :]),
        full_size=float(n_classes),
    )


def digits_population() -> Population:
    """scikit-learn digits with 5-fold cross-fitted linear-discriminant probabilities (LAC).

    Needs the ``data`` extra (scikit-learn). The 1,797 cross-fitted points are the population.
    """
    try:
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
        from sklearn.model_selection import cross_val_predict
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "the digits experiment needs scikit-learn: `pip install costly-cp[data]`"
        ) from exc
    X, y = load_digits()
    probs = cross_val_predict(LinearDiscriminantAnalysis(), X, y, cv=5, method="predict_proba")
    probs = np.clip(probs, 0.0, 1.0)
    S = lac_scores(probs / probs.sum(axis=1, keepdims=True))
    cal = np.sort(S[np.arange(y.size), y])
    curve = SetSizeCurve.from_scores(S)
    return Population("digits + LDA, LAC", cal, curve, curve, 10.0)


def real_population(name: str, seed: int = 0) -> Population:
    """A real scikit-learn set (:func:`costly_cp.data.load_real`) with 5-fold cross-fitted
    logistic-regression probabilities (standardised inputs) and LAC scores; the cross-fitted
    points are the population, as in :func:`digits_population`."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from ._data import load_real

    X, y = load_real(name)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    folds = StratifiedKFold(5, shuffle=True, random_state=seed)
    probs = np.asarray(cross_val_predict(model, X, y, cv=folds, method="predict_proba"))
    S = lac_scores(probs / probs.sum(axis=1, keepdims=True))
    cal = np.sort(S[np.arange(y.size), y])
    curve = SetSizeCurve.from_scores(S)
    return Population(f"{name} + logistic regression, LAC", cal, curve, curve, float(S.shape[1]))


@dataclass
class RunStats:
    """Per-repetition outcomes of a rule (arrays of length ``reps``)."""

    excess: NDArray[np.float64]
    cost: NDArray[np.float64]
    coverage: NDArray[np.float64]
    labels: NDArray[np.int64]
    fixed_excess: dict[int, NDArray[np.float64]]
    fixed_coverage: dict[int, NDArray[np.float64]] = field(default_factory=dict)


def run_rule(
    pop: Population,
    *,
    alpha: float,
    n_future: float,
    rule: str,
    reps: int,
    fixed: Iterable[int] = (),
    stream_len: int = 5_000,
    seed: int = 0,
) -> RunStats:
    """Run a stopping rule ``reps`` times on resampled streams; fixed sizes reuse each stream."""
    rng = np.random.default_rng(seed)
    P = pop.cal_scores.size
    e_inf = n_future * pop.e_inf(alpha)
    fixed = tuple(int(m) for m in fixed)
    out = {k: np.empty(reps) for k in ("excess", "cost", "coverage")}
    labels = np.empty(reps, dtype=np.int64)
    fixed_excess = {m: np.empty(reps) for m in fixed}
    fixed_cov = {m: np.empty(reps) for m in fixed}
    for r in range(reps):
        stream = pop.cal_scores[rng.integers(0, P, stream_len)]
        sess = _Session(
            alpha=alpha,
            n_future=n_future,
            curve=pop.rule_curve,
            limit=stream_len,
            rule=rule,
            stream_len=stream_len,
        )
        i = 0
        while sess.needs_label():
            sess.add(stream[i])
            i += 1
        q = sess.threshold()
        cost = len(sess.scores) + n_future * pop.size(q)
        out["cost"][r] = cost
        out["excess"][r] = cost - e_inf
        out["coverage"][r] = pop.coverage(q)
        labels[r] = len(sess.scores)
        for m in fixed:
            k = conformal_rank(m, alpha)
            qm = math.inf if k > m else float(np.partition(stream[:m], k - 1)[k - 1])
            fixed_excess[m][r] = m + n_future * pop.size(qm) - e_inf
            fixed_cov[m][r] = pop.coverage(qm)
    return RunStats(out["excess"], out["cost"], out["coverage"], labels, fixed_excess, fixed_cov)


def ratio_estimate(a: NDArray[np.float64], b: NDArray[np.float64]) -> tuple[float, float]:
    """``1 - mean(a)/mean(b)`` and its delta-method standard error over paired repetitions."""
    ma, mb = float(a.mean()), float(b.mean())
    r = ma / mb
    n = a.size
    if n < 2:
        return 1 - r, 0.0
    cov = np.cov(a, b)
    var = (cov[0, 0] / ma**2 + cov[1, 1] / mb**2 - 2 * cov[0, 1] / (ma * mb)) / n
    return 1 - r, float(abs(r) * math.sqrt(max(var, 0.0)))


PAC_GRID = (60, 80, 100, 150, 200, 300, 400, 500, 700, 1000, 1500, 2000, 3000)


@dataclass
class PACStats:
    """Per-pool outcomes of PAC labeling: realised error and expert labels."""

    error: dict[str, NDArray[np.float64]]
    expert: dict[str, NDArray[np.float64]]


def run_pac(
    reps: int,
    *,
    pool_size: int = 10_000,
    eps: float = 0.05,
    delta: float = 0.05,
    rules: Iterable[str] = ("plugin", "split"),
    grid: Iterable[int] = PAC_GRID,
    seed: int = 0,
) -> PACStats:
    """PAC labeling of fresh synthetic pools (K = 10, confident Dirichlet classifier).

    Each repetition draws a pool, runs :func:`~costly_cp.pac_label` with each rule, and every
    fixed calibration size of ``grid`` on a random order of the same pool.
    """
    from ._pac import pac_label
    from ._scores import pac_rank

    rng = np.random.default_rng(seed)
    rules, grid = tuple(rules), tuple(int(m) for m in grid)
    names = [*rules, *(f"fixed m={m}" for m in grid)]
    error = {k: np.empty(reps) for k in names}
    expert = {k: np.empty(reps) for k in names}
    for r in range(reps):
        d = dirichlet_classifier(
            pool_size, 10, concentration=0.02, ai_noise=0.3, human_noise=None, seed=rng
        )
        S = lac_scores(d.probs)
        for rule in rules:
            res = pac_label(
                d.probs,
                lambda i, y=d.y: int(y[i]),
                eps,
                delta,
                score_fn=lac_scores,
                rule=rule,
                seed=int(rng.integers(2**31)),
            )
            error[rule][r] = float(np.mean(res.labels != d.y))
            expert[rule][r] = res.n_expert
        perm = rng.permutation(pool_size)
        for m in grid:
            cal, rest = perm[:m], perm[m:]
            k = int(pac_rank(m, eps, delta, pool_size - m))
            cal_scores = S[cal, d.y[cal]]
            q = math.inf if k > m else float(np.partition(cal_scores, k - 1)[k - 1])
            sets = S[rest] <= q
            single = sets.sum(axis=1) == 1
            wrong = single & ~sets[np.arange(rest.size), d.y[rest]]
            error[f"fixed m={m}"][r] = wrong.sum() / pool_size
            expert[f"fixed m={m}"][r] = m + np.count_nonzero(~single)
    return PACStats(error, expert)
