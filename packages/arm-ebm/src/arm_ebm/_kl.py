"""Exact KL divergences between sequence distributions and our distillation bound.

KL by the chain rule: KL(p‖p̂) = Σ_s ρ(s)·KL(π(·|s)‖π̂(·|s)), ρ(s) = P_p(visit s), computed by
one forward pass over the layered state graph (exact on a trie and on a factored space).

Our bound (ours, not the paper's: the paper's bound was not retrievable). With
δ_s = q(s, ·) − q̂(s, ·) on S_s = supp π(·|s) and osc_s = max_{S_s} δ_s − min_{S_s} δ_s,
write KL_s = E_π[δ] + log E_π[e^{−δ}] − log π̂(S_s|s). Hoeffding's lemma gives
log E_π e^{−δ} ≤ −E_π δ + osc_s²/8, so

    KL(p‖p̂) ≤ Σ_s ρ(s)·(osc_s²/8 − log π̂(S_s|s))  ≤  E_p|y|·ε²/2 + Σ_s ρ(s)·(−log π̂(S_s|s)),

ε = max_s osc_s / 2 and Σ_s ρ(s) = E_p|y|: linear in length, quadratic in the logit error, blind
to per-state offsets. The support term vanishes when π̂ puts no mass outside supp π (the spec's
case); it is our extension for hard constraints (q = −inf where q̂ is finite). The reverse KL is
the same function with the arguments swapped (ρ under p̂).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._backend import check_table, dispatch, get_xp, lse
from ._maps import _per_prompt, log_policy, policy
from ._space import _Layered, as_space

__all__ = ["kl", "kl_bound", "visit_probabilities"]


def _scatter_add(xp: Any, n: int, idx: np.ndarray, vals: Any) -> Any:
    if xp is np:
        return np.bincount(idx, weights=vals, minlength=n)
    return xp.zeros(n, dtype=vals.dtype).at[idx].add(vals)


def visit_probabilities(q: Any, space: _Layered) -> Any:
    """ρ(s) = P_{p_q}(the sequence passes through s), per state (1 at each root)."""
    space = as_space(space)
    return dispatch(space, _visit_core, policy(q, space))


def _visit_core(space: _Layered, pi: Any) -> Any:
    xp = get_xp(pi)
    blocks = [xp.ones(space.n_prompts, dtype=pi.dtype)]
    slices = space.depth_slices()
    for d in range(space.max_len - 1):
        sl, nxt = slices[d], slices[d + 1]
        ch = space.children[sl]
        flow = blocks[d][:, None] * pi[sl]
        keep = ch >= 0
        idx = (ch - nxt.start)[keep]
        blocks.append(_scatter_add(xp, nxt.stop - nxt.start, idx, flow[np.nonzero(keep)]))
    return xp.concatenate(blocks)


def _by_prompt(xp: Any, space: _Layered, per_state: Any) -> Any:
    return _per_prompt(_scatter_add(xp, space.n_prompts, space.prompt, per_state), space)


def kl(q_p: Any, q_q: Any, space: _Layered) -> Any:
    """KL(p_{q_p} ‖ p_{q_q}) exactly, per prompt (a scalar for one prompt); +inf when p_{q_q}
    misses part of p_{q_p}'s support. For an EBM pass ``ebm_to_arm(r, space)``.

    >>> from arm_ebm import SequenceSpace
    >>> space = SequenceSpace(3, 3)
    >>> q = np.random.default_rng(0).normal(size=space.shape)
    >>> float(kl(q, q + 5.0, space)) < 1e-15   # per-state offsets leave the ARM unchanged
    True
    """
    space = as_space(space)
    lp, lq = log_policy(q_p, space), log_policy(q_q, space)
    rho = visit_probabilities(q_p, space)
    return dispatch(space, _kl_core, lp, lq, rho)


def _kl_core(space: _Layered, lp: Any, lq: Any, rho: Any) -> Any:
    xp = get_xp(lp, lq)
    pi = xp.exp(lp)
    pos = pi > 0
    diff = xp.where(pos, lp - xp.where(pos, lq, 0.0), 0.0)
    ks = xp.maximum(xp.where(pos, pi * diff, 0.0).sum(axis=1), 0.0)  # roundoff
    per_state = xp.where(rho > 0, rho * ks, 0.0)
    return _by_prompt(xp, space, per_state)


def kl_bound(q_star: Any, q_hat: Any, space: _Layered, *, uniform: bool = False) -> Any:
    """Our upper bound on KL(p_{q_star} ‖ p_{q_hat}) (see the module docstring; ours).

    Args:
        q_star: logits of the first distribution (e.g. the exact backup of an EBM).
        q_hat: logits of the second (e.g. a distilled ARM).
        uniform: False for the state-wise sum Σ_s ρ(s)(osc_s²/8 − log π̂(S_s)); True for the
            coarser E|y|·ε²/2 + support term.
    """
    space = as_space(space)
    qs = np.asarray(check_table(q_star, space, "q_star"))
    qh = np.asarray(check_table(q_hat, space, "q_hat"))
    rho = np.asarray(visit_probabilities(qs, space))
    S = qs > -np.inf
    with np.errstate(invalid="ignore"):
        delta = np.where(S, qs - qh, 0.0)  # +inf where q_hat = -inf on S
    hi = np.where(S, delta, -np.inf).max(axis=1)
    lo = np.where(S, delta, np.inf).min(axis=1)
    alive = (rho > 0) & S.any(axis=1)
    with np.errstate(invalid="ignore"):
        osc = np.where(alive, hi - lo, 0.0)
    osc = np.where(np.isnan(osc), np.inf, osc)
    with np.errstate(invalid="ignore"):
        support = lse(np.where(S, qh, -np.inf), np) - lse(qh, np)
        term = np.where(alive, -support, 0.0)
    term = np.where(np.isnan(term), np.inf, term)
    if not uniform:
        per_state = np.where(alive, rho * (osc**2 / 8 + term), 0.0)
        return _by_prompt(np, space, per_state)
    eps = np.zeros(space.n_prompts)
    np.maximum.at(eps, space.prompt[alive], osc[alive] / 2)
    length = _scatter_add(np, space.n_prompts, space.prompt, np.where(alive, rho, 0.0))
    supp = _scatter_add(np, space.n_prompts, space.prompt, np.where(alive, rho * term, 0.0))
    return _per_prompt(length * eps**2 / 2 + supp, space)
