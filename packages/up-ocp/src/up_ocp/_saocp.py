r"""SAOCP: strongly adaptive online conformal prediction (Bhatnagar et al. 2023).

At every round :math:`t` a new scale-free OGD expert (:func:`up_ocp.sf_ogd`'s update) is started,
initialised at the current prediction, and lives on the geometric-cover interval
:math:`[t, t + L(t) - 1]`, :math:`L(t) = g\,2^{\nu(t)}` with :math:`\nu(t)` the 2-adic valuation of
:math:`t` (lifetime multiplier g = 8). Active experts are combined by the coin-betting meta
algorithm CBCE (Jun et al. 2017): expert i (born at round i) has prior
:math:`\pi_i \propto 1/(i^2(1+\lfloor\log_2 i\rfloor))`, KT weight

.. math::

    w_{t+1,i} = \frac{1}{t-i+1}\Big(\sum_{s=i}^{t}\tilde g_{s,i}\Big)
                \Big(1 + \sum_{s=i}^{t}\tilde g_{s,i} w_{s,i}\Big),

with the normalised loss gain :math:`\tilde g_{s,i} = (\ell_s(q_s) - \ell_s(q_{s,i}))/B_s`
(clipped to [-1, 1], and to [0, 1] while :math:`w_{s,i} \le 0`), :math:`\ell` the pinball loss and
:math:`B_s` the largest score seen. The prediction is
:math:`q_t = \sum_i \pi_i[w_{t,i}]_+ q_{t,i} / \sum_i \pi_i[w_{t,i}]_+` over active experts (the
prior
when every weight is 0).

References:
    A. Bhatnagar, H. Wang, C. Xiong, Y. Bai. "Improved online conformal prediction via strongly
    adaptive online learning." ICML 2023.
    K.-S. Jun, F. Orabona, S. Wright, R. Willett. "Improved strongly adaptive online learning
    using coin betting." AISTATS 2017.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_alpha, check_positive_int

from ._protocol import OnlineAlgorithm, as_batch_shape, check_score_step

__all__ = ["SAOCPState", "saocp"]


class SAOCPState(NamedTuple):
    """SAOCP state; expert arrays are ``(*batch, K)`` with K slots (grown when full)."""

    q: NDArray[np.float64]
    exp_q: NDArray[np.float64]
    exp_gsq: NDArray[np.float64]
    g_sum: NDArray[np.float64]
    wealth: NDArray[np.float64]
    weight: NDArray[np.float64]
    birth: NDArray[np.int64]  # (K,), 0 = free slot
    death: NDArray[np.int64]  # (K,), last active round
    scale: NDArray[np.float64]
    t: NDArray[np.int64]


def _lifetime(t: int, g: int) -> int:
    return g * (t & -t)  # g · 2^{ν(t)}


def _log_prior(birth: NDArray) -> NDArray:
    i = np.maximum(birth, 1).astype(np.float64)
    return -2.0 * np.log(i) - np.log1p(np.floor(np.log2(i)))


def _aggregate(state: SAOCPState, weight: NDArray, active: NDArray) -> NDArray:
    logp = np.where(active, _log_prior(state.birth), -np.inf)
    p = np.exp(logp - logp.max())
    pos = np.maximum(weight, 0.0) * p
    total = pos.sum(-1, keepdims=True)
    fallback = np.broadcast_to(p, pos.shape)
    mix = np.where(total > 0, pos, fallback)
    mix = mix / mix.sum(-1, keepdims=True)
    qs = np.where(active, state.exp_q, 0.0)
    return (mix * qs).sum(-1)


def _pinball(s: NDArray, q: NDArray, alpha: float) -> NDArray:
    u = s - q
    return np.maximum((1 - alpha) * u, -alpha * u)


def saocp(alpha: float = 0.1, *, lifetime: int = 8, q_init: float = 0.0) -> OnlineAlgorithm:
    """SAOCP as an ``(init, update)`` pair; see the module docstring."""
    a0 = check_alpha(alpha)
    g_life = check_positive_int(lifetime, "lifetime")

    def _init(shape: Any = ()) -> SAOCPState:
        shp = as_batch_shape(shape)
        K = 16
        st = SAOCPState(
            q=np.full(shp, float(q_init)),
            exp_q=np.zeros((*shp, K)),
            exp_gsq=np.zeros((*shp, K)),
            g_sum=np.zeros((*shp, K)),
            wealth=np.ones((*shp, K)),
            weight=np.zeros((*shp, K)),
            birth=np.zeros(K, dtype=np.int64),
            death=np.zeros(K, dtype=np.int64),
            scale=np.zeros(shp),
            t=np.asarray(0),
        )
        return _spawn(st, 1, st.q)

    def _spawn(state: SAOCPState, t: int, q_start: NDArray) -> SAOCPState:
        free = np.flatnonzero(state.birth == 0)
        if free.size == 0:
            K = state.birth.size

            def grow(x: NDArray, fill: float) -> NDArray:
                return np.concatenate(
                    [x, np.full((*x.shape[:-1], K), fill, dtype=x.dtype)], axis=-1
                )

            state = state._replace(
                exp_q=grow(state.exp_q, 0.0),
                exp_gsq=grow(state.exp_gsq, 0.0),
                g_sum=grow(state.g_sum, 0.0),
                wealth=grow(state.wealth, 1.0),
                weight=grow(state.weight, 0.0),
                birth=grow(state.birth, 0),
                death=grow(state.death, 0),
            )
            free = np.flatnonzero(state.birth == 0)
        j = int(free[0])
        exp_q, exp_gsq = state.exp_q.copy(), state.exp_gsq.copy()
        g_sum, wealth, weight = state.g_sum.copy(), state.wealth.copy(), state.weight.copy()
        birth, death = state.birth.copy(), state.death.copy()
        exp_q[..., j] = q_start
        exp_gsq[..., j] = 0.0
        g_sum[..., j] = 0.0
        wealth[..., j] = 1.0
        weight[..., j] = 0.0
        birth[j] = t
        death[j] = t + _lifetime(t, g_life) - 1
        return state._replace(
            exp_q=exp_q,
            exp_gsq=exp_gsq,
            g_sum=g_sum,
            wealth=wealth,
            weight=weight,
            birth=birth,
            death=death,
        )

    def _update(state: SAOCPState, score: ArrayLike) -> tuple[NDArray, SAOCPState]:
        s = check_score_step(score, state.q.shape)
        t = int(state.t) + 1
        active = state.birth > 0
        scale = np.maximum(state.scale, np.where(np.isfinite(s), np.abs(s), 0.0))
        safe_scale = np.where(scale > 0, scale, 1.0)[..., None]
        big = np.maximum(np.abs(state.exp_q).max(-1), np.abs(state.q)) + safe_scale[..., 0]
        s_c = np.clip(s, -big, big)[..., None]
        # meta: normalised gain of each expert over the combined prediction
        gain = (_pinball(s_c, state.q[..., None], a0) - _pinball(s_c, state.exp_q, a0)) / safe_scale
        gain = np.clip(gain, -1.0, 1.0)
        gain = np.where(state.weight > 0, gain, np.maximum(gain, 0.0))
        gain = np.where(active, gain, 0.0)
        g_sum = state.g_sum + gain
        wealth = state.wealth + gain * state.weight
        age = np.maximum(t - state.birth + 1, 1)
        weight = np.where(active, g_sum / age * wealth, 0.0)
        # experts: scale-free OGD
        err = s[..., None] > state.exp_q
        grad = a0 - err
        gsq = state.exp_gsq + grad * grad
        exp_q = state.exp_q - (safe_scale / np.sqrt(3.0)) * grad / np.sqrt(
            np.where(gsq > 0, gsq, 1.0)
        )
        exp_q = np.where(active, exp_q, 0.0)
        # retire experts whose interval ended, start the one of round t + 1
        alive = active & (state.death >= t + 1)
        birth = np.where(alive, state.birth, 0)
        new = state._replace(
            exp_q=exp_q,
            exp_gsq=gsq,
            g_sum=g_sum,
            wealth=wealth,
            weight=np.where(alive, weight, 0.0),
            birth=birth,
            death=np.where(alive, state.death, 0),
            scale=scale,
            t=np.asarray(t),
        )
        q_prev = _aggregate(new, new.weight, alive) if alive.any() else state.q
        new = _spawn(new, t + 1, q_prev)
        q = _aggregate(new, new.weight, new.birth > 0)
        new = new._replace(q=q)
        return q, new

    return OnlineAlgorithm("saocp", _init, _update)
