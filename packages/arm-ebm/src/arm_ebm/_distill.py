"""Distillation EBM → ARM (Blondel et al., arXiv 2512.15605, the distillation section).

(a) exact: :func:`ebm_to_arm` (tabular, KL = 0);
(b) :func:`fit_mle`: maximum likelihood on N exact samples of p_R, per trie state or pooled per
    key (a factored statistic of the prefix), with add-½ smoothing:
    q̂(s, a) = log(count(key(s), a) + ½);
(c) :func:`distill`: a one-hidden-layer MLP q_θ over prefix features trained with optax, either
    on the exact KL(p_R‖p_θ) = Σ_s ρ_R(s)·KL(π_R(·|s)‖π_θ(·|s)) by enumeration or by regressing
    the backed-up logits (offset-free, weighted by ρ_R).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_positive,
    check_positive_int,
    rng_from_seed,
)
from icml26_shared.experiment import progress as track
from icml26_shared.experiment import progress_enabled

from ._backend import check_table, require_jax
from ._kl import kl, visit_probabilities
from ._maps import ebm_to_arm, policy
from ._space import SequenceSpace, _Layered, as_space, as_trie

__all__ = ["DistilledARM", "distill", "fit_mle", "prefix_features"]


def fit_mle(
    samples: Any,
    space: _Layered,
    *,
    keys: Any = None,
    smoothing: float = 0.5,
    prompts: Any = None,
) -> NDArray[np.float64]:
    """Tabular maximum-likelihood ARM from samples: q̂(s, a) = log(n(key(s), a) + smoothing).

    Args:
        samples: a 1-D integer array of indices into ``space.sequences()`` (tries), or token
            sequences (list of tuples or a padded 2-D integer array).
        space: the space.
        keys: None (one count table per state) or an integer array ``(n_states,)`` mapping each
            state to a key id whose counts are pooled (e.g. ``FactoredSpace.states_of(trie)``).
        smoothing: pseudo-count added to every allowed action (> 0).
        prompts: prompt ids of token-sequence samples.

    Returns:
        Logits ``(n_states, A)``, −inf at masked actions.
    """
    space = as_space(space)
    smoothing = check_positive(smoothing, "smoothing")
    A, n = space.vocab_size, space.n_states
    if isinstance(samples, np.ndarray) and samples.ndim == 1 and samples.dtype.kind in "iu":
        trie = as_trie(space, "fit_mle on sequence indices")
        if samples.size == 0:
            raise ValueError("samples must not be empty, got 0 samples")
        if samples.min() < 0 or samples.max() >= trie.n_sequences:
            raise ValueError(
                f"samples must be indices in [0, {trie.n_sequences}), got "
                f"{samples.min()}..{samples.max()}"
            )
        w = np.bincount(samples, minlength=trie.n_sequences).astype(np.float64)
        used = np.nonzero(w)[0]
        states, tokens, weight = trie.paths()[used], trie.sequence_array()[used], w[used]
    else:
        if isinstance(samples, np.ndarray) and samples.ndim == 1:
            raise TypeError(
                "samples must be a 1-D integer array of indices into space.sequences() or token "
                f"sequences (a list of tuples or a padded 2-D integer array), got a 1-D array "
                f"of dtype {samples.dtype}"
            )
        states, tokens, supported = space.walk(samples, prompts, name="samples")
        if not supported.all():
            i = int(np.argmin(supported))
            raise ValueError(f"samples[{i}] takes a masked action: it is outside the space")
        weight = np.ones(states.shape[0])
    valid = states >= 0
    flat = (states * A + tokens)[valid]
    wts = np.broadcast_to(weight[:, None], states.shape)[valid]
    if keys is None:
        counts = np.bincount(flat, weights=wts, minlength=n * A).reshape(n, A)
    else:
        k = np.asarray(keys)
        if k.shape != (n,) or k.dtype.kind not in "iu" or (k.size and k.min() < 0):
            raise ValueError(
                f"keys must be non-negative integer key ids of shape ({n},), got "
                f"dtype {k.dtype} and shape {k.shape}"
            )
        n_keys = int(k.max()) + 1
        kflat = k[flat // A] * A + flat % A
        pooled = np.bincount(kflat, weights=wts, minlength=n_keys * A).reshape(n_keys, A)
        counts = pooled[k]
    return np.where(space.allowed, np.log(counts + smoothing), -np.inf)


def prefix_features(space: SequenceSpace) -> NDArray[np.float64]:
    """Features ``(n_states, F)`` of each state's prefix: one-hot depth, one-hot token at each
    position, token counts / T, one-hot last token (or none), one-hot prompt (several prompts).
    They identify every state of a trie, so an MLP over them can represent any ARM."""
    trie = as_trie(space, "prefix_features")
    A, T = trie.vocab_size, trie.max_len
    blocks = []
    for d, sl in enumerate(trie.depth_slices()):
        pre = trie.prefixes(d)
        m = pre.shape[0]
        f_depth = np.zeros((m, T))
        f_depth[:, d] = 1
        f_pos = np.zeros((m, max(T - 1, 1), A))
        if d:
            f_pos[np.arange(m)[:, None], np.arange(d)[None, :], pre] = 1
        f_count = f_pos.sum(axis=1) / T
        f_last = np.zeros((m, A + 1))
        f_last[np.arange(m), pre[:, -1] + 1 if d else np.zeros(m, dtype=np.int64)] = 1
        parts = [f_depth, f_pos.reshape(m, -1), f_count, f_last]
        if trie.n_prompts > 1:
            f_prompt = np.zeros((m, trie.n_prompts))
            f_prompt[np.arange(m), trie.prompt[sl]] = 1
            parts.append(f_prompt)
        blocks.append(np.concatenate(parts, axis=1))
    return np.concatenate(blocks)


@dataclass
class DistilledARM:
    """A trained MLP ARM: ``q`` on every state, its parameters and training curve."""

    q: NDArray[np.float64]
    params: dict[str, NDArray[np.float64]]
    losses: NDArray[np.float64]
    kl: float
    hidden: int
    objective: str
    extras: dict[str, Any] = field(default_factory=dict)


def distill(
    r: Any,
    space: _Layered,
    *,
    hidden: int = 16,
    features: Any = None,
    objective: str = "kl",
    steps: int = 2000,
    learning_rate: float = 1e-2,
    seed: SeedLike = 0,
    progress: bool | None = None,
) -> DistilledARM:
    """Train q_θ(s) = W₂ tanh(W₁ φ(s) + b₁) + b₂ (jax + optax, Adam with cosine decay, float64).

    Args:
        r: EBM step rewards ``(n_states, A)`` (use :func:`reward_to_steps` for R over sequences).
        space: the space (prefix features by default need a :class:`SequenceSpace`).
        hidden: width of the hidden layer.
        features: ``(n_states, F)`` features φ(s); default :func:`prefix_features`.
        objective: ``"kl"`` (exact KL(p_R‖p_θ) by enumeration) or ``"regress"`` (ρ_R-weighted
            squared error of the per-state-centred logits against the backed-up q*).
        steps, learning_rate, seed: optimisation settings.
        progress: show a progress bar (default: only when stderr is a terminal).

    States with identical features and masks share one row of the loss (exact, cheaper).
    """
    jax, optax = require_jax()
    import jax.numpy as jnp

    space = as_space(space)
    hidden = check_positive_int(hidden, "hidden")
    steps = check_positive_int(steps, "steps")
    learning_rate = check_positive(learning_rate, "learning_rate")
    check_choice(objective, "objective", ("kl", "regress"))
    r = np.asarray(check_table(r, space, "r"))
    X = prefix_features(space) if features is None else np.asarray(features, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != space.n_states or not np.isfinite(X).all():
        raise ValueError(
            f"features must be a finite array of shape ({space.n_states}, F), got {X.shape}"
        )
    q_star = ebm_to_arm(r, space)
    pi_star = policy(q_star, space)
    rho = visit_probabilities(q_star, space)
    allowed = space.allowed
    S = q_star > -np.inf
    if objective == "kl":
        w = np.where(S, rho[:, None] * pi_star, 0.0)
        const = float(np.sum(np.where(w > 0, w * np.log(np.where(w > 0, pi_star, 1.0)), 0.0)))
    else:
        cnt = np.maximum(S.sum(axis=1, keepdims=True), 1)
        qs = np.where(S, q_star, 0.0)
        target = np.where(S, qs - qs.sum(axis=1, keepdims=True) / cnt, 0.0)
        w = np.where(S, rho[:, None] / cnt, 0.0)
        const = 0.0
    rows = np.concatenate([X, allowed.astype(np.float64)], axis=1)
    live = w.sum(axis=1) > 0
    uniq, inv = np.unique(rows[live], axis=0, return_inverse=True)
    inv = inv.ravel()
    Xu, Mu = uniq[:, : X.shape[1]], uniq[:, X.shape[1] :] > 0.5
    Wu = np.zeros((uniq.shape[0], space.vocab_size))
    np.add.at(Wu, inv, w[live])
    if objective == "regress":
        Tu = np.zeros_like(Wu)
        np.add.at(Tu, inv, w[live] * target[live])
        Tu = np.where(Wu > 0, Tu / np.where(Wu > 0, Wu, 1.0), 0.0)
    rng = rng_from_seed(seed)
    F, A = X.shape[1], space.vocab_size
    with jax.enable_x64(True):
        params = {
            "W1": jnp.asarray(rng.normal(size=(F, hidden)) / np.sqrt(F)),
            "b1": jnp.zeros(hidden),
            "W2": jnp.asarray(rng.normal(size=(hidden, A)) * 0.1 / np.sqrt(hidden)),
            "b2": jnp.zeros(A),
        }
        Xj, Mj, Wj = jnp.asarray(Xu), jnp.asarray(Mu), jnp.asarray(Wu)
        Tj = jnp.asarray(Tu) if objective == "regress" else None

        def logits(p: dict, x: Any) -> Any:
            return jnp.tanh(x @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]

        def loss(p: dict) -> Any:
            z = logits(p, Xj)
            if objective == "kl":
                lp = jax.nn.log_softmax(jnp.where(Mj, z, -jnp.inf), axis=1)
                return const - jnp.sum(jnp.where(Wj > 0, Wj * lp, 0.0))
            zc = jnp.where(Wj > 0, z, 0.0)
            cnt = jnp.maximum((Wj > 0).sum(axis=1, keepdims=True), 1)
            zc = zc - zc.sum(axis=1, keepdims=True) / cnt
            return jnp.sum(jnp.where(Wj > 0, Wj * (zc - Tj) ** 2, 0.0))

        sched = optax.cosine_decay_schedule(learning_rate, steps, alpha=0.01)
        opt = optax.adam(sched)
        state = opt.init(params)

        @jax.jit
        def step(p: dict, s: Any) -> tuple:
            val, g = jax.value_and_grad(loss)(p)
            upd, s = opt.update(g, s, p)
            return optax.apply_updates(p, upd), s, val

        losses = np.empty(steps)
        for i in track(
            range(steps),
            enabled=progress_enabled(progress),
            total=steps,
            desc=f"MLP {hidden}",
        ):
            params, state, val = step(params, state)
            losses[i] = float(val)
        z_all = np.asarray(logits(params, jnp.asarray(X)))
        out = {k: np.asarray(v) for k, v in params.items()}
    q_hat = np.where(allowed, z_all, -np.inf)
    return DistilledARM(
        q=q_hat,
        params=out,
        losses=losses,
        kl=float(np.sum(np.atleast_1d(kl(q_star, q_hat, space)))),
        hidden=hidden,
        objective=objective,
        extras={"unique_rows": int(uniq.shape[0])},
    )
