"""Exact ancestral sampling from an ARM (hence from an EBM after :func:`ebm_to_arm`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icml26_shared.checks import SeedLike, check_choice, check_positive_int, rng_from_seed

from ._backend import check_table, lse
from ._maps import _reachable_dead_check
from ._space import TERMINAL, SequenceSpace, _Layered, as_space

__all__ = ["sample"]


def sample(
    q: Any,
    space: _Layered,
    n: int,
    seed: SeedLike = None,
    *,
    prompt: Any = 0,
    output: str = "tuples",
) -> Any:
    """Draw ``n`` sequences y ~ p_q exactly, token by token (Gumbel-max on q(s_t, ·)).

    Args:
        q: ARM logits ``(n_states, A)`` (numpy or jax; sampling runs in numpy).
        space: the space of q.
        n: number of samples.
        seed: seed or numpy Generator.
        prompt: a prompt id, or ``n`` prompt ids.
        output: ``"tuples"`` (list of token tuples), ``"array"`` (``(n, max_len)`` padded with
            −1) or ``"index"`` (indices into ``space.sequences()``; tries only).

    >>> space = SequenceSpace(2, 3)
    >>> q = np.zeros(space.shape)
    >>> len(sample(q, space, 5, seed=0))
    5
    """
    space = as_space(space)
    n = check_positive_int(n, "n")
    check_choice(output, "output", ("tuples", "array", "index"))
    if output == "index" and not isinstance(space, SequenceSpace):
        raise ValueError("output='index' needs a SequenceSpace (a trie), got a FactoredSpace")
    q = np.asarray(check_table(q, space, "q"))
    v = lse(q, np)
    _reachable_dead_check(q, v, space)
    rng = rng_from_seed(seed)
    prompts = space._prompt_array(prompt, n)
    T = space.max_len
    tokens = np.full((n, T), -1, dtype=np.int64)
    state = prompts.copy()
    last_state = np.zeros(n, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    for t in range(T):
        idx = np.nonzero(alive)[0]
        if idx.size == 0:
            break
        s = state[idx]
        g = rng.gumbel(size=(idx.size, space.vocab_size))
        a = np.argmax(q[s] + g, axis=1)
        tokens[idx, t] = a
        nxt = space.children[s, a]
        done = nxt == TERMINAL
        last_state[idx[done]] = s[done]
        alive[idx[done]] = False
        state[idx[~done]] = nxt[~done]
    if output == "array":
        return tokens
    if output == "index":
        rows = np.arange(n)
        lengths = (tokens >= 0).sum(axis=1)
        return space.leaf[last_state, tokens[rows, lengths - 1]]
    return [tuple(int(x) for x in row if x >= 0) for row in tokens]
