r"""Side-by-side comparison of online methods on one score stream, with standard errors.

Protocol (the one of Bhatnagar et al. 2023): the first ``n_calibration`` scores
are a warm-up. Salesforce ``online-conformal`` gets them as calibration residuals; our methods run
through them online (they have no separate calibration step). Every method is then scored on the
same remaining rounds: coverage :math:`1 - \frac1n\sum 1\{s_t > q_t\}` and mean width
:math:`2\bar q_t` (the interval is :math:`\hat y \pm q_t`). Standard errors are batch means over 20
consecutive blocks (the scores are serially dependent, so the i.i.d. formula would be too small).
A threshold of :math:`+\infty` is never averaged: its share is reported as ``inf_frac`` and the
width is the mean over the finite rounds.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_alpha, check_finite_array, check_positive_int
from icml26_shared.conformal import split_quantile

from ._estimator import make_algorithm
from ._peers import online_conformal_thresholds
from ._protocol import run_algorithm

__all__ = ["compare_methods", "interval_summary", "online_conformal_available"]

N_BLOCKS = 20


def online_conformal_available() -> bool:
    """Whether Salesforce ``online-conformal`` (and Merlion under it) can be imported."""
    if importlib.util.find_spec("online_conformal") is None:
        return False
    try:
        importlib.import_module("online_conformal.saocp")
    except ImportError:
        return False
    return True


def interval_summary(scores: ArrayLike, q: ArrayLike) -> dict[str, float]:
    """Coverage and mean width (``2 q``) of thresholds ``q`` on ``scores``, with batch-means s.e.

    Returns:
        ``coverage``, ``coverage_se``, ``width``, ``width_se`` (over finite thresholds) and
        ``inf_frac`` (share of ``+inf`` thresholds).
    """
    s = check_finite_array(scores, "scores", ndim=1)
    q_ = check_finite_array(q, "q", ndim=1, allow_inf=True)
    if s.shape != q_.shape:
        raise ValueError(f"scores and q must have the same length, got {s.size} and {q_.size}")
    if s.size < N_BLOCKS:
        raise ValueError(f"scores must have at least {N_BLOCKS} rounds, got {s.size}")
    cover = (s <= q_).astype(np.float64)
    inf = np.isposinf(q_)
    width = np.where(inf, np.nan, 2.0 * np.maximum(q_, 0.0))
    n = s.size // N_BLOCKS
    with np.errstate(invalid="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            cb = cover[: n * N_BLOCKS].reshape(N_BLOCKS, n).mean(1)
            wb = np.nanmean(width[: n * N_BLOCKS].reshape(N_BLOCKS, n), 1)
    root = np.sqrt(N_BLOCKS)
    return {
        "coverage": float(cover.mean()),
        "coverage_se": float(cb.std(ddof=1) / root),
        "width": float(np.nanmean(width)) if (~inf).any() else float("nan"),
        "width_se": float(np.nanstd(wb, ddof=1) / root),
        "inf_frac": float(inf.mean()),
    }


def _ours(method: str, s: NDArray, alpha: float, n: int, **params: Any) -> NDArray:
    q, _ = run_algorithm(make_algorithm(method, alpha, **params), s)
    return q[n:]


#: display label of each row id of :func:`compare_by_id` (the keys :func:`compare_methods` returns)
COMPARE_LABELS: dict[str, str] = {
    "up-ocp": "UP-OCP (ours, ε=1)",
    "dtaci": "DtACI/FACI (ours)",
    "saocp": "SAOCP (ours)",
    "sf-ogd": "SF-OGD (ours)",
    "up-eps-cal": "UP-OCP variant: ε = 100·q̂_cal",
    "up-q0-cal": "UP-OCP variant: q̂0 = q̂_cal",
    "up-beta-prior": "UP-OCP variant: Beta(α, 1−α) prior",
    "oc-faci": "FACI (online-conformal)",
    "oc-saocp": "SAOCP (online-conformal)",
    "oc-sf-ogd": "SF-OGD (online-conformal)",
    "dtaci-matched": "DtACI/FACI (ours) at UP-OCP's realised miss",
    "oc-faci-matched": "FACI (online-conformal) at UP-OCP's realised miss",
}


def compare_by_id(
    scores: ArrayLike,
    alpha: float = 0.1,
    n_calibration: int = 50,
    *,
    peers: bool = True,
    variants: bool = True,
) -> dict[str, dict[str, float]]:
    """:func:`compare_methods` with rows keyed by short ids (labels in :data:`COMPARE_LABELS`)."""
    a = check_alpha(alpha)
    s = check_finite_array(scores, "scores", ndim=1)
    n = check_positive_int(n_calibration, "n_calibration")
    if s.size < n + N_BLOCKS:
        raise ValueError(f"scores must have at least n_calibration + {N_BLOCKS} rounds")
    test = s[n:]
    runs: dict[str, NDArray] = {
        "up-ocp": _ours("up", s, a, n, eps=1.0),
        "dtaci": _ours("dtaci", s, a, n),
        "saocp": _ours("saocp", s, a, n),
        "sf-ogd": _ours("sf_ogd", s, a, n),
    }
    if variants:
        q_cal = float(split_quantile(s[:n], a))
        q_cal = q_cal if np.isfinite(q_cal) and q_cal > 0 else float(np.max(s[:n]) or 1.0)
        runs["up-eps-cal"] = _ours("up", s, a, n, eps=100.0 * q_cal)
        runs["up-q0-cal"] = _ours("up", s, a, n, q0=q_cal)
        runs["up-beta-prior"] = _ours("up", s, a, n, prior=(a, 1.0 - a))
    if peers:
        for key in ("faci", "saocp", "sf_ogd"):
            runs[f"oc-{key.replace('_', '-')}"] = online_conformal_thresholds(key, s, a, n)
    a_up = float((test > runs["up-ocp"]).mean())
    a_up = min(max(a_up, 1e-3), 0.999)
    runs["dtaci-matched"] = _ours("dtaci", s, a_up, n)
    if peers:
        runs["oc-faci-matched"] = online_conformal_thresholds("faci", s, a_up, n)
    return {row: interval_summary(test, q) for row, q in runs.items()}


def compare_methods(
    scores: ArrayLike,
    alpha: float = 0.1,
    n_calibration: int = 50,
    *,
    peers: bool = True,
    variants: bool = True,
) -> dict[str, dict[str, float]]:
    r"""UP-OCP, our FACI-type DtACI, SAOCP and SF-OGD, and Salesforce's FACI, SAOCP and SF-OGD on
    one stream, scored on the same rounds (see the module docstring for the protocol).

    Rows ``"... at UP-OCP's realised miss"`` rerun DtACI (ours and, with ``peers``, their FACI) at
    the miscoverage UP-OCP actually attained, so widths can be compared at equal coverage. With
    ``variants`` the UP-OCP variants of the README's diagnosis are added (ours, not the paper's):
    wealth :math:`\varepsilon = 100\hat q_{\rm cal}`, offset :math:`\hat q_0 = \hat q_{\rm cal}`,
    and the Beta(α, 1−α) prior, with :math:`\hat q_{\rm cal}` the split-conformal quantile of the
    calibration scores (chosen from the warm-up only, never from the scored rounds).

    Args:
        scores: 1-D finite non-negative scores.
        alpha: target miscoverage.
        n_calibration: warm-up rounds (not scored).
        peers: include Salesforce ``online-conformal`` (raises ImportError when it is absent).
        variants: include the UP-OCP variants.

    Returns:
        ``{row name: interval_summary(...)}``.
    """
    rows = compare_by_id(scores, alpha, n_calibration, peers=peers, variants=variants)
    return {COMPARE_LABELS[row]: summary for row, summary in rows.items()}
