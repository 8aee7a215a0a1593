r"""The online conformal baselines, each an ``(init, update)`` pair like UP-OCP.

Every method announces a threshold :math:`q_t`, sees :math:`s_t`, and learns from
:math:`\mathrm{err}_t = 1\{s_t > q_t\}` (pinball subgradient :math:`g_t = \alpha - \mathrm{err}_t`).

* :func:`aci` — adaptive conformal inference (Gibbs & Candès 2021) on the level scale:
  :math:`\alpha_{t+1} = \alpha_t + \gamma(\alpha - \mathrm{err}_t)`,
  :math:`q_t = \hat Q_{1-\alpha_t}` of a reference set (trailing window of the stream's own
  scores, or a fixed calibration set as in MAPIE's ``TimeSeriesRegressor(method="aci")``).
* :func:`dtaci` — dynamically-tuned ACI (Gibbs & Candès 2024): exponential weights over ACI experts
  with a grid of γ.
* :func:`quantile_tracking` — online gradient descent on the pinball loss (Angelopoulos, Candès,
  Tibshirani 2023): :math:`q_{t+1} = q_t + \eta\hat\sigma_t(\mathrm{err}_t - \alpha)`, the step
  relative to the running mean score (or a fixed score scale).
* :func:`conformal_pid` — quantile tracking with a step proportional to the recent score range plus
  the saturating error integrator :math:`r_t(x) = K_I \tan(x\log t/(t C_{\mathrm{sat}}))` (same
  paper;
  no scorecaster).
* :func:`sf_ogd` — scale-free OGD (Bhatnagar et al. 2023):
  :math:`q_{t+1} = q_t - D g_t/\sqrt{3\sum_{s\le t} g_s^2}`, D the largest score seen.
* :func:`decaying_ogd` — OGD with :math:`\eta_t = \eta B_t t^{-1/2-\epsilon}` (Angelopoulos, Barber,
  Bates 2024), :math:`B_t` the largest score seen.
* :func:`kt_aci` — Krichevsky–Trofimov coin betting directly on the threshold (Podkopaev, Xu, Lee
  2024): :math:`q_t = \hat q_0 + \beta_t W_{t-1}`, :math:`\beta_t = \frac1t\sum_{s<t} c_s`, coin
  :math:`c_t = \mathrm{err}_t - \alpha`. UP-OCP differs by the horse-race geometry of its fraction.

The strongly adaptive SAOCP lives in ``_saocp.py``.

References:
    I. Gibbs, E. Candès. "Adaptive conformal inference under distribution shift." NeurIPS 2021.
    I. Gibbs, E. Candès. "Conformal inference for online prediction with arbitrary distribution
    shifts." JMLR 2024.
    A. Angelopoulos, E. Candès, R. Tibshirani. "Conformal PID control for time series
    prediction." NeurIPS 2023.
    A. Bhatnagar, H. Wang, C. Xiong, Y. Bai. "Improved online conformal prediction via strongly
    adaptive online learning." ICML 2023.
    A. Angelopoulos, R. Barber, S. Bates. "Online conformal prediction with decaying step sizes."
    ICML 2024.
    A. Podkopaev, D. Xu, K. Lee. "Adaptive conformal inference by betting." ICML 2024.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import (
    check_alpha,
    check_finite_array,
    check_in_interval,
    check_positive,
    check_positive_int,
)
from icml26_shared.conformal import split_quantile

from ._protocol import OnlineAlgorithm, as_batch_shape, check_score_step

__all__ = [
    "DEFAULT_DTACI_GAMMAS",
    "aci",
    "conformal_pid",
    "decaying_ogd",
    "dtaci",
    "kt_aci",
    "quantile_tracking",
    "sf_ogd",
]

DEFAULT_DTACI_GAMMAS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128)


# ---------------------------------------------------------------- reference sets (ring buffer)


class Window(NamedTuple):
    """Trailing window of past scores (ring buffer); ``fixed`` marks a calibration set."""

    buf: NDArray[np.float64]  # (*batch, w)
    n: NDArray[np.int64]  # filled entries (0-d)
    pos: NDArray[np.int64]  # next slot to write (0-d)
    fixed: NDArray[np.bool_]  # never updated (calibration set)


def _window_init(shape: tuple[int, ...], window: int, calibration: NDArray | None) -> Window:
    if calibration is not None:
        buf = np.broadcast_to(calibration, (*shape, calibration.shape[-1])).copy()
        n = calibration.shape[-1]
        return Window(buf, np.asarray(n), np.asarray(0), np.asarray(True))
    return Window(np.zeros((*shape, window)), np.asarray(0), np.asarray(0), np.asarray(False))


def _window_push(win: Window, s: NDArray) -> Window:
    if bool(win.fixed):
        return win
    buf = win.buf.copy()
    w = buf.shape[-1]
    buf[..., int(win.pos)] = s
    return Window(
        buf, np.asarray(min(int(win.n) + 1, w)), np.asarray((int(win.pos) + 1) % w), win.fixed
    )


def _window_scores(win: Window) -> NDArray:
    """The filled part of the reference window, in storage order (``(*batch, n)``)."""
    return win.buf[..., : int(win.n)]


def _level_quantile(ref: NDArray, level_alpha: ArrayLike) -> NDArray[np.float64]:
    r"""ACI's quantile :math:`\hat Q_{1-a}` of a reference set at a drifting level :math:`a`.

    Inside (0, 1) this is :func:`icml26_shared.conformal.split_quantile` (the
    :math:`\lceil (1-a)(n+1)\rceil`-th smallest score, ``+inf`` when that rank exceeds n). ACI's
    level leaves (0, 1) under long runs of misses or covers; its update defines the ends:
    ``+inf`` for :math:`a \le 0`, the smallest score for :math:`a = 1` and ``-inf`` (the empty
    set) for :math:`a > 1`.

    Args:
        ref: ``(*batch, n)`` reference scores in any order.
        level_alpha: :math:`a`, broadcastable against ``batch`` (e.g. ``(G, *batch)``).
    """
    a = np.asarray(level_alpha, dtype=np.float64)
    inside = (a > 0.0) & (a < 1.0)
    q = split_quantile(ref, np.where(inside, a, 0.5), axis=-1)
    q = np.asarray(q, dtype=np.float64)
    n = ref.shape[-1]
    smallest = np.min(ref, axis=-1) if n else np.full(ref.shape[:-1], np.inf)
    q = np.where(a <= 0.0, np.inf, q)
    q = np.where(a == 1.0, smallest, q)
    return np.where(a > 1.0, -np.inf, q)


# ---------------------------------------------------------------- ACI


class ACIState(NamedTuple):
    """ACI state: the current level ``alpha_t`` (may carry a leading γ-grid axis)."""

    q: NDArray[np.float64]
    alpha_t: NDArray[np.float64]
    window: Window


def aci(
    alpha: float = 0.1,
    gamma: float | ArrayLike = 0.005,
    *,
    window: int = 1000,
    calibration: ArrayLike | None = None,
    clip: bool = False,
) -> OnlineAlgorithm:
    r"""Adaptive conformal inference (Gibbs & Candès 2021).

    :math:`q_t = \hat Q_{1-\alpha_t}(\text{reference})` (:func:`icml26_shared.conformal.split_quantile`) and
    :math:`\alpha_{t+1} = \alpha_t + \gamma(\alpha - \mathrm{err}_t)`, clipped to [0, 1] when
    ``clip`` (MAPIE's choice). The reference set is the trailing ``window`` of the stream's own
    scores, or the fixed ``calibration`` scores (MAPIE's ``TimeSeriesRegressor(method="aci")``
    without ``update``).

    Args:
        alpha: target miscoverage.
        gamma: step γ on the level scale; an array of shape ``(G, 1, ..., 1)`` runs a grid of
            steps on the same streams at once (thresholds get the leading axis).
        window: size of the trailing window.
        calibration: fixed reference scores, shape ``(n,)`` or ``(*batch, n)``.
        clip: clip ``alpha_t`` to [0, 1].
    """
    a0 = check_alpha(alpha)
    g = check_finite_array(gamma, "gamma")
    if (g < 0).any():
        raise ValueError(f"gamma must be >= 0, got {g.min()}")
    w = check_positive_int(window, "window")
    cal = (
        None if calibration is None else check_finite_array(calibration, "calibration", ndim=(1, 2))
    )

    def _init(shape: Any = ()) -> ACIState:
        shp = as_batch_shape(shape)
        win = _window_init(shp, w, cal)
        alpha_t = np.broadcast_to(np.float64(a0), np.broadcast_shapes(g.shape, shp)).copy()
        return ACIState(_level_quantile(_window_scores(win), alpha_t), alpha_t, win)

    def _update(state: ACIState, score: ArrayLike) -> tuple[NDArray, ACIState]:
        s = check_score_step(score, state.window.buf.shape[:-1])
        err = s > state.q
        alpha_t = state.alpha_t + g * (a0 - err)
        if clip:
            alpha_t = np.clip(alpha_t, 0.0, 1.0)
        win = _window_push(state.window, s)
        q = _level_quantile(_window_scores(win), alpha_t)
        return q, ACIState(q, alpha_t, win)

    return OnlineAlgorithm("aci", _init, _update)


# ---------------------------------------------------------------- DtACI


class DtACIState(NamedTuple):
    """DtACI state: expert levels and weights, shape ``(*batch, K)``."""

    q: NDArray[np.float64]
    alpha_k: NDArray[np.float64]
    weights: NDArray[np.float64]
    window: Window


def dtaci(
    alpha: float = 0.1,
    gammas: ArrayLike = DEFAULT_DTACI_GAMMAS,
    *,
    window: int = 1000,
    interval: int = 100,
    eta: float | None = None,
    sigma: float | None = None,
    finite: bool = True,
) -> OnlineAlgorithm:
    r"""Dynamically-tuned ACI (Gibbs & Candès 2024, Algorithm 1, deterministic output).

    K ACI experts with steps :math:`\gamma_k` run side by side. With the realised level
    :math:`\beta_t = \sup\{b : s_t \le \hat Q_{1-b}\}` and the pinball loss
    :math:`\ell(\beta, a) = \alpha(\beta - a) - \min(0, \beta - a)`, the weights follow
    :math:`\tilde w_k \propto w_k e^{-\eta\ell(\beta_t, \alpha_t^k)}`,
    :math:`w_k \leftarrow (1-\sigma)\tilde w_k/\sum\tilde w + \sigma/K`; the output level is
    :math:`\alpha_t = \sum_k w_k\alpha_t^k`. Defaults (their paper): :math:`\sigma = 1/(2I)`,
    :math:`\eta = \sqrt{3/I}\sqrt{(\log(KI)+2)/((1-\alpha)^2\alpha^3 + \alpha^2(1-\alpha)^3)}`.

    With ``finite=True`` (default) the output level is clipped to [0, 1] and a level of 0 announces
    the largest score of the reference window instead of :math:`+\infty` (so does a level below
    :math:`1/(n+1)`, where the conformal rank exceeds the window size n), as in their paper's
    experiments (and Salesforce ``online-conformal``'s FACI); the experts' own levels are not
    clipped. The threshold is ``+inf`` only before any score was seen. ``finite=False`` gives the
    raw update (``+inf`` whenever the output level is :math:`\le 0`).
    """
    a0 = check_alpha(alpha)
    if not isinstance(finite, (bool, np.bool_)):
        raise TypeError(f"finite must be a bool, got {type(finite).__name__}")
    gk = check_finite_array(gammas, "gammas", ndim=1)
    if gk.size == 0 or (gk <= 0).any():
        raise ValueError(f"gammas must be a non-empty array of steps > 0, got {gk.tolist()}")
    K = gk.size
    I_ = check_positive_int(interval, "interval")
    w = check_positive_int(window, "window")
    sig = (
        1.0 / (2 * I_)
        if sigma is None
        else check_in_interval(sigma, "sigma", 0, 1, closed=(True, False))
    )
    if eta is None:
        denom = (1 - a0) ** 2 * a0**3 + a0**2 * (1 - a0) ** 3
        eta_ = np.sqrt(3.0 / I_) * np.sqrt((np.log(K * I_) + 2.0) / denom)
    else:
        eta_ = check_positive(eta, "eta")

    def _quantiles(srt: NDArray, alpha_k: NDArray) -> NDArray:
        return _level_quantile(srt[..., None, :], alpha_k)

    def _output(win: Window, level: NDArray) -> NDArray:
        ref = _window_scores(win)
        if not finite:
            return _level_quantile(ref, level)
        level = np.clip(level, 0.0, 1.0)
        q = _level_quantile(ref, level)
        if ref.shape[-1]:  # level 0, or a level below 1/(n+1): the rank exceeds n
            q = np.where(np.isposinf(q), ref.max(axis=-1), q)
        return q

    def _init(shape: Any = ()) -> DtACIState:
        shp = as_batch_shape(shape)
        win = _window_init(shp, w, None)
        alpha_k = np.full((*shp, K), a0)
        weights = np.full((*shp, K), 1.0 / K)
        q = _output(win, (weights * alpha_k).sum(-1))
        return DtACIState(q, alpha_k, weights, win)

    def _update(state: DtACIState, score: ArrayLike) -> tuple[NDArray, DtACIState]:
        s = check_score_step(score, state.q.shape)
        srt = _window_scores(state.window)
        n = srt.shape[-1]
        q_k = _quantiles(srt, state.alpha_k)
        err_k = s[..., None] > q_k
        below = (srt < s[..., None]).sum(-1)
        beta = 1.0 - below / (n + 1.0)
        diff = beta[..., None] - state.alpha_k
        loss = a0 * diff - np.minimum(0.0, diff)
        logw = np.log(state.weights) - eta_ * loss
        wt = np.exp(logw - logw.max(-1, keepdims=True))
        weights = (1.0 - sig) * wt / wt.sum(-1, keepdims=True) + sig / K
        alpha_k = state.alpha_k + gk * (a0 - err_k)
        win = _window_push(state.window, s)
        q = _output(win, (weights * alpha_k).sum(-1))
        return q, DtACIState(q, alpha_k, weights, win)

    return OnlineAlgorithm("dtaci", _init, _update)


# ---------------------------------------------------------------- OGD family


class OGDState(NamedTuple):
    """State of the gradient-descent family (quantile tracking, PID, SF-OGD, decaying OGD)."""

    q: NDArray[np.float64]
    q_p: NDArray[np.float64]  # the proportional (OGD) part
    t: NDArray[np.int64]
    err_sum: NDArray[np.float64]  # Σ (err - α), the PID integrator's argument
    grad_sq: NDArray[np.float64]  # Σ g² (SF-OGD); Σ |s| (quantile tracking's running scale)
    scale: NDArray[np.float64]  # largest score seen (B_t / D)
    window: Window


def _ogd_init(shape: Any, q_init: float, window: int = 1) -> OGDState:
    shp = as_batch_shape(shape)
    q = np.full(shp, float(q_init))
    z = np.zeros(shp)
    return OGDState(
        q, q.copy(), np.asarray(0), z.copy(), z.copy(), z.copy(), _window_init(shp, window, None)
    )


def _running_scale(state: OGDState, s: NDArray) -> NDArray:
    finite = np.where(np.isfinite(s), np.abs(s), 0.0)
    return np.maximum(state.scale, finite)


def quantile_tracking(
    alpha: float = 0.1,
    lr: float | ArrayLike = 0.1,
    q_init: float = 0.0,
    *,
    scale: float | str = "running",
) -> OnlineAlgorithm:
    r"""Quantile tracking (online subgradient descent on the pinball loss):
    :math:`q_{t+1} = q_t + \eta\,\hat\sigma_t(\mathrm{err}_t - \alpha)`.

    The step is ``lr`` = η times a score scale :math:`\hat\sigma_t`, so ``lr`` is relative:

    * ``scale="running"`` (default): :math:`\hat\sigma_t = \frac1t\sum_{u\le t}|s_u|`, the
      running mean of the scores revealed so far (``+inf`` counted as 0). Multiplying every
      score (and ``q_init``) by c > 0 multiplies every threshold by c: the method is
      scale-free, and ``lr=0.1`` moves the threshold by a tenth of a typical score.
    * ``scale=c`` (a number > 0): the fixed step :math:`\eta c` in score units (``scale=1`` is
      the textbook fixed-step tracker). Once a score exceeds ``1000 * lr * c`` (the threshold
      then needs thousands of rounds to get there) a ``UserWarning`` says so, once per
      algorithm."""
    a0 = check_alpha(alpha)
    eta = check_finite_array(lr, "lr")
    if (eta <= 0).any():
        raise ValueError(f"lr must be > 0, got {eta.min()}")
    if isinstance(scale, str):
        if scale != "running":
            raise ValueError(f"scale must be 'running' or a number > 0, got {scale!r}")
        fixed = None
    else:
        if isinstance(scale, bool):
            raise TypeError(f"scale must be 'running' or a number > 0, got {scale!r}")
        fixed = check_positive(scale, "scale")
    warned = [False]

    def _init(shape: Any = ()) -> OGDState:
        st = _ogd_init(shape, q_init)
        q = np.broadcast_to(st.q, np.broadcast_shapes(eta.shape, st.q.shape)).copy()
        return st._replace(q=q, q_p=q.copy())

    def _update(state: OGDState, score: ArrayLike) -> tuple[NDArray, OGDState]:
        s = check_score_step(score, state.scale.shape)
        err = s > state.q
        abs_sum = state.grad_sq + np.where(np.isfinite(s), np.abs(s), 0.0)
        t = np.asarray(state.t + 1)
        sigma = abs_sum / t if fixed is None else fixed
        q = state.q + eta * sigma * (err - a0)
        scale_max = _running_scale(state, s)
        if (
            fixed is not None
            and not warned[0]
            and (scale_max > _QT_SCALE_RATIO * eta * fixed).any()
        ):
            warned[0] = True
            warnings.warn(
                f"quantile_tracking: lr={float(np.min(eta)):g} x scale={fixed:g} is a step in "
                f"score units, but the scores reach {float(np.max(scale_max)):g} (over "
                f"{_QT_SCALE_RATIO:g} steps): the threshold will lag far behind and coverage "
                "will be off for a long time. Use scale='running' (the step relative to the "
                "running mean score) or a scale-free method ('up', 'sf_ogd', 'decaying_ogd')",
                UserWarning,
                stacklevel=2,
            )
        return q, state._replace(q=q, q_p=q, t=t, grad_sq=abs_sum, scale=scale_max)

    return OnlineAlgorithm("quantile_tracking", _init, _update)


#: quantile_tracking warns once a score exceeds this many steps ``lr``.
_QT_SCALE_RATIO = 1000.0


def _sat_tan(x: NDArray) -> NDArray:
    return np.where(
        x >= np.pi / 2,
        np.inf,
        np.where(x <= -np.pi / 2, -np.inf, np.tan(np.clip(x, -1.5707, 1.5707))),
    )


def conformal_pid(
    alpha: float = 0.1,
    lr: float = 0.1,
    *,
    ki: float = 1.0,
    csat: float | None = None,
    horizon: int = 10_000,
    window: int = 100,
    q_init: float = 0.0,
) -> OnlineAlgorithm:
    r"""Conformal PID control without scorecaster (Angelopoulos, Candès, Tibshirani 2023).

    :math:`q_{t+1} = p_{t+1} + r_t(E_t)`, with the proportional part
    :math:`p_{t+1} = p_t + \eta B_t(\mathrm{err}_t - \alpha)` (:math:`B_t` = max − min of the last
    ``window`` scores: their proportional step), the integrator argument
    :math:`E_t = \sum_{s\le t}(\mathrm{err}_s - \alpha)` and
    :math:`r_t(x) = K_I M_t\tan(x\log(t+1)/(C_{\mathrm{sat}}(t+1)))` (±∞ past ±π/2),
    :math:`M_t` the largest score seen (their R package's default :math:`K_I` = max |score|, here
    running). Default :math:`C_{\mathrm{sat}} = \frac2\pi(\lceil 0.01\log T\rceil - 1/\log T)`
    with T = ``horizon``.
    """
    a0 = check_alpha(alpha)
    eta = check_positive(lr, "lr")
    k_i = check_positive(ki, "ki", strict=False)
    T_h = check_positive_int(horizon, "horizon", minimum=3)
    c_sat = (
        2 / np.pi * (np.ceil(0.01 * np.log(T_h)) - 1 / np.log(T_h))
        if csat is None
        else check_positive(csat, "csat")
    )
    w = check_positive_int(window, "window")

    def _init(shape: Any = ()) -> OGDState:
        return _ogd_init(shape, q_init, w)

    def _update(state: OGDState, score: ArrayLike) -> tuple[NDArray, OGDState]:
        s = check_score_step(score, state.scale.shape)
        err = s > state.q
        scale = _running_scale(state, s)
        win = _window_push(state.window, np.where(np.isfinite(s), s, scale))
        ref = win.buf[..., : int(win.n)]
        b_t = ref.max(-1) - ref.min(-1)
        b_t = np.where(b_t > 0, b_t, scale)
        q_p = state.q_p + eta * b_t * (err - a0)
        t = int(state.t) + 1
        e_sum = state.err_sum + (err - a0)
        integ = (
            k_i * scale * _sat_tan(e_sum * np.log(t + 1) / (c_sat * (t + 1))) if k_i > 0 else 0.0
        )
        with np.errstate(invalid="ignore"):
            q = q_p + integ
        q = np.where(np.isnan(q), q_p, q)
        return q, state._replace(
            q=q, q_p=q_p, t=np.asarray(t), err_sum=e_sum, scale=scale, window=win
        )

    return OnlineAlgorithm("pid", _init, _update)


def sf_ogd(alpha: float = 0.1, *, lr: float | None = None, q_init: float = 0.0) -> OnlineAlgorithm:
    r"""Scale-free OGD (Bhatnagar et al. 2023):
    :math:`q_{t+1} = q_t - \eta_t g_t/\sqrt{\sum_{s\le t} g_s^2}`,
    :math:`g_t = \alpha - \mathrm{err}_t`,
    with :math:`\eta_t = D_t/\sqrt3` and :math:`D_t` the largest score seen (their "diameter"), or a
    fixed ``lr``."""
    a0 = check_alpha(alpha)
    fixed = None if lr is None else check_positive(lr, "lr")

    def _init(shape: Any = ()) -> OGDState:
        return _ogd_init(shape, q_init)

    def _update(state: OGDState, score: ArrayLike) -> tuple[NDArray, OGDState]:
        s = check_score_step(score, state.scale.shape)
        err = s > state.q
        g = a0 - err
        grad_sq = state.grad_sq + g * g
        scale = _running_scale(state, s)
        eta = scale / np.sqrt(3.0) if fixed is None else fixed
        q = state.q - eta * g / np.sqrt(grad_sq)
        return q, state._replace(
            q=q, q_p=q, t=np.asarray(state.t + 1), grad_sq=grad_sq, scale=scale
        )

    return OnlineAlgorithm("sf_ogd", _init, _update)


def decaying_ogd(
    alpha: float = 0.1, lr: float = 1.0, *, decay: float = 0.6, q_init: float = 0.0
) -> OnlineAlgorithm:
    r"""OGD with decaying steps (Angelopoulos, Barber, Bates 2024):
    :math:`q_{t+1} = q_t + \eta B_t t^{-\mathrm{decay}}(\mathrm{err}_t - \alpha)`, decay in (1/2, 1)
    (their :math:`t^{-1/2-\epsilon}`), :math:`B_t` the largest score seen (scale-free step)."""
    a0 = check_alpha(alpha)
    eta = check_positive(lr, "lr")
    d = check_in_interval(decay, "decay", 0.5, 1.0, closed=(False, True))

    def _init(shape: Any = ()) -> OGDState:
        return _ogd_init(shape, q_init)

    def _update(state: OGDState, score: ArrayLike) -> tuple[NDArray, OGDState]:
        s = check_score_step(score, state.scale.shape)
        err = s > state.q
        t = int(state.t) + 1
        scale = _running_scale(state, s)
        q = state.q + eta * scale * t ** (-d) * (err - a0)
        return q, state._replace(q=q, q_p=q, t=np.asarray(t), scale=scale)

    return OnlineAlgorithm("decaying_ogd", _init, _update)


# ---------------------------------------------------------------- KT betting on the threshold


class KTState(NamedTuple):
    """KT-betting state: coin sum and log-wealth."""

    q: NDArray[np.float64]
    coin_sum: NDArray[np.float64]
    log_wealth: NDArray[np.float64]
    t: NDArray[np.int64]


def kt_aci(alpha: float = 0.1, eps: float = 1.0, q0: float = 0.0) -> OnlineAlgorithm:
    r"""KT coin betting on the threshold (Podkopaev, Xu, Lee 2024; Orabona & Pál 2016).

    Coin :math:`c_t = \mathrm{err}_t - \alpha \in [-1, 1]`, fraction
    :math:`\beta_t = \frac1t\sum_{s<t}c_s`, :math:`q_t = \hat q_0 + \beta_t W_{t-1}`,
    :math:`W_t = W_{t-1}(1 + c_t\beta_t)`, :math:`W_0 = \varepsilon`.
    """
    a0 = check_alpha(alpha)
    e = check_positive(eps, "eps")

    def _init(shape: Any = ()) -> KTState:
        shp = as_batch_shape(shape)
        return KTState(
            np.full(shp, float(q0)), np.zeros(shp), np.full(shp, np.log(e)), np.asarray(0)
        )

    def _update(state: KTState, score: ArrayLike) -> tuple[NDArray, KTState]:
        s = check_score_step(score, state.q.shape)
        c = (s > state.q) - a0
        t = int(state.t) + 1
        beta = state.coin_sum / t
        log_wealth = state.log_wealth + np.log1p(c * beta)
        coin_sum = state.coin_sum + c
        beta_next = coin_sum / (t + 1)
        with np.errstate(divide="ignore", over="ignore"):
            q = q0 + np.sign(beta_next) * np.exp(np.log(np.abs(beta_next)) + log_wealth)
        return q, KTState(q, coin_sum, log_wealth, np.asarray(t))

    return OnlineAlgorithm("kt_aci", _init, _update)
