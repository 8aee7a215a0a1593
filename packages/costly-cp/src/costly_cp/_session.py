"""The labelling session as a small state machine over calibration scores.

:class:`LabelBudgetCalibrator` wraps it with inputs and an oracle; the simulations of
``reproduce`` feed it scores directly, so both run the same decisions.

Two rules:

* ``"plugin"`` (direct rule): after each label, stop when the current size minimises the
  estimated cost curve fitted to *all* labels so far. Its coverage after the data-dependent stop
  carries no proof and is measured.
* ``"split"`` (provably valid): a pilot phase runs the same estimator on pilot labels only, and
  stops once the pilot holds ``pilot_fraction`` of the estimated best size ``m̂`` (or half of
  the label limit). Then ``max(m̂, floor)`` *fresh* labels are bought (``floor`` =
  ``min_labels``, by default ``max(⌈4/α⌉, m_finite + 1)``) and the threshold uses only them.
  Conditionally on the pilot, the fresh scores are i.i.d. and exchangeable with a test point,
  so split-CP's ``P(Y ∈ T) >= 1 - α`` holds exactly. Its cost: the pilot labels do not
  calibrate (about ``pilot_fraction · m̂`` extra labels), measured in ``reproduce``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._cost import (
    CostModel,
    _optimal_size,
    _pac_table,
    default_min_labels,
    fit_cost_model,
    min_finite_size,
)
from ._scores import SetSizeCurve, conformal_rank, pac_rank

RULES = ("plugin", "split")


@dataclass
class Trace:
    """Checkpoints of a session: where the cost curve was refitted and what it said.

    Attributes:
        n: labels held at each refit (pilot labels for ``split``).
        target: the estimated best calibration size then.
        cost_now: estimated cost of stopping then.
        cost_target: estimated cost at ``target``.
        e_inf: estimated ``E|T_∞|``.
    """

    n: list[int] = field(default_factory=list)
    target: list[int] = field(default_factory=list)
    cost_now: list[float] = field(default_factory=list)
    cost_target: list[float] = field(default_factory=list)
    e_inf: list[float] = field(default_factory=list)

    def as_arrays(self) -> dict[str, NDArray[Any]]:
        """The trace as numpy arrays."""
        return {k: np.asarray(v) for k, v in self.__dict__.items()}


@dataclass
class _Session:
    """All state of one labelling session (plain data, so it round-trips through a dict)."""

    alpha: float
    n_future: float
    curve: SetSizeCurve
    limit: int
    rule: str = "plugin"
    min_labels: int | None = None
    growth: float = 0.05
    pilot_fraction: float = 0.3
    bandwidth: float = 0.5
    pac_delta: float | None = None
    stream_len: int = 0
    scores: list[float] = field(default_factory=list)
    phase: str = "label"  # "label" (plugin / pilot), "calibrate" (split), "done"
    pilot_size: int = 0
    target: int = 0
    next_check: int = 0
    stopped_by: str = ""
    model: CostModel | None = None
    trace: Trace = field(default_factory=Trace)
    _sorted: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))

    def __post_init__(self) -> None:
        if self.pac_delta is None:
            self.m_finite = min_finite_size(self.alpha)
            floor = default_min_labels(self.alpha)
        else:
            self.m_finite = _pac_min_size(self.alpha, self.pac_delta, int(self.n_future))
            floor = max(math.ceil(4.0 / self.alpha - 1e-9), self.m_finite + 1)
        self.floor = floor if self.min_labels is None else max(int(self.min_labels), 3)

    # -- decisions -------------------------------------------------------------------------
    def needs_label(self) -> bool:
        """Decide at the current count whether another label is needed (updates the state)."""
        if self.phase == "done":
            return False
        n = len(self.scores)
        if n >= self.limit:
            return self._finish("exhausted" if self.limit >= self.stream_len else "budget")
        if self.phase == "calibrate":
            if n - self.pilot_size >= self.target:
                return self._finish("rule")
            return True
        # plugin, or the pilot of split
        if n < self.floor:
            return True
        if self.model is None or n >= self.next_check:
            self._refit(n)
        if self.rule == "plugin":
            if n >= self.target:
                return self._finish("rule")
            return True
        pilot_cap = max(self.floor, self.limit // 2)
        if n >= self.pilot_fraction * self.target or n >= pilot_cap:
            self.pilot_size = n
            room = self.limit - n
            # the fresh calibration set is never smaller than the stopping floor: its size is
            # a function of the pilot only, so the exact guarantee is untouched, and it avoids
            # the near-minimal sets (m = 9 at α = 0.1) whose realised coverage is very spread
            self.target = int(min(max(self.target, self.floor, self.m_finite), room))
            self.phase = "calibrate"
            return self.needs_label()
        return True

    def _refit(self, n: int) -> None:
        self._sorted = np.sort(np.asarray(self.scores, dtype=np.float64), kind="stable")
        u0 = 1.0 - self.alpha
        if self.rule == "plugin":
            model = fit_cost_model(
                self._sorted,
                self.curve,
                u0=u0,
                n_future=self.n_future,
                alpha=self.alpha,
                pac_delta=self.pac_delta,
                bandwidth=self.bandwidth,
            )
            target = _optimal_size(model, n, self._search_cap(self.limit))
            now = float(model.cost(n))
        else:
            model = fit_cost_model(
                self._sorted,
                self.curve,
                u0=u0,
                n_future=self.n_future,
                alpha=self.alpha,
                pac_delta=self.pac_delta,
                sunk=n,
                bandwidth=self.bandwidth,
            )
            room = max(self.limit - n, self.m_finite)
            target = _optimal_size(model, self.m_finite, self._search_cap(room))
            now = math.nan
        self.model = model
        self.target = int(target)
        self.next_check = max(n + 1, math.ceil(n * (1.0 + self.growth)))
        self.trace.n.append(n)
        self.trace.target.append(self.target)
        self.trace.cost_now.append(now)
        self.trace.cost_target.append(float(model.cost(target)))
        self.trace.e_inf.append(model.a0)

    def _search_cap(self, reachable: int) -> int:
        """Sizes the rule may aim at: beyond the stream too (then the stream ends first and the
        session is flagged ``exhausted``/``budget``), except for PAC, whose pool is the cap."""
        return reachable if self.pac_delta is not None else max(reachable, 10**7)

    def _finish(self, reason: str) -> bool:
        self.phase = "done"
        self.stopped_by = reason
        return False

    def add(self, score: float) -> None:
        """Record one bought label's calibration score."""
        self.scores.append(float(score))

    # -- outputs ---------------------------------------------------------------------------
    def calibration_scores(self) -> NDArray[np.float64]:
        """Scores the threshold uses: all labels (plugin) or the fresh ones (split)."""
        s = np.asarray(self.scores, dtype=np.float64)
        if self.rule == "split" and self.pilot_size > 0:
            return s[self.pilot_size :]
        return s

    def threshold(self) -> float:
        """The conformal threshold of the calibration scores (``+inf`` for too few)."""
        cal = self.calibration_scores()
        m = cal.size
        if self.pac_delta is None:
            k = conformal_rank(m, self.alpha)
        else:
            n_target = max(int(self.n_future) - len(self.scores), 1)
            k = pac_rank(m, self.alpha, self.pac_delta, n_target) if m > 0 else 1
        if k > m:
            return math.inf
        return float(np.partition(cal, k - 1)[k - 1])


def _pac_min_size(eps: float, delta: float, n_pool: int) -> int:
    """Smallest calibration size with a finite PAC threshold for a pool of ``n_pool``."""
    ks = _pac_table(eps, delta, n_pool)
    ok = np.flatnonzero(ks <= np.arange(ks.size))
    return int(ok[0]) if ok.size else n_pool
