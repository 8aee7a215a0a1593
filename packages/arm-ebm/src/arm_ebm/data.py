"""Tasks (generated data): the planning task of the spec: {a, b, c} + EOS, 6–10 letters then EOS, #a = #b.

p0 is a random bigram ARM over the 4 tokens; the EBM is R(y) = log p0(y) plus a hard global
constraint (−inf unless the length is valid and #a = #b). The constraint is only checkable at
EOS, so an ARM that samples valid outputs must plan ahead: the exact backup shifts the logits of
'a' and 'b' by the imbalance #a − #b and the remaining length (the lookahead).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import SeedLike, check_positive, check_positive_int, rng_from_seed

from ._maps import arm_to_ebm
from ._space import FactoredSpace, SequenceSpace

__all__ = ["PlanningTask", "keyed_task_reward", "planning_task", "task_key_step"]

A_TOK, B_TOK, C_TOK, EOS = 0, 1, 2, 3


@dataclass
class PlanningTask:
    """Everything the planning experiment needs, on the trie and on the keyed space."""

    space: SequenceSpace
    bigram: NDArray[np.float64]  # (4 contexts: start, a, b, c) x 4 tokens, logits
    q0: NDArray[np.float64]  # p0 as ARM logits on the trie
    q_myopic: NDArray[np.float64]  # p0 with invalid EOS masked
    r: NDArray[np.float64]  # EBM step rewards: log p0 steps + constraint at EOS
    valid: NDArray[np.bool_]  # over space.sequences()
    imbalance: NDArray[np.int64]  # #a - #b of each state
    last: NDArray[np.int64]  # last token + 1 of each state (0 = none)
    keyed: FactoredSpace  # key = (#a - #b, last token), depth implicit
    key_of_state: NDArray[np.int64]  # trie state -> keyed state
    min_letters: int
    max_letters: int


def _eos_ok(depth: NDArray, imbalance: NDArray, lo: int, hi: int) -> NDArray[np.bool_]:
    return (depth >= lo) & (depth <= hi) & (imbalance == 0)


def task_key_step(key: tuple[int, int], a: int) -> tuple[int, int]:
    """The task's key (#a − #b, last token + 1) after emitting ``a`` (root key (0, 0))."""
    return (key[0] + (a == A_TOK) - (a == B_TOK), a + 1)


def planning_task(
    seed: SeedLike = 0, *, min_letters: int = 6, max_letters: int = 10, scale: float = 1.0
) -> PlanningTask:
    """Build the task with a bigram p0 whose logits are ``scale``·N(0, 1) (seeded)."""
    min_letters = check_positive_int(min_letters, "min_letters", minimum=0)
    max_letters = check_positive_int(max_letters, "max_letters")
    if max_letters < min_letters:
        raise ValueError(
            f"max_letters must be >= min_letters, got max_letters={max_letters} < "
            f"min_letters={min_letters}"
        )
    scale = check_positive(scale, "scale", strict=False)
    T = max_letters + 1
    rng = rng_from_seed(seed)
    W = scale * rng.normal(size=(4, 4))
    space = SequenceSpace(4, T, eos=EOS)
    n = space.n_states
    imbalance = np.zeros(n, dtype=np.int64)
    last = np.zeros(n, dtype=np.int64)
    for sl in space.depth_slices()[1:]:
        par, act = space.parent[sl], space.parent_action[sl]
        imbalance[sl] = imbalance[par] + (act == A_TOK) - (act == B_TOK)
        last[sl] = act + 1
    q0 = np.where(space.allowed, W[last], -np.inf)
    ok = _eos_ok(space.depth, imbalance, min_letters, max_letters)
    r = np.array(arm_to_ebm(q0, space))
    r[~ok, EOS] = -np.inf
    q_myopic = q0.copy()
    only_eos = space.allowed.sum(axis=1) == 1
    q_myopic[~ok & ~only_eos, EOS] = -np.inf
    valid = ok[space.leaf_state]

    keyed = FactoredSpace(4, T, key_fn=lambda p, y: (0, 0), eos=EOS, step=task_key_step)
    return PlanningTask(
        space=space,
        bigram=W,
        q0=q0,
        q_myopic=q_myopic,
        r=r,
        valid=valid,
        imbalance=imbalance,
        last=last,
        keyed=keyed,
        key_of_state=keyed.states_of(space),
        min_letters=min_letters,
        max_letters=max_letters,
    )


def keyed_task_reward(
    keyed: FactoredSpace, bigram: NDArray[np.float64], min_letters: int, max_letters: int
) -> NDArray[np.float64]:
    """The task's step reward r = arm_to_ebm(q0) + constraint, tabulated on a keyed space
    (any ``max_len``; used for the long factored backups)."""
    lse_rows = np.log(np.exp(bigram).sum(axis=1))
    T = keyed.max_len

    def row(depth: int, key: tuple[int, int]) -> NDArray[np.float64]:
        imb, last = key
        # V_q0 of the next state: lse of its bigram row, only EOS at depth T−1, 0 after EOS
        if depth + 1 == T - 1:
            nxt = np.array([bigram[1, EOS], bigram[2, EOS], bigram[3, EOS], 0.0])
        else:
            nxt = np.array([lse_rows[1], lse_rows[2], lse_rows[3], 0.0])
        out = bigram[last] - nxt
        if not (min_letters <= depth <= max_letters and imb == 0):
            out[EOS] = -np.inf
        return out

    return keyed.tabulate(row)
