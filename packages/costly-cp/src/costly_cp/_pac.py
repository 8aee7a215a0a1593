"""The reduction of probably-approximately-correct (PAC) labeling to costly calibration.

PAC labeling (Candès, Ilyas, Zrnic 2025) must return a label for every point of a pool such that
the fraction of wrong labels is at most ``ε`` with probability at least ``1 - α``, while paying an
expert as rarely as possible. Conformal reduction: calibrate a threshold ``q̂`` on expert labels;
a point whose set ``T(x) = {y : s(x, y) <= q̂}`` is a single label is auto-labelled with it, any
other point goes to the expert. An auto-label is wrong only when ``y ∉ T(x)``, so it suffices
that at most ``⌊ε n⌋`` of the ``n`` unlabelled points miss their set. With ``U = F(q̂) ~
Beta(k, m + 1 - k)`` the miss count is ``BetaBinomial(n, m + 1 - k, k)``; :func:`pac_rank`
picks the smallest ``k`` whose tail at ``⌊ε n⌋`` is ``<= α`` (exact, finite-pool).

The expert cost is ``C(m) = m + (n_pool - m) · P(|T_m(X)| != 1)`` — the costly-calibration
cost with ``|T|`` replaced by ``1{|T| != 1}`` and ``N`` the pool — so the same stopping rule
decides how many calibration labels to buy.

References:
    Candès, Ilyas, Zrnic (2025), "Probably approximately correct labels".
    Ilyas, Ko, Tang, Wu, Zhang (2026), "Provably Label-Efficient Conformal Prediction"
    (reconstructed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_alpha, check_finite_array

from ._calibrator import CalibrationResult, LabelBudgetCalibrator

__all__ = ["PACResult", "pac_label"]


@dataclass(frozen=True)
class PACResult:
    """Labels for a whole pool and who produced them.

    Attributes:
        labels: ``(n,)`` integer labels (expert or automatic).
        expert: ``(n,)`` boolean, True where the expert (oracle) labelled the point.
        n_expert: number of expert labels (calibration + pilot + uncertain points).
        threshold: the PAC conformal threshold ``q̂`` (``+inf``: everything to the expert).
        calibration: the :class:`CalibrationResult` of the calibration phase.
    """

    labels: NDArray[np.int64]
    expert: NDArray[np.bool_]
    n_expert: int
    threshold: float
    calibration: CalibrationResult


def pac_label(
    pool: Any,
    oracle: Callable[[int], Any],
    eps: float = 0.05,
    alpha: float = 0.05,
    *,
    score_fn: Callable[[Any], ArrayLike],
    rule: str = "plugin",
    shuffle: bool = True,
    seed: int = 0,
    **calibrator_kwargs: Any,
) -> PACResult:
    """Label a pool with at most an ``ε`` fraction of errors (w.p. ``1 - α``) and few expert calls.

    Args:
        pool: the ``n`` inputs to label.
        oracle: the expert, ``oracle(i) -> label`` for pool item ``i``.
        eps: tolerated fraction of wrong labels, in (0, 1).
        alpha: failure probability of the PAC guarantee, in (0, 1).
        score_fn: ``score_fn(pool) -> (n, K)`` per-label nonconformity scores.
        rule: stopping rule of the calibration phase (``"plugin"`` or ``"split"``; only
            ``"split"`` keeps the guarantee exact after the data-dependent stop).
        shuffle: draw calibration points in a random order (they must be a random sample).
        seed: seed of that order.
        **calibrator_kwargs: passed to :class:`LabelBudgetCalibrator`.

    Returns:
        A :class:`PACResult`.
    """
    eps = check_alpha(eps, "eps")
    alpha = check_alpha(alpha, "alpha")
    cal = LabelBudgetCalibrator(
        score_fn,
        confidence_level=1.0 - eps,
        n_future=len(pool),
        rule=rule,
        shuffle=shuffle,
        seed=seed,
        **calibrator_kwargs,
    )
    cal.alpha, cal.confidence_level = eps, 1.0 - eps  # the PAC miss rate, exactly as given
    cal._pac_delta = alpha
    cal._size_kind = "not_singleton"
    res = cal.conformalize(pool, oracle).result_
    S = check_finite_array(score_fn(pool), "score_fn(pool)", ndim=2)
    n = S.shape[0]
    labels = np.full(n, -1, dtype=np.int64)
    expert = np.zeros(n, dtype=bool)
    labels[res.labeled_indices] = res.labels.astype(np.int64)
    expert[res.labeled_indices] = True
    sets = res.threshold >= S
    single = sets.sum(axis=1) == 1
    auto = single & ~expert
    labels[auto] = np.argmax(sets[auto], axis=1)
    for i in np.flatnonzero(~expert & ~auto):
        labels[i] = cal._check_label(oracle(int(i)), int(i))
        expert[i] = True
    return PACResult(
        labels=labels,
        expert=expert,
        n_expert=int(expert.sum()),
        threshold=res.threshold,
        calibration=res,
    )
