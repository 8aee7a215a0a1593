r"""Offline (split) human–AI collaborative conformal prediction.

Given a human set H(x) and a conformity score s(x, y), the collaborative set is

.. math::

    C(x) = \{y \in H(x) : s(x, y) \le b\} \;\cup\; \{y \notin H(x) : s(x, y) \le a\},

where ``b`` *prunes* the human's labels and ``a`` *augments* them with labels the human missed.
On a calibration set the true-label scores are split by whether the human's set held the truth,
``S_in = {s(x_i, y_i) : y_i ∈ H(x_i)}`` (n_in of them) and ``S_out`` (n_out), and

.. math::

    b = S_{in,(\lceil (n_{in}+1)(1-\varepsilon) \rceil)}, \qquad
    a = S_{out,(\lceil (n_{out}+1)\delta \rceil)},

order statistics, +∞ when the index exceeds the group size (or the group is empty). Within each
group the calibration and test true-label scores are exchangeable, so the split-conformal
argument gives, for a fresh test point,

* counterfactual harm  P(Y ∉ C(X) | Y ∈ H(X)) ≤ ε,
* complementarity      P(Y ∈ C(X) | Y ∉ H(X)) ≥ δ,

and, for continuous scores, each rate is within 1/(n_group + 1) of its target. With H ≡ ∅ only the
second branch exists and C is exactly split conformal prediction at level δ.

Population view. With the true conditional law p(y|x), minimising the expected size E|C(X)|
subject to harm ≤ ε and recovery ≥ δ is a linear programme in the inclusion probabilities that
separates into two fractional knapsacks, one per branch (the constraints involve only in-H or only
out-of-H pairs). Each knapsack is solved greedily by value per unit size, which is p(y|x): the
optimum is one threshold on p(y|x) inside H and another outside H, i.e. two thresholds on a
single score (:func:`optimal_collaborative_sets`; the test suite checks it against an LP solver).

References:
    Noorani, Kiyani, Pappas, Hassani. "Human-AI Collaborative Uncertainty Quantification".
    ICML 2026 (arXiv:2510.23476).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_finite_array, check_probability_rows
from icml26_shared.conformal import split_quantile

from ._checks import check_level, check_mask
from ._sets import HumanSets, ScoreLike, as_label_mask, check_labels, conformity_scores

__all__ = [
    "CollabReport",
    "CollaborativeConformal",
    "Thresholds",
    "calibrate_thresholds",
    "collaborative_metrics",
    "collaborative_sets",
    "optimal_collaborative_sets",
]


def conformal_quantile(scores: ArrayLike, level: float) -> float:
    r"""Deprecated: :math:`S_{(\lceil (n+1)\,level \rceil)}` for a *coverage* ``level``.

    Its name clashed with ``up_ocp.conformal_quantile`` (sorted scores and a miscoverage); use
    ``icml26_shared.conformal.split_quantile(scores, alpha=1 - level)``. Removed in collab-cp 0.2.
    """
    warnings.warn(
        "collab_cp.conformal_quantile(scores, level) is deprecated and will be removed in "
        "collab-cp 0.2: use icml26_shared.conformal.split_quantile(scores, 1 - level) (it takes "
        "the miscoverage)",
        DeprecationWarning,
        stacklevel=2,
    )
    level = check_level(level, "level")
    s = check_finite_array(scores, "scores", ndim=1, allow_empty=True)
    return float(split_quantile(s, 1.0 - level))


class Thresholds(NamedTuple):
    """Calibrated thresholds: ``prune`` (b, inside H), ``augment`` (a, outside H), group sizes."""

    prune: float
    augment: float
    n_in: int
    n_out: int


def calibrate_thresholds(
    true_scores: ArrayLike, in_human: ArrayLike, epsilon: float, delta: float
) -> Thresholds:
    """Calibrate b and a from true-label scores split by membership of the truth in H.

    Args:
        true_scores: ``(n,)`` scores s(x_i, y_i) of the true labels.
        in_human: ``(n,)`` booleans 1{y_i ∈ H(x_i)}.
        epsilon: harm level ε ∈ (0, 1).
        delta: recovery level δ ∈ (0, 1).

    Returns:
        :class:`Thresholds` with b = S_in,(⌈(n_in+1)(1−ε)⌉) and a = S_out,(⌈(n_out+1)δ⌉).
    """
    eps = check_level(epsilon, "epsilon")
    dl = check_level(delta, "delta")
    s = check_finite_array(true_scores, "true_scores", ndim=1)
    inside = check_mask(in_human, "in_human", s.shape)
    b = float(split_quantile(s[inside], eps))
    a = float(split_quantile(s[~inside], 1.0 - dl))
    n_in, n_out = int(inside.sum()), int((~inside).sum())
    if math.isinf(a) and n_out > 0:
        # (no point outside H: a is never used on data like this one)
        warnings.warn(
            f"augment threshold a is +inf: only {n_out} calibration points have their true label "
            f"outside the human set, too few for recovery level delta={dl:g} (it needs at least "
            f"{math.ceil(dl / (1 - dl))}), so every label outside H is added (full sets). "
            "Calibrate on more data or lower delta",
            UserWarning,
            stacklevel=2,
        )
    return Thresholds(b, a, n_in, n_out)


def collaborative_sets(
    scores: ArrayLike, human_mask: ArrayLike, prune: float, augment: float
) -> NDArray[np.bool_]:
    """The set C = {y ∈ H : s ≤ b} ∪ {y ∉ H : s ≤ a} as a boolean mask (same shape as scores)."""
    s = check_finite_array(scores, "scores", ndim=2, allow_inf=True)
    h = check_mask(human_mask, "human_mask", s.shape)
    for name, v in (("prune", prune), ("augment", augment)):
        if isinstance(v, str | bytes) or math.isnan(float(v)):
            raise ValueError(f"{name} must be a threshold (a number, +inf allowed), got {v!r}")
    return np.where(h, s <= prune, s <= augment)


@dataclass(frozen=True)
class CollabReport:
    """Evaluation of collaborative sets against the truth.

    Attributes:
        n: number of points; n_in / n_out: points whose truth is inside / outside H.
        coverage: P(Y ∈ C); size: mean |C| (all sets); size_nonempty: mean |C| over non-empty
            sets; empty_rate: fraction of empty sets.
        harm: P(Y ∉ C | Y ∈ H) (nan if n_in = 0); recovery: P(Y ∈ C | Y ∉ H) (nan if n_out = 0).
        human_coverage / human_size: the same for the human's sets alone.
        prune / augment: the thresholds b and a used.
    """

    n: int
    n_in: int
    n_out: int
    coverage: float
    size: float
    size_nonempty: float
    empty_rate: float
    harm: float
    recovery: float
    human_coverage: float
    human_size: float
    prune: float
    augment: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def collaborative_metrics(
    sets: ArrayLike,
    human_mask: ArrayLike,
    y: ArrayLike,
    *,
    prune: float = math.nan,
    augment: float = math.nan,
) -> CollabReport:
    """Coverage, size, harm and recovery of boolean sets given the human's sets and labels."""
    c = np.asarray(sets, dtype=bool)
    h = np.asarray(human_mask, dtype=bool)
    if c.ndim != 2 or h.shape != c.shape:
        raise ValueError(
            f"sets and human_mask must be (n, K) masks of one shape, got {c.shape}, {h.shape}"
        )
    n, K = c.shape
    labels = check_labels(y, n, K)
    rows = np.arange(n)
    covered = c[rows, labels]
    inside = h[rows, labels]
    sizes = c.sum(axis=1)
    nonempty = sizes[sizes > 0]
    n_in = int(inside.sum())
    return CollabReport(
        n=n,
        n_in=n_in,
        n_out=n - n_in,
        coverage=float(covered.mean()),
        size=float(sizes.mean()),
        size_nonempty=float(nonempty.mean()) if nonempty.size else math.nan,
        empty_rate=float(np.mean(sizes == 0)),
        harm=float(np.mean(~covered[inside])) if n_in else math.nan,
        recovery=float(np.mean(covered[~inside])) if n_in < n else math.nan,
        human_coverage=float(inside.mean()),
        human_size=float(h.sum(axis=1).mean()),
        prune=float(prune),
        augment=float(augment),
    )


class CollaborativeConformal:
    """Human–AI collaborative prediction sets with harm ≤ ε and recovery ≥ δ.

    ``C(x) = {y ∈ H(x) : s(x,y) ≤ b} ∪ {y ∉ H(x) : s(x,y) ≤ a}`` with b and a the finite-sample
    corrected order statistics of the calibration true-label scores inside / outside H (see the
    module docstring for the math and the guarantees).

    Args:
        epsilon: counterfactual-harm level ε ∈ (0, 1): a correct human label is dropped with
            probability at most ε.
        delta: complementarity level δ ∈ (0, 1): a correct label the human missed is recovered
            with probability at least δ.
        score: ``"1-prob"`` (default), ``"aps"`` or a callable ``probs -> (n, K)`` scores.

    Attributes (after :meth:`conformalize`):
        prune_threshold_: b. augment_threshold_: a. n_in_, n_out_: calibration group sizes.

    Examples:
        >>> import numpy as np
        >>> from collab_cp import CollaborativeConformal, human_sets
        >>> from icml26_shared.datasets import dirichlet_classifier
        >>> d = dirichlet_classifier(2000, 10, concentration=0.1, seed=0)
        >>> H = human_sets(d.human_probs, "top_k", k=2)
        >>> cp = CollaborativeConformal(epsilon=0.05, delta=0.7).conformalize(
        ...     d.probs[:1000], H[:1000], d.y[:1000])
        >>> sets = cp.predict_set(d.probs[1000:], H[1000:])
        >>> sets.shape
        (1000, 10)

    References:
        Noorani, Kiyani, Pappas, Hassani. "Human-AI Collaborative Uncertainty Quantification".
        ICML 2026 (arXiv:2510.23476).
    """

    def __init__(self, epsilon: float = 0.05, delta: float = 0.7, score: ScoreLike = "1-prob"):
        self.epsilon = check_level(epsilon, "epsilon")
        self.delta = check_level(delta, "delta")
        if not callable(score):
            conformity_scores(np.full((1, 2), 0.5), score)  # validates the name
        self.score = score
        self._calibration: CollabReport | None = None

    # ------------------------------------------------------------------ calibration
    def _prepare(
        self, probs: ArrayLike, human_sets: HumanSets
    ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        p = check_probability_rows(probs, "probs")
        K = getattr(self, "n_classes_", None)
        if K is not None and p.shape[1] != K:
            raise ValueError(
                f"probs must have {K} columns (the labels it was conformalized on), got shape "
                f"{p.shape}"
            )
        mask = as_label_mask(human_sets, p.shape[0], p.shape[1])
        return conformity_scores(p, self.score), mask

    def conformalize(
        self, probs: ArrayLike, human_sets: HumanSets, y: ArrayLike
    ) -> CollaborativeConformal:
        """Calibrate the thresholds b and a on held-out data.

        Args:
            probs: ``(n, K)`` AI probabilities.
            human_sets: the human's sets, a boolean ``(n, K)`` mask or ``n`` label lists.
            y: ``(n,)`` true labels.

        Returns:
            ``self``.
        """
        self.n_classes_ = None  # a new calibration may have another label space
        scores, mask = self._prepare(probs, human_sets)
        return self._calibrate_scores(scores, mask, y)

    def calibrate(self, *args: Any, **kwargs: Any) -> CollaborativeConformal:
        """Deprecated (collab-cp 0.1.0's verb): :meth:`conformalize`."""
        warnings.warn(
            "CollaborativeConformal.calibrate is deprecated and will be removed in collab-cp 0.2: use "
            "conformalize",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.conformalize(*args, **kwargs)

    def _calibrate_scores(
        self, scores: NDArray[np.float64], mask: NDArray[np.bool_], y: ArrayLike
    ) -> CollaborativeConformal:
        n, K = scores.shape
        labels = check_labels(y, n, K)
        self.n_classes_ = K
        rows = np.arange(n)
        th = calibrate_thresholds(
            scores[rows, labels], mask[rows, labels], self.epsilon, self.delta
        )
        self.prune_threshold_ = th.prune
        self.augment_threshold_ = th.augment
        self.n_in_ = th.n_in
        self.n_out_ = th.n_out
        sets = collaborative_sets(scores, mask, th.prune, th.augment)
        self._calibration = collaborative_metrics(
            sets, mask, labels, prune=th.prune, augment=th.augment
        )
        return self

    def _check_fitted(self) -> None:
        if self._calibration is None:
            raise RuntimeError(
                "CollaborativeConformal is not conformalized: call conformalize() first"
            )

    @property
    def thresholds(self) -> Thresholds:
        """The calibrated :class:`Thresholds` (b, a, n_in, n_out)."""
        self._check_fitted()
        return Thresholds(self.prune_threshold_, self.augment_threshold_, self.n_in_, self.n_out_)

    # ------------------------------------------------------------------ prediction
    def predict_set(self, probs: ArrayLike, human_sets: HumanSets) -> NDArray[np.bool_]:
        """Collaborative sets for new inputs as a boolean ``(n, K)`` mask."""
        self._check_fitted()
        scores, mask = self._prepare(probs, human_sets)
        return collaborative_sets(scores, mask, self.prune_threshold_, self.augment_threshold_)

    def report(
        self,
        probs: ArrayLike | None = None,
        human_sets: HumanSets | None = None,
        y: ArrayLike | None = None,
        *,
        groups: ArrayLike | None = None,
    ) -> CollabReport | dict[Any, CollabReport]:
        """Harm, recovery, coverage and size.

        Without arguments: the in-sample figures on the calibration data (thresholds, group
        sizes; the rates there are for information only). With ``probs, human_sets, y``: the
        figures on that (test) data; with ``groups`` too, one report per group value (e.g. the
        human's set size as a proxy for the human's confidence).
        """
        self._check_fitted()
        if probs is None and human_sets is None and y is None:
            assert self._calibration is not None
            return self._calibration
        if probs is None or human_sets is None or y is None:
            raise ValueError("report needs all of probs, human_sets and y, or none of them")
        scores, mask = self._prepare(probs, human_sets)
        sets = collaborative_sets(scores, mask, self.prune_threshold_, self.augment_threshold_)
        labels = check_labels(y, *scores.shape)
        kw = {"prune": self.prune_threshold_, "augment": self.augment_threshold_}
        if groups is None:
            return collaborative_metrics(sets, mask, labels, **kw)
        g = np.asarray(groups)
        if g.shape != (scores.shape[0],):
            raise ValueError(f"groups must have shape ({scores.shape[0]},), got {g.shape}")
        out: dict[Any, CollabReport] = {}
        for value in np.unique(g):
            sel = g == value
            key = value.item() if hasattr(value, "item") else value
            out[key] = collaborative_metrics(sets[sel], mask[sel], labels[sel], **kw)
        return out

    def __repr__(self) -> str:
        return f"CollaborativeConformal(epsilon={self.epsilon}, delta={self.delta}, score={self.score!r})"


def _greedy_mass(values: NDArray[np.float64], target: float) -> tuple[NDArray[np.float64], float]:
    """Fractional knapsack: weights w ∈ [0,1] maximising nothing but reaching Σ w·v ≥ target with
    the least Σ w, by taking the largest v first. Returns (weights, threshold value)."""
    w = np.zeros_like(values)
    if target <= 0 or values.size == 0:
        return w, math.inf
    order = np.argsort(-values, kind="stable")
    cum = np.cumsum(values[order])
    j = int(np.searchsorted(cum, target - 1e-15))
    j = min(j, values.size - 1)
    w[order[:j]] = 1.0
    before = cum[j - 1] if j > 0 else 0.0
    w[order[j]] = min(1.0, (target - before) / values[order[j]]) if values[order[j]] > 0 else 1.0
    return w, float(values[order[j]])


def optimal_collaborative_sets(
    true_probs: ArrayLike, human_sets: HumanSets, epsilon: float, delta: float
) -> tuple[NDArray[np.float64], float, float]:
    r"""Population-optimal (randomised) collaborative sets on a finite set of inputs.

    Solves  min Σ_i Σ_y w_iy  over w ∈ [0, 1]^{n×K}  subject to

    * Σ_{(i,y): y ∈ H_i} p_iy (1 − w_iy) ≤ ε · Σ_{y ∈ H_i} p_iy   (harm ≤ ε),
    * Σ_{(i,y): y ∉ H_i} p_iy w_iy ≥ δ · Σ_{y ∉ H_i} p_iy          (recovery ≥ δ),

    where p = ``true_probs`` is the law of Y given each input (inputs weighted equally). The LP
    separates into one fractional knapsack per branch, whose greedy solution keeps the pairs with
    the largest p_iy: the optimum is {y ∈ H : p(y|x) ≥ t_in} ∪ {y ∉ H : p(y|x) ≥ t_out}, with at
    most one fractional pair per branch.

    Returns:
        ``(weights, t_in, t_out)``: the ``(n, K)`` inclusion probabilities and the two thresholds
        on p(y|x) (``inf`` when a branch needs no label).
    """
    p = check_probability_rows(true_probs, "true_probs")
    eps = check_level(epsilon, "epsilon")
    dl = check_level(delta, "delta")
    mask = as_label_mask(human_sets, *p.shape)
    w = np.zeros_like(p)
    w_in, t_in = _greedy_mass(p[mask], (1 - eps) * p[mask].sum())
    w_out, t_out = _greedy_mass(p[~mask], dl * p[~mask].sum())
    w[mask] = w_in
    w[~mask] = w_out
    return w, t_in, t_out
