r"""UP-OCP: online conformal prediction by a two-asset universal portfolio (reconstruction).

Round :math:`t`: the predictor announces a threshold :math:`q_t`; the score :math:`s_t` is revealed;
the miss is :math:`\mathrm{err}_t = 1\{s_t > q_t\}` and the pinball subgradient is
:math:`g_t = \alpha - \mathrm{err}_t`. The coin :math:`c_t = -g_t \in \{1-\alpha, -\alpha\}` is bet
on with wealth :math:`W_{t-1}`:

.. math::

    q_t = \hat q_0 + \beta_t W_{t-1}, \quad W_t = W_{t-1}(1 - g_t\beta_t), \quad W_0 = \varepsilon.

The betting fraction is a horse race with odds :math:`1/\alpha` on "miss" and
:math:`1/(1-\alpha)` on "cover": a portfolio weight :math:`b` on "miss" is the fraction
:math:`\beta = (b-\alpha)/(\alpha(1-\alpha))`, and the wealth multiplier is :math:`b/\alpha`
after a miss, :math:`(1-b)/(1-\alpha)` after a cover. Cover's universal portfolio with the
Dirichlet(½, ½) prior has the Krichevsky–Trofimov closed form :math:`b_t = (M_{t-1} + \tfrac12)/t`,
with :math:`M_{t-1}` the misses so far. A general Beta(a, b) prior gives
:math:`b_t = (M_{t-1}+a)/(t-1+a+b)`; a finite grid of constant portfolios gives the reference
mixture :func:`up_grid`.

Deterministic guarantee (proved in the README, checked by the tests). For every score sequence and
every :math:`T\ge1`, with :math:`M` misses,

.. math::

    T\,\mathrm{KL}(M/T\,\|\,\alpha) \le \log\Big(1 + \max(\alpha, 1-\alpha)
        \frac{\sum_{t\le T}|q_t-\hat q_0|}{\varepsilon}\Big) + \tfrac12\log T + \log 2.

Proof: :math:`W_T = \varepsilon + \sum_t c_t (q_t - \hat q_0)` (each step adds the bet times the
coin), so :math:`W_T \le \varepsilon + \max(\alpha,1-\alpha)\sum_t|q_t-\hat q_0|`. The KT mixture
telescopes to
:math:`W_T = \varepsilon\,B(M+\frac12, T-M+\frac12)/(B(\frac12,\frac12)\,\alpha^M(1-\alpha)^{T-M})`
(:func:`cover_log_wealth`), and :math:`B(M+\frac12,T-M+\frac12)/B(\frac12,\frac12)\ge
\hat p^M(1-\hat p)^{T-M}/(2\sqrt T)` with :math:`\hat p = M/T` (the KT regret bound; the constant
:math:`\log 2` is attained at :math:`T=1`). Taking logs gives the display.

References:
    Z. Liu, E. Dobriban, F. Orabona. "Online Conformal Prediction via Universal Portfolio
    Algorithms." ICML 2026, arXiv:2602.03168 (no public code; this update is a reconstruction).
    F. Orabona, D. Pál. "Coin Betting and Parameter-Free Online Learning." NeurIPS 2016.
    T. M. Cover, E. Ordentlich. "Universal portfolios with side information." IEEE T-IT 1996.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import betaln, xlogy

from icml26_shared.checks import check_alpha, check_finite_array, check_positive, check_positive_int

from ._baselines import Window, _window_init, _window_push, _window_scores
from ._protocol import OnlineAlgorithm, as_batch_shape, check_score_step

__all__ = [
    "UPState",
    "UPWindowState",
    "cover_fraction",
    "cover_log_wealth",
    "coverage_bound",
    "init",
    "kl_bernoulli",
    "kt_fraction",
    "trailing_offsets",
    "up_grid",
    "up_ocp",
    "update",
]


class UPState(NamedTuple):
    """State of UP-OCP (all arrays share the batch shape, hyperparameters broadcast).

    Attributes:
        q: the threshold announced for the next score.
        log_wealth: :math:`\\log W_{t}` (log space, so the wealth never overflows).
        misses: :math:`M_t`, misses so far (float).
        t: rounds done (int64, 0-d: every stream advances together).
        alpha, eps, q0, prior_a, prior_b: hyperparameters (0-d float arrays).
    """

    q: NDArray[np.float64]
    log_wealth: NDArray[np.float64]
    misses: NDArray[np.float64]
    t: NDArray[np.int64]
    alpha: NDArray[np.float64]
    eps: NDArray[np.float64]
    q0: NDArray[np.float64]
    prior_a: NDArray[np.float64]
    prior_b: NDArray[np.float64]


def kt_fraction(misses: ArrayLike, t: ArrayLike, a: ArrayLike = 0.5, b: ArrayLike = 0.5) -> NDArray:
    """Universal-portfolio weight on "miss" before round ``t + 1`` (``t`` rounds done).

    :math:`b = (M + a)/(t + a + b)`: the posterior mean of a Beta(a, b) prior, i.e. Cover's
    universal portfolio for the two-asset horse race; a = b = ½ is the KT estimator.
    """
    pa, pb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    m, n = np.asarray(misses, dtype=np.float64), np.asarray(t, dtype=np.float64)
    return (m + pa) / (n + pa + pb)


def _threshold(q0: NDArray, beta: NDArray, log_wealth: NDArray) -> NDArray:
    """q0 + β·exp(log W) computed as sign(β)·exp(log|β| + log W) (no 0·inf)."""
    with np.errstate(divide="ignore", over="ignore"):
        mag = np.exp(np.log(np.abs(beta)) + log_wealth)
    return q0 + np.sign(beta) * mag


def _fraction_to_beta(b: NDArray, alpha: NDArray) -> NDArray:
    return (b - alpha) / (alpha * (1.0 - alpha))


def init(
    alpha: float = 0.1,
    eps: float = 1.0,
    q0: float = 0.0,
    shape: int | tuple[int, ...] = (),
    prior: tuple[float, float] = (0.5, 0.5),
) -> UPState:
    """Initial UP-OCP state for a batch of independent streams.

    Args:
        alpha: target miscoverage in (0, 1).
        eps: initial wealth ε > 0, on the score scale (the only constant of the method).
        q0: optional offset :math:`\\hat q_0` (a prior guess of the threshold).
        shape: batch shape (``()`` for one stream).
        prior: Beta(a, b) prior of the universal portfolio; ``(0.5, 0.5)`` is KT.

    Returns:
        :class:`UPState` whose ``q`` is :math:`q_1`.
    """
    a = check_alpha(alpha)
    e = check_positive(eps, "eps")
    q0_ = float(check_finite_array(q0, "q0", ndim=0))
    pa = check_positive(prior[0], "prior[0]")
    pb = check_positive(prior[1], "prior[1]")
    shp = as_batch_shape(shape)
    z = np.zeros(shp)
    state = UPState(
        q=z.copy(),
        log_wealth=np.full(shp, np.log(e)),
        misses=z.copy(),
        t=np.asarray(0, dtype=np.int64),
        alpha=np.asarray(a),
        eps=np.asarray(e),
        q0=np.asarray(q0_),
        prior_a=np.asarray(pa),
        prior_b=np.asarray(pb),
    )
    b = kt_fraction(state.misses, 0, pa, pb)
    return state._replace(
        q=_threshold(state.q0, _fraction_to_beta(b, state.alpha), state.log_wealth)
    )


def update(state: UPState, score: ArrayLike) -> tuple[NDArray[np.float64], UPState]:
    """One UP-OCP round: reveal ``score``, pay the bet, announce the next threshold.

    ``score`` has the batch shape; ``+inf`` is legal (it is a miss), NaN is not.

    Returns:
        ``(q_next, new_state)``.
    """
    s = check_score_step(score, state.q.shape)
    err = (s > state.q).astype(np.float64)
    alpha = state.alpha
    b = kt_fraction(state.misses, state.t, state.prior_a, state.prior_b)
    # wealth multiplier: b/α after a miss, (1-b)/(1-α) after a cover (= 1 - g β)
    log_mult = err * np.log(b / alpha) + (1.0 - err) * np.log((1.0 - b) / (1.0 - alpha))
    log_wealth = state.log_wealth + log_mult
    misses = state.misses + err
    t = state.t + 1
    b_next = kt_fraction(misses, t, state.prior_a, state.prior_b)
    q = _threshold(state.q0, _fraction_to_beta(b_next, alpha), log_wealth)
    new = state._replace(q=q, log_wealth=log_wealth, misses=misses, t=np.asarray(t, dtype=np.int64))
    return q, new


def up_ocp(
    alpha: float = 0.1,
    eps: float = 1.0,
    q0: float = 0.0,
    prior: tuple[float, float] = (0.5, 0.5),
    *,
    window: int | None = None,
) -> OnlineAlgorithm:
    r"""UP-OCP as an ``(init, update)`` pair (optax style); see the module docstring for the math.

    Args:
        alpha: target miscoverage in (0, 1).
        eps: initial wealth ε > 0: on the score scale for the plain method; with ``window``,
            relative to the offset (dimensionless).
        q0: the offset :math:`\hat q_0` (with ``window``: only until the first score).
        prior: Beta(a, b) prior of the universal portfolio; ``(0.5, 0.5)`` is KT.
        window: ``None`` (default) for the plain method. An int ``w`` bets around a
            *predictable offset*: :math:`\hat q_{0,t}` is the
            :math:`\min(\lceil(1-\alpha)(n+1)\rceil, n)`-th smallest of the last
            :math:`n \le w` scores, and the bet is in its units,
            :math:`q_t = \hat q_{0,t}(1 + \beta_t W_{t-1})`. The wealth recursion and the KT
            mixture are unchanged, so the deterministic bound holds with
            :math:`\sum_t |q_t - \hat q_{0,t}| / \hat q_{0,t} = \sum_t |\beta_t| W_{t-1}` in
            place of :math:`\sum_t |q_t - \hat q_0|` (see :func:`coverage_bound`'s
            ``offsets`` / ``scales``). The miss excess that funds the plain method's wealth is
            then no longer needed, and the method is scale-free (ε is dimensionless).

    Example:
        >>> import numpy as np
        >>> algo = up_ocp(alpha=0.1)
        >>> state = algo.init((3,))
        >>> q, state = algo.update(state, np.array([0.5, 2.0, 9.0]))
        >>> q.shape
        (3,)
    """
    check_alpha(alpha)
    check_positive(eps, "eps")
    check_finite_array(q0, "q0", ndim=0)
    if isinstance(prior, str | bytes) or len(prior) != 2:
        raise ValueError(f"prior must be a pair (a, b) of Beta parameters > 0, got {prior!r}")
    check_positive(prior[0], "prior[0]")
    check_positive(prior[1], "prior[1]")

    if window is not None:
        w = check_positive_int(window, "window")

        def _init_w(shape: Any = ()) -> UPWindowState:
            base = init(alpha, eps, q0, shape, prior)
            beta = _fraction_to_beta(kt_fraction(base.misses, 0, *prior), base.alpha)
            q = _offset_threshold(np.broadcast_to(base.q0, base.q.shape), beta, base.log_wealth)
            win = _window_init(base.q.shape, w, None)
            return UPWindowState(*base._replace(q=q), window=win)

        return OnlineAlgorithm("up", _init_w, _update_window)

    def _init(shape: Any = ()) -> UPState:
        return init(alpha, eps, q0, shape, prior)

    return OnlineAlgorithm("up", _init, update)


class UPWindowState(NamedTuple):
    """State of UP-OCP around a trailing-quantile offset: :class:`UPState`'s fields and the
    trailing window of scores."""

    q: NDArray[np.float64]
    log_wealth: NDArray[np.float64]
    misses: NDArray[np.float64]
    t: NDArray[np.int64]
    alpha: NDArray[np.float64]
    eps: NDArray[np.float64]
    q0: NDArray[np.float64]
    prior_a: NDArray[np.float64]
    prior_b: NDArray[np.float64]
    window: Window


def _trailing_offset(win: Window, alpha: NDArray, q0: NDArray) -> NDArray[np.float64]:
    r"""The :math:`\min(\lceil(1-\alpha)(n+1)\rceil, n)`-th smallest score of the window
    (``q0`` while it is empty): an estimate of the (1 − α)-quantile, clipped to a finite rank so
    the offset exists from the first score on (it is a predictable guess, not a guarantee)."""
    ref = _window_scores(win)
    n = ref.shape[-1]
    if n == 0:
        return np.broadcast_to(q0, win.buf.shape[:-1]).astype(np.float64)
    k = min(int(np.ceil((1.0 - float(alpha)) * (n + 1))), n)
    return np.partition(ref, k - 1, axis=-1)[..., k - 1]


def _offset_threshold(off: NDArray, beta: NDArray, log_wealth: NDArray) -> NDArray:
    """off + σ·β·W with σ = max(|off|, tiny): the bet is in units of the offset, floored at the
    smallest positive float so that it never vanishes (a zero offset can still go below 0, and
    the wealth identity behind the bound stays exact). An infinite offset is the full set."""
    sigma = np.maximum(np.abs(off), _TINY)
    with np.errstate(invalid="ignore"):
        q = _threshold(off, beta, log_wealth + np.log(sigma))
    return np.where(np.isposinf(off), np.inf, q)


_TINY = float(np.finfo(np.float64).tiny)


def _update_window(
    state: UPWindowState, score: ArrayLike
) -> tuple[NDArray[np.float64], UPWindowState]:
    s = check_score_step(score, state.q.shape)
    err = (s > state.q).astype(np.float64)
    alpha = state.alpha
    b = kt_fraction(state.misses, state.t, state.prior_a, state.prior_b)
    log_mult = err * np.log(b / alpha) + (1.0 - err) * np.log((1.0 - b) / (1.0 - alpha))
    log_wealth = state.log_wealth + log_mult
    misses = state.misses + err
    t = state.t + 1
    win = _window_push(state.window, s)
    off = _trailing_offset(win, alpha, state.q0)
    b_next = kt_fraction(misses, t, state.prior_a, state.prior_b)
    q = _offset_threshold(off, _fraction_to_beta(b_next, alpha), log_wealth)
    new = state._replace(
        q=q,
        log_wealth=log_wealth,
        misses=misses,
        t=np.asarray(t, dtype=np.int64),
        window=win,
    )
    return q, new


def trailing_offsets(
    scores: ArrayLike, alpha: float, window: int, q0: float = 0.0
) -> NDArray[np.float64]:
    r"""The offsets :math:`\hat q_{0,t}` that ``up_ocp(..., window=window)`` bets around on
    ``scores`` ``(..., T)`` (``offsets[..., t]`` uses scores before t): for
    :func:`coverage_bound`."""
    s = check_finite_array(scores, "scores", allow_inf=True)
    a = np.asarray(check_alpha(alpha))
    win = _window_init(s.shape[:-1], check_positive_int(window, "window"), None)
    out = np.empty(s.shape)
    for t in range(s.shape[-1]):
        out[..., t] = _trailing_offset(win, a, np.asarray(float(q0)))
        win = _window_push(win, s[..., t])
    return out


# ---------------------------------------------------------------- exact Cover mixture (reference)


def cover_log_wealth(
    misses: ArrayLike,
    t: ArrayLike,
    alpha: float,
    eps: float = 1.0,
    prior: tuple[float, float] = (0.5, 0.5),
) -> NDArray[np.float64]:
    r"""Log-wealth of Cover's universal portfolio after ``t`` rounds with ``misses`` misses.

    .. math::

        \log W_t = \log\varepsilon + \log B(M+a, t-M+b) - \log B(a, b)
                   - M\log\alpha - (t-M)\log(1-\alpha),

    the Beta integral :math:`\int_0^1 \prod_s (b/\alpha)^{e_s}((1-b)/(1-\alpha))^{1-e_s}\,d\pi(b)`
    in log space. It depends on the sequence only through ``M``, which is why the sequential KT
    product equals it exactly.
    """
    a_ = check_alpha(alpha)
    m = np.asarray(misses, dtype=np.float64)
    n = np.asarray(t, dtype=np.float64)
    pa, pb = prior
    return (
        np.log(eps)
        + betaln(m + pa, n - m + pb)
        - betaln(pa, pb)
        - m * np.log(a_)
        - (n - m) * np.log1p(-a_)
    )


def cover_fraction(
    misses: ArrayLike, t: ArrayLike, prior: tuple[float, float] = (0.5, 0.5)
) -> NDArray:
    r"""Cover's wealth-weighted mean portfolio, by Beta integrals in log space:
    :math:`b_{t+1} = \exp(\log B(M+a+1, t-M+b) - \log B(M+a, t-M+b))`."""
    m = np.asarray(misses, dtype=np.float64)
    n = np.asarray(t, dtype=np.float64)
    pa, pb = prior
    return np.exp(betaln(m + pa + 1.0, n - m + pb) - betaln(m + pa, n - m + pb))


class UPGridState(NamedTuple):
    """State of the grid universal portfolio: log-wealth of each constant portfolio."""

    q: NDArray[np.float64]
    log_wealth: NDArray[np.float64]  # (*batch, K)
    log_prior: NDArray[np.float64]  # (K,)
    grid: NDArray[np.float64]  # (K,) weights on "miss"
    t: NDArray[np.int64]
    alpha: NDArray[np.float64]
    eps: NDArray[np.float64]
    q0: NDArray[np.float64]


def _grid_threshold(state: UPGridState, log_wealth: NDArray) -> NDArray:
    lw = log_wealth + state.log_prior
    top = lw.max(axis=-1, keepdims=True)
    w = np.exp(lw - top)
    total = w.sum(axis=-1)
    b = (w * state.grid).sum(axis=-1) / total
    log_total = np.log(total) + top[..., 0]
    return _threshold(state.q0, _fraction_to_beta(b, state.alpha), log_total)


def up_grid(
    alpha: float = 0.1,
    eps: float = 1.0,
    q0: float = 0.0,
    n_grid: int = 200,
    prior: tuple[float, float] = (0.5, 0.5),
) -> OnlineAlgorithm:
    r"""General universal portfolio over a finite grid of constant portfolios (reference).

    Constant portfolios :math:`b_i = (i - \frac12)/K`, prior weights from the Beta(a, b) density
    (normalised on the grid); the announced portfolio is the wealth-weighted mean
    :math:`b_t = \sum_i \pi_i W_{t-1}(b_i) b_i / \sum_i \pi_i W_{t-1}(b_i)` and the total wealth is
    :math:`\sum_i \pi_i W_{t-1}(b_i)`. As ``n_grid`` grows it tends to the exact Beta mixture.
    Cost O(K) per step; use :func:`up_ocp` in practice.
    """
    a_ = check_alpha(alpha)
    e = check_positive(eps, "eps")
    k = check_positive_int(n_grid, "n_grid", minimum=2)
    grid = (np.arange(1, k + 1) - 0.5) / k
    logp = xlogy(prior[0] - 1.0, grid) + xlogy(prior[1] - 1.0, 1.0 - grid)
    logp -= np.log(np.exp(logp - logp.max()).sum()) + logp.max()

    def _init(shape: Any = ()) -> UPGridState:
        shp = as_batch_shape(shape)
        st = UPGridState(
            q=np.zeros(shp),
            log_wealth=np.full((*shp, k), np.log(e)),
            log_prior=logp,
            grid=grid,
            t=np.asarray(0, dtype=np.int64),
            alpha=np.asarray(a_),
            eps=np.asarray(e),
            q0=np.asarray(float(q0)),
        )
        return st._replace(q=_grid_threshold(st, st.log_wealth))

    def _update(state: UPGridState, score: ArrayLike) -> tuple[NDArray, UPGridState]:
        s = check_score_step(score, state.q.shape)
        err = (s > state.q)[..., None]
        mult = np.where(
            err, np.log(state.grid / state.alpha), np.log((1.0 - state.grid) / (1.0 - state.alpha))
        )
        lw = state.log_wealth + mult
        q = _grid_threshold(state, lw)
        return q, state._replace(q=q, log_wealth=lw, t=np.asarray(state.t + 1, dtype=np.int64))

    return OnlineAlgorithm("up_grid", _init, _update)


# ---------------------------------------------------------------- the deterministic bound


def kl_bernoulli(p: ArrayLike, q: float) -> NDArray[np.float64]:
    """:math:`\\mathrm{KL}(p\\,\\|\\,q) = p\\log(p/q) + (1-p)\\log((1-p)/(1-q))` (0 log 0 = 0)."""
    p_ = np.asarray(p, dtype=np.float64)
    return xlogy(p_, p_ / q) + xlogy(1.0 - p_, (1.0 - p_) / (1.0 - q))


def coverage_bound(
    scores: ArrayLike,
    thresholds: ArrayLike,
    alpha: float,
    eps: float = 1.0,
    q0: ArrayLike = 0.0,
    *,
    scales: ArrayLike | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Both sides of the deterministic coverage bound at every prefix ``t = 1..T``.

    Returns ``(lhs, rhs)`` along the last axis with
    :math:`\mathrm{lhs}_t = t\,\mathrm{KL}(M_t/t\,\|\,\alpha)` and
    :math:`\mathrm{rhs}_t = \log(1 + \max(\alpha,1-\alpha)\sum_{s\le t}|q_s-\hat q_0|/\varepsilon)
    + \frac12\log t + \log 2`. UP-OCP (KT prior) guarantees ``lhs <= rhs`` for every sequence.

    For ``up_ocp(..., window=w)`` pass ``q0=offsets`` and ``scales=offsets`` with
    ``offsets = trailing_offsets(scores, alpha, w)``: each term is then
    :math:`|q_t - \hat q_{0,t}|/\hat q_{0,t}` (0 where the offset is 0 or infinite, where the
    threshold equals it).
    """
    a_ = check_alpha(alpha)
    e = check_positive(eps, "eps")
    s = check_finite_array(scores, "scores", allow_inf=True)
    q = check_finite_array(thresholds, "thresholds", allow_inf=True)
    if s.ndim == 0 or s.shape != q.shape:
        raise ValueError(
            f"scores and thresholds must have the same shape (..., T), got {s.shape} and {q.shape}"
        )
    err = (s > q).astype(np.float64)
    t = np.arange(1, s.shape[-1] + 1, dtype=np.float64)
    lhs = t * kl_bernoulli(np.cumsum(err, axis=-1) / t, a_)
    off = np.broadcast_to(np.asarray(q0, dtype=np.float64), q.shape)
    with np.errstate(invalid="ignore"):
        dev = np.abs(q - off)
        if scales is not None:
            sc = np.broadcast_to(np.asarray(scales, dtype=np.float64), q.shape)
            dev = dev / np.maximum(np.abs(sc), _TINY)
    # an infinite threshold or offset makes the bound vacuous from then on (as for plain UP-OCP
    # once its threshold overflows)
    spent = np.cumsum(np.where(np.isnan(dev), np.inf, dev), axis=-1)
    rhs = np.log1p(max(a_, 1.0 - a_) * spent / e) + 0.5 * np.log(t) + np.log(2.0)
    return lhs, rhs
