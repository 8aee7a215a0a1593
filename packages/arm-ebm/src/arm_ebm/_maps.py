"""The exact maps between autoregressive models (ARMs) and energy-based models (EBMs).

Notation (Blondel et al., "Autoregressive Language Models are Secretly Energy-Based Models",
arXiv 2512.15605, ICML 2026): a state s is prompt ⊕ prefix, q(s, a) are next-token logits,
π_q(a|s) = softmax q(s, ·), p_q(y) = Π_t π_q(y_t|s_t); r(s, a) are step rewards, R(y) = Σ_t
r(s_t, y_t) and p_R(y) = exp R(y) / Z.

* EBM → ARM (soft Bellman backup from the leaves): q(s, a) = r(s, a) + V(s⊕a),
  V(s) = logsumexp_a q(s, a), V(terminal) = 0; then V(root) = log Z and p_q = p_R.
* ARM → EBM (local, closed form): r(s, a) = q(s, a) − V_q(s⊕a), V_q(s) = logsumexp_a q(s, a);
  telescoping gives R(y) = log p_q(y) + V_q(root).

Every function takes numpy or jax arrays and returns the same kind (jax arrays stay
differentiable). Enable ``jax_enable_x64`` for float64 in jax.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import check_positive

from ._backend import check_table, check_vector, dispatch, get_xp, lse
from ._space import SequenceSpace, _Layered, as_space, as_trie

__all__ = [
    "arm_to_ebm",
    "ebm_to_arm",
    "kl_regularized_policy",
    "log_partition",
    "log_policy",
    "log_prob_arm",
    "log_prob_ebm",
    "policy",
    "reward_to_steps",
    "sequence_reward",
    "soft_values",
]


def _per_prompt(values: Any, space: _Layered) -> Any:
    return values[0] if space.n_prompts == 1 else values


def _backup(r: Any, space: _Layered) -> tuple[Any, Any]:
    """Soft Bellman backup of a checked r table: (q table, V per state)."""
    return dispatch(space, _backup_core, r)


def _backup_core(space: _Layered, r: Any) -> tuple[Any, Any]:
    xp = get_xp(r)
    T = space.max_len
    q_blocks: list[Any] = [None] * T
    v_blocks: list[Any] = [None] * T
    slices = space.depth_slices()
    for d in range(T - 1, -1, -1):
        sl = slices[d]
        ch = space.children[sl]
        if d == T - 1 or v_blocks[d + 1].shape[0] == 0:
            vc = xp.zeros(ch.shape)
        else:
            local = np.clip(ch - space.offsets[d + 1], 0, None)
            vc = xp.where(xp.asarray(ch >= 0), v_blocks[d + 1][local], 0.0)
        q_blocks[d] = r[sl] + vc
        v_blocks[d] = lse(q_blocks[d], xp)
    return xp.concatenate(q_blocks), xp.concatenate(v_blocks)


def _check_roots(v_root: Any, what: str) -> None:
    values = v_root if get_xp(v_root) is np else _maybe(v_root)
    if values is not None and np.isneginf(values).any():
        p = int(np.argmax(np.isneginf(values)))
        raise ValueError(
            f"{what} gives every sequence of prompt {p} probability 0 (log Z = -inf): "
            "p_R is undefined"
        )


def _maybe(x: Any) -> NDArray | None:
    import jax

    return None if isinstance(x, jax.core.Tracer) else np.asarray(x)


def soft_values(r: Any, space: _Layered) -> Any:
    """Soft values V(s) = log Σ_{completions y of s} exp(Σ_{t ≥ |s|} r(s_t, y_t)), per state.

    A dead state (every completion has reward −inf) has V = −inf.

    >>> space = SequenceSpace(2, 2)
    >>> float(soft_values(np.zeros(space.shape), space)[0])  # log 4
    1.3862943611198906
    """
    space = as_space(space)
    return _backup(check_table(r, space, "r"), space)[1]


def ebm_to_arm(r: Any, space: _Layered) -> Any:
    """EBM → ARM: logits q(s, a) = r(s, a) + V(s⊕a) by soft Bellman backup (p_q = p_R).

    Args:
        r: step rewards ``(n_states, vocab_size)``, finite or −inf; masked entries are ignored.
        space: a :class:`SequenceSpace` or :class:`FactoredSpace`.

    Returns:
        q of the same shape and array kind; −inf exactly where no completion is possible.

    >>> space = SequenceSpace(2, 2)
    >>> R = np.log([1.0, 2.0, 3.0, 4.0])   # rewards of (0,0), (0,1), (1,0), (1,1)
    >>> q = ebm_to_arm(reward_to_steps(R, space), space)
    >>> np.round(np.exp(log_prob_arm(q, space)), 3)
    array([0.1, 0.2, 0.3, 0.4])
    """
    space = as_space(space)
    q, v = _backup(check_table(r, space, "r"), space)
    _check_roots(v[: space.n_prompts], "r")
    return q


def _reachable_dead_check(q: Any, vq: Any, space: _Layered) -> None:
    if get_xp(q) is not np:
        qv, vv = _maybe(q), _maybe(vq)
        if qv is None or vv is None:
            return
    else:
        qv, vv = q, vq
    dead = np.isneginf(vv)
    if dead[: space.n_prompts].any():
        p = int(np.argmax(dead[: space.n_prompts]))
        raise ValueError(f"q must have a finite logit at every root, got all -inf at prompt {p}")
    ch = space.children
    bad = (ch >= 0) & np.isfinite(qv) & dead[np.maximum(ch, 0)]
    if bad.any():
        s, a = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"q must not reach a state whose logits are all -inf, got a finite q at state {s}, "
            f"action {a} leading to state {int(ch[s, a])} (the ARM is undefined there)"
        )


def arm_to_ebm(q: Any, space: _Layered) -> Any:
    """ARM → EBM in closed form: r(s, a) = q(s, a) − V_q(s⊕a), V_q = logsumexp of the next
    state's logits (0 at a terminal). Inverse of :func:`ebm_to_arm` on the states p_R reaches;
    q → r → q returns q itself, per-state offsets included.

    >>> space = SequenceSpace(3, 3)
    >>> q = np.random.default_rng(0).normal(size=space.shape)
    >>> bool(np.allclose(ebm_to_arm(arm_to_ebm(q, space), space), q, atol=1e-13))
    True
    """
    space = as_space(space)
    q = check_table(q, space, "q")
    xp = get_xp(q)
    vq = lse(q, xp)
    _reachable_dead_check(q, vq, space)
    return dispatch(space, _arm_to_ebm_core, q, vq)


def _arm_to_ebm_core(space: _Layered, q: Any, vq: Any) -> Any:
    xp = get_xp(q)
    ch = space.children
    vc = xp.where(xp.asarray(ch >= 0), vq[np.maximum(ch, 0)], 0.0)
    with np.errstate(invalid="ignore"):
        return xp.where(q == -xp.inf, -xp.inf, q - vc)


def log_policy(q: Any, space: _Layered) -> Any:
    """log π_q(a|s) = q(s, a) − logsumexp q(s, ·); −inf at masked and −inf logits."""
    space = as_space(space)
    return dispatch(space, _log_policy_core, check_table(q, space, "q"))


def _log_policy_core(space: _Layered, q: Any) -> Any:
    xp = get_xp(q)
    v = lse(q, xp)
    with np.errstate(invalid="ignore"):
        return xp.where(q == -xp.inf, -xp.inf, q - v[:, None])


def policy(q: Any, space: _Layered) -> Any:
    """π_q(a|s). At a dead state (all logits −inf; unreachable) π is undefined: it is returned
    uniform over the allowed actions there, flagged by ``soft_values`` = −inf."""
    space = as_space(space)
    lp = log_policy(q, space)
    xp = get_xp(lp)
    p = xp.exp(lp)
    allowed = xp.asarray(space.allowed)
    dead = xp.all(lp == -xp.inf, axis=1)
    uniform = allowed / allowed.sum(axis=1, keepdims=True)
    return xp.where(dead[:, None], uniform, p)


def _gather_sum(table: Any, states: NDArray, tokens: NDArray, space: _Layered) -> Any:
    return dispatch(space, _gather_core, table, states, tokens)


def _gather_core(space: _Layered, table: Any, states: Any, tokens: Any) -> Any:
    xp = get_xp(table)
    valid = states >= 0
    vals = table[xp.maximum(states, 0), xp.maximum(tokens, 0)]
    return xp.where(valid, vals, 0.0).sum(axis=1)


def _paths_of(space: _Layered, sequences: Any, prompts: Any) -> tuple:
    if sequences is None:
        trie = as_trie(space, "sequences=None (all sequences)")
        if prompts is not None:
            raise ValueError("prompts must be None when sequences is None")
        return trie.paths(), trie.sequence_array(), np.ones(trie.n_sequences, bool), None
    states, tokens, supported = space.walk(sequences, prompts)
    p = np.asarray(states[:, 0]) if states.size else np.zeros(0, np.int64)
    return states, tokens, supported, space.prompt[np.maximum(p, 0)]


def sequence_reward(r: Any, space: _Layered, sequences: Any = None, prompts: Any = None) -> Any:
    """R(y) = Σ_t r(s_t, y_t) for ``sequences`` (default: all of ``space.sequences()``).

    A sequence that takes a masked action gets −inf.
    """
    space = as_space(space)
    r = check_table(r, space, "r")
    xp = get_xp(r)
    states, tokens, supported, _ = _paths_of(space, sequences, prompts)
    out = _gather_sum(r, states, tokens, space)
    return xp.where(xp.asarray(supported), out, -xp.inf)


def log_prob_arm(q: Any, space: _Layered, sequences: Any = None, prompts: Any = None) -> Any:
    """log p_q(y) = Σ_t log π_q(y_t|s_t) for ``sequences`` (default: all of
    ``space.sequences()``); ``prompts`` gives each sequence's prompt id (default 0).

    Sequences must be complete (EOS last, or exactly T tokens without EOS) with tokens in the
    vocabulary; one that takes a masked action has log-probability −inf.
    """
    space = as_space(space)
    lp = log_policy(q, space)
    xp = get_xp(lp)
    states, tokens, supported, _ = _paths_of(space, sequences, prompts)
    out = _gather_sum(lp, states, tokens, space)
    return xp.where(xp.asarray(supported), out, -xp.inf)


def log_partition(r: Any, space: _Layered) -> Any:
    """log Z = log Σ_y exp R(y), per prompt (a scalar when there is one prompt).

    ``r`` is either a step-reward table ``(n_states, A)`` (soft Bellman backup: V(root)) or a
    sequence reward R ``(n_sequences,)`` over ``space.sequences()`` (log-sum-exp per prompt).

    >>> space = SequenceSpace(3, 4, eos=2)
    >>> R = np.zeros(space.n_sequences)
    >>> bool(np.isclose(log_partition(R, space), np.log(space.n_sequences)))
    True
    """
    space = as_space(space)
    ndim = len(getattr(r, "shape", np.shape(r)))
    if ndim == 1:
        trie = as_trie(space, "a sequence reward R")
        R = check_vector(r, trie.n_sequences, "R", "one reward per element of space.sequences()")
        xp = get_xp(R)
        bounds = np.searchsorted(trie.sequence_prompt, np.arange(trie.n_prompts + 1))
        vals = [lse(R[bounds[p] : bounds[p + 1]], xp) for p in range(trie.n_prompts)]
        return _per_prompt(xp.stack(vals), space)
    _, v = _backup(check_table(r, space, "r"), space)
    return _per_prompt(v[: space.n_prompts], space)


def log_prob_ebm(r: Any, space: _Layered, sequences: Any = None, prompts: Any = None) -> Any:
    """log p_R(y) = R(y) − log Z(prompt of y), with ``r`` a step-reward table or R over
    ``space.sequences()``."""
    space = as_space(space)
    ndim = len(getattr(r, "shape", np.shape(r)))
    if ndim == 1:
        trie = as_trie(space, "a sequence reward R")
        R = check_vector(r, trie.n_sequences, "R", "one reward per element of space.sequences()")
        xp = get_xp(R)
        logz = xp.atleast_1d(log_partition(R, trie))
        _check_roots(logz, "R")
        if sequences is None:
            if prompts is not None:
                raise ValueError("prompts must be None when sequences is None")
            return R - logz[trie.sequence_prompt]
        idx = trie.sequence_index(sequences, prompts)
        p = trie._prompt_array(prompts, idx.size)
        return xp.where(xp.asarray(idx >= 0), R[np.maximum(idx, 0)] - logz[p], -xp.inf)
    rt = check_table(r, space, "r")
    xp = get_xp(rt)
    _, v = _backup(rt, space)
    _check_roots(v[: space.n_prompts], "r")
    states, tokens, supported, prompt_of = _paths_of(space, sequences, prompts)
    if prompt_of is None:
        prompt_of = as_trie(space, "").sequence_prompt
    out = _gather_sum(rt, states, tokens, space) - v[prompt_of]
    return xp.where(xp.asarray(supported), out, -xp.inf)


def reward_to_steps(R: Any, space: SequenceSpace) -> Any:
    """Place a sequence reward R (array over ``space.sequences()``) on the terminal step:
    r(s, a) = R(s⊕a) when s⊕a is complete, 0 otherwise, −inf where a is masked."""
    trie = as_trie(space, "reward_to_steps")
    R = check_vector(R, trie.n_sequences, "R", "one reward per element of space.sequences()")
    xp = get_xp(R)
    r = xp.where(xp.asarray(trie.allowed), 0.0, -xp.inf)
    if xp is np:
        r = r.astype(np.float64)
        r[trie.leaf_state, trie.leaf_action] = R
        return r
    return r.astype(R.dtype).at[trie.leaf_state, trie.leaf_action].set(R)


def kl_regularized_policy(q_ref: Any, r: Any, beta: float, space: _Layered) -> Any:
    """The KL-regularised (RLHF-optimal) policy p ∝ p_ref · exp(R/β) as ARM logits.

    argmax_p E_p[R] − β·KL(p‖p_ref) is the EBM with step reward r_ref + r/β, r_ref =
    :func:`arm_to_ebm` (q_ref); it satisfies R(y) = β·log(p(y)/p_ref(y)) + β·log Z (DPO's
    implicit reward). ``r`` is a step-reward table or, on a trie, R over ``space.sequences()``.
    """
    space = as_space(space)
    beta = check_positive(beta, "beta")
    ndim = len(getattr(r, "shape", np.shape(r)))
    if ndim == 1:
        r = reward_to_steps(r, as_trie(space, "a sequence reward R"))
    r = check_table(r, space, "r")
    r_ref = arm_to_ebm(q_ref, space)
    return ebm_to_arm(r_ref + r / beta, space)
