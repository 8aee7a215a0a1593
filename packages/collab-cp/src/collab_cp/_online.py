r"""Online human–AI collaborative sets: one quantile-tracking recursion per branch.

At step t the learner holds thresholds (b_t, a_t), outputs
C_t = {y ∈ H_t : s_t(y) ≤ b_t} ∪ {y ∉ H_t : s_t(y) ≤ a_t}, then sees y_t and its score
s_t = s_t(y_t). Exactly one branch learns from the step:

.. math::

    y_t \in H_t:\quad b \leftarrow b + \frac{\eta}{\hat\pi_{in}}\big(\mathbb 1\{s_t > b\} - \varepsilon\big),
    \qquad
    y_t \notin H_t:\quad a \leftarrow a + \frac{\eta}{\hat\pi_{out}}\big(\delta - \mathbb 1\{s_t \le a\}\big),

where π̂_in = max(π_floor, (n_in + 1)/(t + 2)) is the floored running frequency of the branch
(n_in counts earlier in-branch steps; π̂_out likewise). Dividing by π̂ lets both thresholds move at
the same speed per unit of *stream* time although one branch is visited rarely.

Guarantee on any sequence (no distributional assumption). Write the in-branch steps k = 1..m,
g_k = 1{s_k > b_k} − ε, c_k = π̂_k / η (so b_{k+1} − b_k = g_k / c_k). Summation by parts around
the midpoint β of the visited thresholds gives

.. math::

    \Big|\frac1m\sum_{k=1}^m g_k\Big| = \frac1m\Big|c_m u_{m+1} - c_1 u_1
        - \sum_{k=2}^{m}(c_k - c_{k-1})u_k\Big|
    \le \frac{R\,(c_1 + c_m + \mathrm{TV}(c))}{2m}, \qquad u_k = b_k - \beta,

with R = max_k b_k − min_k b_k. For bounded scores s ∈ [s_lo, s_hi] the recursion keeps
b within [min(b_1, s_lo − ε η/π_floor), max(b_1, s_hi + (1−ε) η/π_floor)], so R is bounded, c ≤ 1/η
and TV(c) ≤ (1 + log t)/η for a running frequency: the long-run in-branch miss rate is within
O(log T / (η m)) of ε, and the same holds for the recovery rate of the out-branch and δ. The
certificate is computed exactly by :meth:`OnlineCollaborative.rate_bounds`.

The learner's state is a small NamedTuple (:class:`OnlineState`); :meth:`~OnlineCollaborative.checkpoint`
and :meth:`~OnlineCollaborative.from_checkpoint` serialise it to plain JSON-able values so a stream
can be stopped and resumed bit for bit.

References:
    Noorani, Kiyani, Pappas, Hassani. "Human-AI Collaborative Uncertainty Quantification".
    ICML 2026 (arXiv:2510.23476). Gibbs & Candès, "Adaptive Conformal Inference Under
    Distribution Shift", NeurIPS 2021 (the quantile-tracking recursion).
"""

from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import (
    check_finite_array,
    check_in_interval,
    check_positive,
    check_probability_rows,
)
from icml26_shared.state import (
    StateFileError,
    check_same_config,
    decode_state,
    dumps_state,
    load_state_file,
    loads_state_text,
    save_state_file,
)

from ._checks import check_level
from ._offline import CollaborativeConformal
from ._sets import HumanSets, ScoreLike, as_label_mask, check_labels, conformity_scores

__all__ = ["BranchStats", "OnlineCollaborative", "OnlineState", "OnlineTrace"]

_WHAT = "a collab-cp OnlineCollaborative state"


class BranchStats(NamedTuple):
    """Running record of one branch: steps, events, visited threshold range, step-scale path.

    ``events`` counts misses (in-branch: s > b) or recoveries (out-branch: s ≤ a).
    ``c_first``, ``c_last`` and ``c_tv`` describe c_k = π̂_k/η (first, last, total variation).
    """

    steps: int = 0
    events: int = 0
    lo: float = math.inf
    hi: float = -math.inf
    c_first: float = math.nan
    c_last: float = math.nan
    c_tv: float = 0.0


class OnlineState(NamedTuple):
    """State of the online learner: thresholds, step counters and the per-branch records."""

    prune: float
    augment: float
    t: int = 0
    inside: BranchStats = BranchStats()
    outside: BranchStats = BranchStats()


def _advance(
    stats: BranchStats, value: float, new_value: float, c: float, event: bool
) -> BranchStats:
    first = stats.steps == 0
    return BranchStats(
        steps=stats.steps + 1,
        events=stats.events + int(event),
        lo=min(stats.lo, value, new_value),
        hi=max(stats.hi, value, new_value),
        c_first=c if first else stats.c_first,
        c_last=c,
        c_tv=stats.c_tv + (0.0 if first else abs(c - stats.c_last)),
    )


def online_step(
    state: OnlineState,
    score: float,
    in_human: bool,
    *,
    epsilon: float,
    delta: float,
    eta: float,
    pi_floor: float,
) -> OnlineState:
    """One update of the two-branch recursion (pure function; see the module docstring)."""
    t = state.t
    if in_human:
        pi = max(pi_floor, (state.inside.steps + 1) / (t + 2))
        miss = score > state.prune
        new_b = state.prune + (eta / pi) * ((1.0 if miss else 0.0) - epsilon)
        inside = _advance(state.inside, state.prune, new_b, pi / eta, miss)
        return OnlineState(new_b, state.augment, t + 1, inside, state.outside)
    pi = max(pi_floor, (state.outside.steps + 1) / (t + 2))
    hit = score <= state.augment
    new_a = state.augment + (eta / pi) * (delta - (1.0 if hit else 0.0))
    outside = _advance(state.outside, state.augment, new_a, pi / eta, hit)
    return OnlineState(state.prune, new_a, t + 1, state.inside, outside)


@dataclass(frozen=True)
class OnlineTrace:
    """What :meth:`OnlineCollaborative.run` returns, one entry per step.

    Attributes:
        sets: ``(T, K)`` sets output before each label was revealed.
        in_human: ``(T,)`` 1{y_t ∈ H_t}.
        covered: ``(T,)`` 1{y_t ∈ C_t}.
        prune / augment: ``(T,)`` thresholds used at each step.
    """

    sets: NDArray[np.bool_]
    in_human: NDArray[np.bool_]
    covered: NDArray[np.bool_]
    prune: NDArray[np.float64]
    augment: NDArray[np.float64]

    def branch_rates(self, start: int = 0, stop: int | None = None) -> tuple[float, float]:
        """(harm, recovery) over steps ``start:stop``: miss rate inside H, hit rate outside H."""
        inside = self.in_human[start:stop]
        cov = self.covered[start:stop]
        harm = float(np.mean(~cov[inside])) if inside.any() else math.nan
        rec = float(np.mean(cov[~inside])) if (~inside).any() else math.nan
        return harm, rec


class OnlineCollaborative:
    """Online collaborative sets whose branch rates track (ε, δ) on arbitrary sequences.

    Args:
        epsilon: target harm ε ∈ (0, 1) (long-run miss rate among steps with y_t ∈ H_t).
        delta: target recovery δ ∈ (0, 1) (long-run hit rate among steps with y_t ∉ H_t).
        eta: step size η > 0 (in score units per unit of stream time).
        score: ``"1-prob"``, ``"aps"`` or a callable ``probs -> (n, K)`` scores.
        pi_floor: floor of the branch frequency estimates, in (0, 1].
        prune: initial b; augment: initial a (e.g. offline thresholds, see :meth:`from_offline`).

    References:
        Noorani, Kiyani, Pappas, Hassani. "Human-AI Collaborative Uncertainty Quantification".
        ICML 2026 (arXiv:2510.23476).
    """

    def __init__(
        self,
        epsilon: float = 0.05,
        delta: float = 0.7,
        *,
        eta: float = 0.02,
        score: ScoreLike = "1-prob",
        pi_floor: float = 0.05,
        prune: float = 1.0,
        augment: float = 0.5,
    ):
        self.epsilon = check_level(epsilon, "epsilon")
        self.delta = check_level(delta, "delta")
        self.eta = check_positive(eta, "eta")
        self.pi_floor = check_in_interval(pi_floor, "pi_floor", 0, 1, closed=(False, True))
        if not callable(score):
            conformity_scores(np.full((1, 2), 0.5), score)
        self.score = score
        b = check_finite_array([prune], "prune")[0]
        a = check_finite_array([augment], "augment")[0]
        self.state = OnlineState(float(b), float(a))

    @classmethod
    def from_offline(cls, model: CollaborativeConformal, **kwargs: Any) -> OnlineCollaborative:
        """Start from a calibrated offline model's (ε, δ, score) and finite thresholds."""
        th = model.thresholds
        fallback = 1.0
        b = th.prune if math.isfinite(th.prune) else fallback
        a = th.augment if math.isfinite(th.augment) else fallback
        return cls(model.epsilon, model.delta, score=model.score, prune=b, augment=a, **kwargs)

    # ------------------------------------------------------------------ stepping
    def _kw(self) -> dict[str, float]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "eta": self.eta,
            "pi_floor": self.pi_floor,
        }

    def predict_set(self, probs: ArrayLike, human_sets: HumanSets) -> NDArray[np.bool_]:
        """Sets with the current thresholds for a batch ``(n, K)`` (no update)."""
        p = check_probability_rows(probs, "probs")
        mask = as_label_mask(human_sets, *p.shape)
        s = conformity_scores(p, self.score)
        return np.where(mask, s <= self.state.prune, s <= self.state.augment)

    def update_score(self, score: float, in_human: bool) -> OnlineCollaborative:
        """Advance one step from the true label's score and whether the human's set held it."""
        s = float(check_finite_array([score], "score")[0])
        self.state = online_step(self.state, s, bool(in_human), **self._kw())
        return self

    def update(self, probs: ArrayLike, human_set: HumanSets, y: int) -> NDArray[np.bool_]:
        """Output the set for one input, then learn from its label.

        Args:
            probs: ``(K,)`` AI probabilities for x_t.
            human_set: H_t as a ``(K,)`` boolean mask or a list of labels.
            y: the revealed label y_t.

        Returns:
            The ``(K,)`` set C_t issued before y_t was used.
        """
        raw = check_finite_array(probs, "probs")
        if raw.ndim != 1:
            raise ValueError(
                f"probs must be one probability vector of shape (K,) for update(), got shape "
                f"{raw.shape} (use run() for a stream of steps)"
            )
        p = check_probability_rows(raw.reshape(1, -1), "probs")
        if isinstance(human_set, np.ndarray) and human_set.dtype == np.bool_:
            mask = as_label_mask(human_set.reshape(1, -1), 1, p.shape[1], "human_set")
        else:
            mask = as_label_mask([human_set], 1, p.shape[1], "human_set")  # type: ignore[list-item]
        label = check_labels([y], 1, p.shape[1])[0]
        s = conformity_scores(p, self.score)[0]
        out = np.where(mask[0], s <= self.state.prune, s <= self.state.augment)
        self.state = online_step(self.state, float(s[label]), bool(mask[0, label]), **self._kw())
        return out

    def run(self, probs: ArrayLike, human_sets: HumanSets, y: ArrayLike) -> OnlineTrace:
        """Process a stream of T steps (set issued, then label revealed, at every step)."""
        p = check_probability_rows(probs, "probs")
        T, K = p.shape
        mask = as_label_mask(human_sets, T, K)
        labels = check_labels(y, T, K)
        s = conformity_scores(p, self.score)
        rows = np.arange(T)
        true = s[rows, labels]
        inside = mask[rows, labels]
        prune = np.empty(T)
        augment = np.empty(T)
        state = self.state
        kw = self._kw()
        for t in range(T):
            prune[t], augment[t] = state.prune, state.augment
            state = online_step(state, float(true[t]), bool(inside[t]), **kw)
        self.state = state
        sets = np.where(mask, s <= prune[:, None], s <= augment[:, None])
        return OnlineTrace(sets, inside, sets[rows, labels], prune, augment)

    # ------------------------------------------------------------------ reporting
    def rates(self) -> tuple[float, float]:
        """Long-run (harm, recovery) over every step seen so far (nan for an unvisited branch)."""
        i, o = self.state.inside, self.state.outside
        harm = i.events / i.steps if i.steps else math.nan
        rec = o.events / o.steps if o.steps else math.nan
        return harm, rec

    def rate_bounds(self) -> tuple[float, float]:
        """Certified bounds on |harm − ε| and |recovery − δ| over the steps seen so far.

        R (c_1 + c_m + TV(c)) / (2m) per branch (module docstring); ``inf`` for an unvisited branch.
        """

        def bound(b: BranchStats) -> float:
            if b.steps == 0:
                return math.inf
            return (b.hi - b.lo) * (b.c_first + b.c_last + b.c_tv) / (2 * b.steps)

        return bound(self.state.inside), bound(self.state.outside)

    # ------------------------------------------------------------------ checkpoint / resume
    def _config(self) -> dict[str, Any]:
        if callable(self.score):
            raise TypeError("a checkpoint needs a named score ('1-prob' or 'aps'), got a callable")
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "eta": self.eta,
            "score": self.score,
            "pi_floor": self.pi_floor,
        }

    def state_dict(self) -> dict[str, Any]:
        """The configuration and state as plain Python values; :meth:`to_json` writes them as
        strict JSON (``±inf`` and the unset ``nan`` of an unvisited branch encoded)."""
        st = self.state
        return {
            "config": self._config(),
            "state": {
                "prune": st.prune,
                "augment": st.augment,
                "t": st.t,
                "inside": list(st.inside),
                "outside": list(st.outside),
            },
        }

    def to_json(self) -> str:
        """The :meth:`state_dict` as strict JSON (``allow_nan=False``)."""
        return dumps_state(self.state_dict())

    @classmethod
    def from_json(cls, text: str) -> OnlineCollaborative:
        """Rebuild a learner from :meth:`to_json` output and continue where it stopped.

        Raises:
            StateFileError: (a ``ValueError``) when the text is truncated or not an
                ``OnlineCollaborative`` state.
        """
        return cls.from_state_dict(loads_state_text(text, _WHAT))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_json` to ``path`` (read it back with :meth:`load`)."""
        return save_state_file(path, self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> OnlineCollaborative:
        """Build a learner from a file written by :meth:`save`.

        Raises:
            StateFileError: (a ``ValueError``) naming the file when it is truncated, not JSON or
                the state of something else.
        """
        return load_state_file(path, _WHAT, cls.from_state_dict)

    def load_state_dict(self, data: dict[str, Any]) -> OnlineCollaborative:
        """Continue from a :meth:`state_dict` saved with the same hyperparameters.

        Raises:
            ValueError: naming the field, when the state was saved with another ε, δ, η, score
                or π floor; or when ``data`` is not a state dict.
        """
        data = decode_state(data)
        try:
            cfg, st = data["config"], data["state"]
            check_same_config(cfg, self._config(), owner="OnlineCollaborative")
            state = OnlineState(
                float(st["prune"]),
                float(st["augment"]),
                int(st["t"]),
                BranchStats(*st["inside"]),
                BranchStats(*st["outside"]),
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(
                f"data must be the output of OnlineCollaborative.state_dict(), got {exc!r}"
            ) from None
        self.state = state
        return self

    @classmethod
    def from_state_dict(cls, data: dict[str, Any]) -> OnlineCollaborative:
        """Build a learner from a :meth:`state_dict` alone."""
        if not isinstance(data, dict):
            raise StateFileError(
                f"data must be the dict of OnlineCollaborative.state_dict(), got "
                f"{type(data).__name__}"
            )
        data = decode_state(data)
        try:
            cfg = data["config"]
            obj = cls(
                cfg["epsilon"],
                cfg["delta"],
                eta=cfg["eta"],
                score=cfg["score"],
                pi_floor=cfg["pi_floor"],
            )
        except (KeyError, TypeError) as exc:
            raise ValueError(
                f"data must be the output of OnlineCollaborative.state_dict(), got {exc!r}"
            ) from None
        return obj.load_state_dict(data)

    def checkpoint(self) -> dict[str, Any]:
        """Deprecated (collab-cp 0.1.0's name): :meth:`state_dict`."""
        warnings.warn(
            "OnlineCollaborative.checkpoint is deprecated and will be removed in collab-cp 0.2: "
            "use state_dict (or to_json)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.state_dict()

    @classmethod
    def from_checkpoint(cls, data: dict[str, Any]) -> OnlineCollaborative:
        """Deprecated (collab-cp 0.1.0's name): :meth:`from_state_dict`."""
        warnings.warn(
            "OnlineCollaborative.from_checkpoint is deprecated and will be removed in collab-cp "
            "0.2: use from_state_dict (or from_json)",
            DeprecationWarning,
            stacklevel=2,
        )
        return cls.from_state_dict(data)

    def __repr__(self) -> str:
        return (
            f"OnlineCollaborative(epsilon={self.epsilon}, delta={self.delta}, eta={self.eta}, "
            f"t={self.state.t}, prune={self.state.prune:.4g}, augment={self.state.augment:.4g})"
        )
