"""``LabelBudgetCalibrator``: buy labels one at a time and stop when they stop paying.

References:
    Ilyas, Ko, Tang, Wu, Zhang (2026), "Provably Label-Efficient Conformal Prediction", ICML 2026
    (reconstruction: no paper text or code is public).
"""

from __future__ import annotations

import math
import numbers
import os
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import (
    SeedLike,
    check_alpha,
    check_choice,
    check_finite_array,
    check_in_interval,
    check_positive,
    check_positive_int,
    int_from_seed,
)
from icml26_shared.state import (
    check_same_config,
    check_state_keys,
    dumps_state,
    load_state_file,
    loads_state_text,
    save_state_file,
)

from ._cost import CostModel
from ._scores import IntervalScores, SetSizeCurve
from ._session import RULES, Trace, _Session

__all__ = ["CalibrationResult", "LabelBudgetCalibrator", "StreamExhaustedWarning"]


class StreamExhaustedWarning(UserWarning):
    """The unlabeled stream ran out before the stopping rule stopped (``stopped_by ==
    "exhausted"``): the calibration uses every label bought, not the size the rule would pick."""


@dataclass(frozen=True)
class CalibrationResult:
    """What a labelling session returns.

    Attributes:
        m: number of calibration scores behind ``threshold``.
        threshold: the conformal threshold ``q̂`` (``+inf``: full set / whole line).
        cost_estimate: estimated total cost ``labels bought + N · Ê|T_m|``.
        trace: the refit checkpoints (:class:`Trace`).
        labels_bought: all labels paid for (``m`` plus the pilot for ``rule="split"``).
        stopped_by: ``"rule"``, ``"budget"`` (``max_labels`` reached) or ``"exhausted"`` (the
            stream ran out before the rule stopped).
        guarantee: ``"finite-sample"`` (``split``: ``P(Y ∈ T) >= 1 - α`` holds exactly) or
            ``"none"`` (``plugin``: valid for a fixed ``m``; after its data-dependent stop the
            coverage is measured, not proven).
        model: the last fitted :class:`CostModel` (``None`` if never fitted).
        labeled_indices: positions in ``unlabeled`` that were labelled, in order.
        labels: their labels.
        calibration_scores: the ``m`` scores behind ``threshold``.
    """

    m: int
    threshold: float
    cost_estimate: float
    trace: Trace
    labels_bought: int
    stopped_by: str
    guarantee: str
    model: CostModel | None
    labeled_indices: NDArray[np.int64]
    labels: NDArray[Any]
    calibration_scores: NDArray[np.float64] = field(repr=False)

    def predict_set(self, scores: ArrayLike) -> NDArray[np.bool_]:
        """Prediction sets ``{y : s(x, y) <= q̂}`` from a ``(n, K)`` per-label score matrix."""
        S = check_finite_array(scores, "scores", ndim=2)
        return self.threshold >= S

    def predict_interval(
        self, lower: ArrayLike, upper: ArrayLike | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Intervals ``[lo - q̂, hi + q̂]`` from base bounds (``upper=None``: ``lo = hi = μ̂``)."""
        lo = check_finite_array(lower, "lower", ndim=1)
        hi = lo if upper is None else check_finite_array(upper, "upper", ndim=1)
        if hi.shape != lo.shape:
            raise ValueError(f"upper must have the shape {lo.shape} of lower, got {hi.shape}")
        if (hi < lo).any():
            i = int(np.flatnonzero(hi < lo)[0])
            raise ValueError(
                f"upper must be >= lower, got lower={lo[i]:g} > upper={hi[i]:g} at index {i}"
            )
        return lo - self.threshold, hi + self.threshold


class LabelBudgetCalibrator:
    r"""Conformal calibration that decides online when to stop buying labels.

    Items of ``unlabeled`` are labelled in order by ``oracle(i)``; after each label the rule
    weighs one more label (cost 1) against the expected shrinkage of all ``N`` future sets,

    .. math:: C(m) = m + N\,\mathbb{E}|T_m(X)|,

    estimated from the labels so far (calibration-score law) and from the unlabeled inputs
    (set-size curve). See :mod:`costly_cp._cost` for the estimator.

    Args:
        score_fn: for classification, ``score_fn(inputs) -> (n, K)`` per-label scores (e.g.
            :func:`~costly_cp.lac_scores` of a classifier's probabilities) and integer labels in
            ``[0, K)``; for regression, an :class:`~costly_cp.IntervalScores`.
        confidence_level: target coverage ``1 - α`` in (0, 1) (MAPIE 1.x's name). ``alpha=``
            (the miscoverage) is still accepted for one release, with a ``DeprecationWarning``.
        n_future: ``N``, the number of future predictions one label is traded against.
        rule: ``"plugin"`` (direct rule, coverage measured) or ``"split"`` (pilot split, provably
            valid; costs the pilot labels).
        max_labels: budget cap (default: the whole stream).
        min_labels: smallest size the rule may stop at (default ``max(⌈4/α⌉, m_finite + 1)``);
            for ``split``, the smallest fresh calibration set after the pilot.
        growth: refit the cost curve when the label count grew by this factor (amortises a
            decision to ``O(log m)``).
        pilot_fraction: ``split`` ends its pilot once it holds this fraction of the target.
        bandwidth: kernel constant of the curve fit.
        shuffle: label ``unlabeled`` in a random order (``seed``) instead of stream order.
        seed: seed of the shuffle: a non-negative int, a numpy integer, a
            ``numpy.random.Generator`` or ``None`` (one draw of it becomes the int stored
            with the state).

    Example:
        >>> import numpy as np
        >>> from costly_cp import LabelBudgetCalibrator, lac_scores
        >>> rng = np.random.default_rng(0)
        >>> probs = rng.dirichlet(np.full(5, 0.3), size=3000)
        >>> y = np.array([rng.choice(5, p=p) for p in probs])
        >>> cal = LabelBudgetCalibrator(lac_scores, confidence_level=0.9, n_future=10_000)
        >>> res = cal.conformalize(probs, lambda i: int(y[i])).result_
        >>> res.stopped_by, res.m >= 40
        ('rule', True)
        >>> cal.predict_set(lac_scores(probs[:2])).shape
        (2, 5)

    References:
        Ilyas, Ko, Tang, Wu, Zhang (2026), "Provably Label-Efficient Conformal Prediction"
        (reconstructed).
    """

    def __init__(
        self,
        score_fn: Callable[[Any], ArrayLike] | IntervalScores,
        *,
        confidence_level: float | None = None,
        n_future: float = 10_000,
        rule: str = "plugin",
        max_labels: int | None = None,
        min_labels: int | None = None,
        growth: float = 0.05,
        pilot_fraction: float = 0.3,
        bandwidth: float = 1.5,
        shuffle: bool = False,
        seed: SeedLike = 0,
        alpha: float | None = None,
    ) -> None:
        if not callable(score_fn) and not isinstance(score_fn, IntervalScores):
            raise TypeError(
                f"score_fn must be callable or an IntervalScores, got {type(score_fn).__name__}"
            )
        self.score_fn = score_fn
        if alpha is not None:
            if confidence_level is not None:
                raise TypeError("pass confidence_level or the deprecated alpha, not both")
            warnings.warn(
                "LabelBudgetCalibrator(alpha=...) is deprecated and will be removed in costly-cp "
                "0.2: pass confidence_level=1 - alpha",
                DeprecationWarning,
                stacklevel=2,
            )
            self.alpha = check_alpha(alpha)
        else:
            cl = 0.9 if confidence_level is None else confidence_level
            if isinstance(cl, str | bytes | bool):
                raise TypeError(f"confidence_level must be a real number, got {cl!r}")
            cl = check_in_interval(cl, "confidence_level", 0, 1)
            # the decimal complement: confidence_level=0.9 runs at exactly alpha=0.1
            self.alpha = float(Decimal(1) - Decimal(repr(cl)))
        self.confidence_level = 1.0 - self.alpha if alpha is not None else cl
        self.n_future = check_positive(n_future, "n_future")
        self.rule = check_choice(rule, "rule", RULES)
        self.max_labels = (
            None if max_labels is None else check_positive_int(max_labels, "max_labels")
        )
        self.min_labels = (
            None if min_labels is None else check_positive_int(min_labels, "min_labels", minimum=3)
        )
        self.growth = check_positive(growth, "growth")
        self.pilot_fraction = check_in_interval(
            pilot_fraction, "pilot_fraction", 0, 1, closed=(False, True)
        )
        if (
            self.max_labels is not None
            and self.min_labels is not None
            and self.max_labels < self.min_labels
        ):
            raise ValueError(
                f"max_labels must be >= min_labels, got max_labels={self.max_labels} < "
                f"min_labels={self.min_labels}"
            )
        self.bandwidth = check_positive(bandwidth, "bandwidth")
        if not isinstance(shuffle, bool | np.bool_):
            raise TypeError(f"shuffle must be True or False, got {shuffle!r}")
        self.shuffle = bool(shuffle)
        # an int (saved with the state); a Generator or None gives one draw of it
        self.seed = int_from_seed(seed, bits=63)
        self._indices: list[int] = []
        self._labels: list[Any] = []
        self._session: _Session | None = None
        self._pac_delta: float | None = None
        self._size_kind = "count"
        self.result_: CalibrationResult | None = None
        self._n_classes: int | None = None

    # -- state ------------------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        return {
            "confidence_level": self.confidence_level,
            "n_future": self.n_future,
            "rule": self.rule,
            "max_labels": self.max_labels,
            "min_labels": self.min_labels,
            "growth": self.growth,
            "pilot_fraction": self.pilot_fraction,
            "bandwidth": self.bandwidth,
            "shuffle": self.shuffle,
            "seed": self.seed,
            "pac_delta": self._pac_delta,
        }

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume: settings and every bought label (strict-JSON values;
        :meth:`to_json` writes it)."""
        sess = self._session
        return {
            "config": self._config(),
            "labeled_indices": [int(i) for i in self._indices],
            "labels": [_plain(v) for v in self._labels],
            "pilot_size": 0 if sess is None else int(sess.pilot_size),
            "phase": "label" if sess is None else sess.phase,
        }

    def to_json(self) -> str:
        """The :meth:`state_dict` as strict JSON (``allow_nan=False``; ``±inf`` encoded)."""
        return dumps_state(self.state_dict())

    def load_json(self, text: str) -> LabelBudgetCalibrator:
        """:meth:`load_state_dict` from :meth:`to_json` output.

        Raises:
            StateFileError: (a ``ValueError``) when the text is truncated or not a
                ``LabelBudgetCalibrator`` state.
        """
        return self.load_state_dict(loads_state_text(text, _WHAT, caller="load_json"))

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_json` to ``path`` (resume with :meth:`load`)."""
        return save_state_file(path, self.to_json())

    def load(self, path: str | os.PathLike[str]) -> LabelBudgetCalibrator:
        """:meth:`load_state_dict` from a file written by :meth:`save`.

        Raises:
            StateFileError: (a ``ValueError``) naming the file when it is truncated, not JSON or
                the state of something else.
        """
        return load_state_file(path, _WHAT, self.load_state_dict)

    def load_state_dict(self, state: dict[str, Any]) -> LabelBudgetCalibrator:
        """Restore bought labels from :meth:`state_dict`; the next :meth:`conformalize` resumes.

        Raises:
            ValueError: naming the field, when the state was saved with other settings (a
                changed ``n_future`` or ``rule`` would silently change the stopping decision).
        """
        _check_state_keys(state)
        check_same_config(state["config"], self._config(), owner="LabelBudgetCalibrator")
        idx = [int(i) for i in state["labeled_indices"]]
        labels = list(state["labels"])
        if len(idx) != len(labels):
            raise ValueError(
                f"state must hold as many labels as indices, got {len(labels)} and {len(idx)}"
            )
        self._indices, self._labels = idx, labels
        self._session = None
        return self

    # -- the loop ---------------------------------------------------------------------------
    def conformalize(self, unlabeled: Any, oracle: Callable[[int], Any]) -> LabelBudgetCalibrator:
        """Label items of ``unlabeled`` with ``oracle`` until the rule stops; returns ``self``.

        Args:
            unlabeled: the inputs, any iterable (an array, a list, a generator: it is read once
                and kept); its length is the stream length, and it is also the unlabeled sample
                that prices set sizes.
            oracle: ``oracle(i) -> label`` for item ``i`` (an index into ``unlabeled``).

        Returns:
            ``self``, with the :class:`CalibrationResult` in ``result_`` (and
            :meth:`predict_set` / :meth:`predict_interval` ready). Labels already held (from an
            interrupted run or :meth:`load_state_dict`) are reused, never bought twice. If
            ``oracle`` raises, the labels bought before are kept: :meth:`state_dict` then
            resumes the session.
        """
        self.result_ = self._label(unlabeled, oracle)
        return self

    def run(self, unlabeled: Any, oracle: Callable[[int], Any]) -> CalibrationResult:
        """Deprecated (costly-cp 0.1.0's verb): ``conformalize(unlabeled, oracle).result_``."""
        warnings.warn(
            "LabelBudgetCalibrator.run is deprecated and will be removed in costly-cp 0.2: use "
            "conformalize(unlabeled, oracle).result_",
            DeprecationWarning,
            stacklevel=2,
        )
        return self._label(unlabeled, oracle)

    def _fitted(self) -> CalibrationResult:
        if self.result_ is None:
            raise ValueError(
                "this LabelBudgetCalibrator is not conformalized yet: call conformalize() first"
            )
        return self.result_

    def predict_set(self, scores: ArrayLike) -> NDArray[np.bool_]:
        """Prediction sets ``{y : s(x, y) <= q̂}`` from a ``(n, K)`` per-label score matrix."""
        res = self._fitted()
        K = getattr(self, "_n_classes", None)
        S = check_finite_array(scores, "scores", ndim=2)
        if K is None:
            raise ValueError(
                "predict_set needs per-label scores: this calibrator was conformalized on "
                "IntervalScores (a regression task), use predict_interval"
            )
        if S.shape[1] != K:
            raise ValueError(
                f"scores must have {K} columns (the labels it was conformalized on), got shape "
                f"{S.shape}"
            )
        return res.predict_set(S)

    def predict_interval(
        self, lower: ArrayLike, upper: ArrayLike | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Intervals ``[lo - q̂, hi + q̂]`` from base bounds (``upper=None``: ``lo = hi = μ̂``)."""
        return self._fitted().predict_interval(lower, upper)

    def _label(self, unlabeled: Any, oracle: Callable[[int], Any]) -> CalibrationResult:
        if not callable(oracle):
            raise TypeError(f"oracle must be callable, got {type(oracle).__name__}")
        unlabeled = _materialize(unlabeled)
        n_items = len(unlabeled)
        if n_items == 0:
            raise ValueError("unlabeled must not be empty, got 0 items")
        curve, label_score = self._task(unlabeled)
        order = np.arange(n_items)
        if self.shuffle:
            order = np.random.default_rng(self.seed).permutation(n_items)
        limit = n_items if self.max_labels is None else min(n_items, self.max_labels)
        sess = _Session(
            alpha=self.alpha,
            n_future=self.n_future,
            curve=curve,
            limit=limit,
            rule=self.rule,
            min_labels=self.min_labels,
            growth=self.growth,
            pilot_fraction=self.pilot_fraction,
            bandwidth=self.bandwidth,
            pac_delta=self._pac_delta,
            stream_len=n_items,
        )
        held = len(self._indices)
        if held and not np.array_equal(np.asarray(self._indices[:held]), order[:held]):
            raise ValueError(
                "labeled_indices must be the first items of the labelling order (same shuffle and seed)"
            )
        # Replay the held labels through the same decisions: the session is deterministic given
        # the scores, so the phase (pilot / calibration) and the trace match an unbroken run.
        for i, y in zip(self._indices, self._labels):
            if not sess.needs_label():
                break
            sess.add(label_score(i, y))
        self._session = sess
        position = len(self._indices)
        while sess.needs_label():
            if position >= n_items:  # pragma: no cover - needs_label stops at the limit
                break
            i = int(order[position])
            y = self._check_label(oracle(i), i)
            score = label_score(i, y)
            self._indices.append(i)
            self._labels.append(y)
            sess.add(score)
            position += 1
        return self._result(sess)

    def _task(self, unlabeled: Any) -> tuple[SetSizeCurve, Callable[[int, Any], float]]:
        if isinstance(self.score_fn, IntervalScores):
            lo, hi = self.score_fn.bounds(unlabeled)
            if self._size_kind != "count":
                raise ValueError("PAC labeling needs per-label scores, got IntervalScores")
            curve = SetSizeCurve.from_intervals(lo, hi)
            self._n_classes = None

            def interval_score(i: int, y: Any) -> float:
                return float(max(lo[i] - y, y - hi[i]))

            return curve, interval_score
        S = check_finite_array(self.score_fn(unlabeled), "score_fn(unlabeled)", ndim=2)
        if S.shape[0] != len(unlabeled):
            raise ValueError(
                f"score_fn(unlabeled) must have {len(unlabeled)} rows, got shape {S.shape}"
            )
        self._n_classes = S.shape[1]
        curve = SetSizeCurve.from_scores(S, size=self._size_kind)

        def label_score(i: int, y: Any) -> float:
            return float(S[i, y])

        return curve, label_score

    def _check_label(self, y: Any, i: int) -> Any:
        K = self._n_classes
        if K is None:
            if (
                isinstance(y, bool)
                or not isinstance(y, numbers.Real)
                or not math.isfinite(float(y))
            ):
                raise ValueError(f"oracle({i}) must return a finite real label, got {y!r}")
            return float(y)
        if isinstance(y, bool | np.bool_):
            raise ValueError(f"oracle({i}) must return an integer label in [0, {K - 1}], got {y!r}")
        if not isinstance(y, numbers.Integral):
            if isinstance(y, numbers.Real) and math.isfinite(float(y)) and float(y).is_integer():
                y = int(y)
            else:
                raise ValueError(
                    f"oracle({i}) must return an integer label in [0, {K - 1}], got {y!r}"
                )
        if not 0 <= int(y) < K:
            raise ValueError(f"oracle({i}) must return an integer label in [0, {K - 1}], got {y!r}")
        return int(y)

    def _result(self, sess: _Session) -> CalibrationResult:
        cal = sess.calibration_scores()
        q = sess.threshold()
        if not math.isfinite(q):
            why = (
                f"the stream ran out after {len(sess.scores)} labels"
                if sess.stopped_by == "exhausted"
                else f"the budget max_labels={self.max_labels} was reached"
                if sess.stopped_by == "budget"
                else "the rule stopped"
            )
            warnings.warn(
                f"the threshold is +inf (every prediction set is the full label set / every "
                f"interval infinite): {why}, and {cal.size} calibration scores are too few for "
                f"a finite conformal threshold at confidence_level={self.confidence_level:g} "
                f"(split conformal needs at least {math.ceil((1 - self.alpha) / self.alpha)}). Give a "
                "longer "
                "stream or a larger max_labels",
                StreamExhaustedWarning if sess.stopped_by == "exhausted" else UserWarning,
                stacklevel=4,
            )
        elif sess.stopped_by == "exhausted":
            warnings.warn(
                f"the unlabeled stream ran out after {len(sess.scores)} labels, before the "
                f"stopping rule={self.rule!r} decided to stop: the threshold is the split-"
                f"conformal one of the {cal.size} calibration scores at hand (valid, but not "
                "the cost-balanced size). result_.stopped_by is 'exhausted'; give a longer "
                "stream to let the rule decide",
                StreamExhaustedWarning,
                stacklevel=4,
            )
        model = sess.model
        m = int(cal.size)
        bought = len(sess.scores)
        if model is not None and math.isfinite(q):
            cost = float(bought + model.future_count(m) * model.expected_size(m))
        elif math.isfinite(q):
            cost = float(bought + self.n_future * sess.curve(np.array([q]))[0])
        else:
            cost = (
                math.inf
                if not math.isfinite(sess.curve.full_size)
                else float(bought + self.n_future * sess.curve.full_size)
            )
        guarantee = "finite-sample" if self.rule == "split" else "none"
        return CalibrationResult(
            m=m,
            threshold=q,
            cost_estimate=cost,
            trace=sess.trace,
            labels_bought=bought,
            stopped_by=sess.stopped_by,
            guarantee=guarantee,
            model=model,
            labeled_indices=np.asarray(self._indices, dtype=np.int64),
            labels=np.asarray(self._labels),
            calibration_scores=cal,
        )


_WHAT = "a costly-cp LabelBudgetCalibrator state"
_STATE_KEYS = frozenset({"config", "labeled_indices", "labels"})


def _check_state_keys(state: Any) -> None:
    check_state_keys(state, _STATE_KEYS, _WHAT)


def _materialize(unlabeled: Any) -> Any:
    """Sized inputs pass through; any other iterable (a generator) is read once into an array
    (or a list, for non-numeric items)."""
    if hasattr(unlabeled, "__len__") and hasattr(unlabeled, "__getitem__"):
        return unlabeled
    if not isinstance(unlabeled, Iterable):
        raise TypeError(f"unlabeled must be an iterable of inputs, got {type(unlabeled).__name__}")
    items = list(unlabeled)
    try:
        arr = np.asarray(items)
    except (TypeError, ValueError):  # ragged items
        return items
    return items if arr.dtype == object else arr


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
