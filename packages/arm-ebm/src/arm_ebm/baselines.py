"""Reference implementations the package is tested and benchmarked against.

* :func:`brute_force_log_partition`: ``scipy.special.logsumexp`` over the enumerated sequence
  rewards, per prompt (what users reach for without the backup).
* :func:`brute_force_arm`: the ARM logits of an EBM from one log-sum-exp over the completions of
  every state, q(s, a) = log Σ_{y ⊒ s⊕a} exp R(y) − R_prefix(s) (a Python loop over states).
* :func:`rejection_sample`: exact samples of p_R when R = log p0 + hard constraint, by drawing
  from p0 and keeping the valid sequences.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from icml26_shared.checks import SeedLike, check_positive_int, rng_from_seed

from ._backend import check_table, check_vector
from ._maps import sequence_reward
from ._sampling import sample
from ._space import SequenceSpace, as_trie

__all__ = ["brute_force_arm", "brute_force_log_partition", "rejection_sample"]


def brute_force_log_partition(R: Any, space: SequenceSpace) -> float | NDArray[np.float64]:
    """log Z per prompt by ``scipy.special.logsumexp`` over R (array over ``sequences()``)."""
    trie = as_trie(space, "brute_force_log_partition")
    R = np.asarray(check_vector(R, trie.n_sequences, "R", "R(y)"))
    out = np.array([logsumexp(R[trie.sequence_prompt == p]) for p in range(trie.n_prompts)])
    return float(out[0]) if trie.n_prompts == 1 else out


def brute_force_arm(r: Any, space: SequenceSpace) -> NDArray[np.float64]:
    """EBM → ARM by enumeration: one ``logsumexp`` over the completions of each state."""
    trie = as_trie(space, "brute_force_arm")
    r = np.asarray(check_table(r, trie, "r"))
    R = np.asarray(sequence_reward(r, trie))
    paths = trie.paths()
    n = trie.n_states
    total = np.full(n, -np.inf)  # log Σ_{y through s} exp R(y)
    for d in range(trie.max_len):
        col = paths[:, d]
        rows = np.nonzero(col >= 0)[0]
        order = rows[np.argsort(col[rows], kind="stable")]
        keys = col[order]
        sl = trie.depth_slices()[d]
        starts = np.searchsorted(keys, np.arange(sl.start, sl.stop))
        ends = np.searchsorted(keys, np.arange(sl.start, sl.stop), side="right")
        for s, lo, hi in zip(range(sl.start, sl.stop), starts, ends):
            if hi > lo:
                total[s] = logsumexp(R[order[lo:hi]])
    prefix = np.zeros(n)
    for sl in trie.depth_slices()[1:]:
        par = trie.parent[sl]
        prefix[sl] = prefix[par] + r[par, trie.parent_action[sl]]
    ch = trie.children
    through = np.where(ch >= 0, total[np.maximum(ch, 0)], 0.0)
    q = np.where(ch >= 0, through - prefix[:, None], r)
    leafy = trie.leaf >= 0
    q[leafy] = r[leafy]
    return np.where(trie.allowed, q, -np.inf)


def rejection_sample(
    q_proposal: Any,
    accept: Any,
    space: SequenceSpace,
    n_accept: int,
    seed: SeedLike = None,
    *,
    batch: int = 100_000,
    max_draws: int = 10**8,
) -> tuple[NDArray[np.int64], int]:
    """Draw from the ARM ``q_proposal`` until ``n_accept`` sequences pass ``accept`` (a boolean
    array over ``space.sequences()``). Returns (accepted indices, number of draws)."""
    trie = as_trie(space, "rejection_sample")
    n_accept = check_positive_int(n_accept, "n_accept")
    batch = check_positive_int(batch, "batch")
    max_draws = check_positive_int(max_draws, "max_draws")
    acc = np.asarray(accept)
    if acc.shape != (trie.n_sequences,) or acc.dtype != np.bool_:
        raise ValueError(
            f"accept must be a boolean array of shape ({trie.n_sequences},), got "
            f"dtype {acc.dtype} and shape {acc.shape}"
        )
    rng = rng_from_seed(seed)
    kept: list[NDArray[np.int64]] = []
    got, draws = 0, 0
    while got < n_accept:
        if draws >= max_draws:
            raise RuntimeError(f"rejection sampling accepted {got} of {draws} draws: gave up")
        idx = sample(q_proposal, trie, batch, rng, output="index")
        ok = idx[acc[idx]]
        need = n_accept - got
        if ok.size >= need:
            last = np.nonzero(acc[idx])[0][need - 1]
            draws += int(last) + 1
            kept.append(ok[:need])
            got = n_accept
        else:
            draws += batch
            kept.append(ok)
            got += ok.size
    return np.concatenate(kept), draws
