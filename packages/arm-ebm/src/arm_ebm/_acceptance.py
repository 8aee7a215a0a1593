"""The spec's acceptance items 1–6, measured (item 7, the planning task, is in ``_reproduce``).

Each function returns a dict of measured figures with a boolean ``"pass"``; references are
brute-force enumeration (``scipy.special.logsumexp``), finite quantities and statistical tests,
never the code under test checked against itself alone.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy import stats
from scipy.special import logsumexp

from icml26_shared.experiment import progress as track

from ._backend import require_jax
from ._distill import distill, fit_mle, prefix_features
from ._kl import kl, kl_bound
from ._maps import (
    arm_to_ebm,
    ebm_to_arm,
    log_partition,
    log_prob_arm,
    log_prob_ebm,
    reward_to_steps,
    sequence_reward,
)
from ._sampling import sample
from ._space import FactoredSpace, SequenceSpace
from .baselines import brute_force_arm, brute_force_log_partition
from .data import keyed_task_reward, planning_task, task_key_step

__all__ = ["item1", "item2", "item3", "item4", "item5", "item6"]


def _maxdiff(a: Any, b: Any, where: Any = None) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    both_inf = np.isneginf(a) & np.isneginf(b)
    with np.errstate(invalid="ignore"):
        d = np.where(both_inf, 0.0, np.abs(a - b))
    if where is not None:
        d = np.where(where, d, 0.0)
    return float(np.max(d)) if d.size else 0.0


def item1(seeds: int = 5, progress: bool = False) -> dict[str, Any]:
    """Round trips, p_q = p_R and V(root) = log Z on A ∈ {2, 3, 5}, T ∈ {3, 4, 6}, with and
    without EOS, against brute-force enumeration."""
    worst = {"r_round_trip": 0.0, "q_round_trip": 0.0, "prob": 0.0, "log_z": 0.0}
    cases = [(A, T, eos) for A in (2, 3, 5) for T in (3, 4, 6) for eos in (None, A - 1)]
    for A, T, eos in track(cases, enabled=progress, desc="item 1"):
        space = SequenceSpace(A, T, eos=eos)
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            R = rng.normal(size=space.n_sequences)
            r = reward_to_steps(R, space) + np.where(space.allowed, rng.normal(size=space.shape), 0)
            R = sequence_reward(r, space)
            q = ebm_to_arm(r, space)
            worst["r_round_trip"] = max(worst["r_round_trip"], _maxdiff(arm_to_ebm(q, space), r))
            q0 = np.where(space.allowed, rng.normal(size=space.shape) * 2, -np.inf)
            back = ebm_to_arm(arm_to_ebm(q0, space), space)
            worst["q_round_trip"] = max(worst["q_round_trip"], _maxdiff(back, q0))
            logz = logsumexp(R)
            p_r = np.exp(R - logz)
            worst["prob"] = max(worst["prob"], _maxdiff(np.exp(log_prob_arm(q, space)), p_r))
            worst["log_z"] = max(worst["log_z"], abs(float(log_partition(r, space)) - logz))
    worst["cases"] = len(cases) * seeds
    worst["pass"] = all(
        worst[k] <= 1e-12 for k in ("r_round_trip", "q_round_trip", "prob", "log_z")
    )
    return worst


def item2(n_sequences: int = 100, seed: int = 0) -> dict[str, Any]:
    """Learning equivalence: ARM NLL = EBM NLL (log Z by enumeration), value and jax gradient,
    for a tabular q_θ and a one-hidden-layer MLP q_θ."""
    jax, _ = require_jax()
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp as jlse

    out: dict[str, Any] = {}
    with jax.enable_x64(True):
        for eos in (None, 2):
            space = SequenceSpace(3, 4, eos=eos)
            rng = np.random.default_rng(seed)
            seqs = [space.sequences()[i] for i in rng.integers(0, space.n_sequences, n_sequences)]
            X = jnp.asarray(prefix_features(space))

            def arm_nll(q: Any, seqs: list = seqs, space: SequenceSpace = space) -> Any:
                return -jnp.sum(log_prob_arm(q, space, seqs))

            def ebm_nll(q: Any, seqs: list = seqs, space: SequenceSpace = space) -> Any:
                r = arm_to_ebm(q, space)
                logz = jlse(sequence_reward(r, space))  # enumeration, not the backup
                return -jnp.sum(sequence_reward(r, space, seqs)) + len(seqs) * logz

            def mlp(p: dict, X: Any = X, space: SequenceSpace = space) -> Any:
                z = jnp.tanh(X @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]
                return jnp.where(space.allowed, z, -jnp.inf)

            tab = jnp.asarray(rng.normal(size=space.shape))
            params = {
                "W1": jnp.asarray(rng.normal(size=(X.shape[1], 8))),
                "b1": jnp.asarray(rng.normal(size=8)),
                "W2": jnp.asarray(rng.normal(size=(8, 3))),
                "b2": jnp.asarray(rng.normal(size=3)),
            }
            tag = "eos" if eos is not None else "fixed"
            for name, theta, f in (
                ("tabular", tab, lambda t: t),
                ("mlp", params, mlp),
            ):
                va, ga = jax.jit(jax.value_and_grad(lambda t, f=f: arm_nll(f(t))))(theta)
                vb, gb = jax.jit(jax.value_and_grad(lambda t, f=f: ebm_nll(f(t))))(theta)
                gerr = max(
                    float(jnp.max(jnp.abs(x - y)))
                    for x, y in zip(jax.tree.leaves(ga), jax.tree.leaves(gb))
                )
                out[f"{name}_{tag}_value_err"] = abs(float(va) - float(vb))
                out[f"{name}_{tag}_grad_err"] = gerr
    out["pass"] = all(v <= 1e-10 for k, v in out.items() if k.endswith("_err"))
    return out


def item3(seed: int = 0) -> dict[str, Any]:
    """Stability: logits 1e3·N(0, 1); masks and hard constraints; numpy vs jax (x64)."""
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"finite": True, "rel_round_trip": 0.0}
    for eos in (None, 2):
        space = SequenceSpace(3, 6, eos=eos)
        r = np.where(space.allowed, 1e3 * rng.normal(size=space.shape), -np.inf)
        q = ebm_to_arm(r, space)
        lp = log_prob_arm(q, space)
        out["finite"] &= bool(np.isfinite(q[space.allowed]).all() and np.isfinite(lp).all())
        scale = np.max(np.abs(r[space.allowed]))
        out["rel_round_trip"] = max(
            out["rel_round_trip"], _maxdiff(arm_to_ebm(q, space), r) / scale
        )
        q1 = np.where(space.allowed, 1e3 * rng.normal(size=space.shape), -np.inf)
        back = ebm_to_arm(arm_to_ebm(q1, space), space)
        out["rel_round_trip"] = max(out["rel_round_trip"], _maxdiff(back, q1) / scale)

    # masks (no token 0 right after token 1) and hard constraints (R = -inf on 30 %)
    def mask(prompts: np.ndarray, prefixes: np.ndarray) -> np.ndarray:
        m = np.ones((prompts.size, 3), dtype=bool)
        if prefixes.shape[1]:
            m[prefixes[:, -1] == 1, 0] = False
        return m

    space = SequenceSpace(3, 6, eos=2, mask=mask)
    R = rng.normal(size=space.n_sequences)
    dead = rng.random(space.n_sequences) < 0.3
    R[dead] = -np.inf
    r = reward_to_steps(R, space)
    q = ebm_to_arm(r, space)
    p_q = np.exp(log_prob_arm(q, space))
    p_r = np.exp(log_prob_ebm(R, space))
    arrays = [q, arm_to_ebm(q, space), p_q, p_r, log_prob_arm(q, space)]
    out["no_nan"] = bool(not any(np.isnan(a).any() for a in arrays))
    out["exact_zeros"] = bool((p_q[dead] == 0).all() and (p_r[dead] == 0).all())
    masked_seq = [(1, 0, 2), (0, 1, 0, 2)]
    out["masked_logprob"] = [float(v) for v in log_prob_arm(q, space, masked_seq)]
    out["exact_zeros"] &= all(v == -np.inf for v in out["masked_logprob"])
    out["masked_prob_err"] = _maxdiff(p_q, p_r)
    idx = sample(q, space, 20_000, seed=seed, output="index")
    out["samples_in_support"] = bool(not dead[idx].any())
    # numpy vs jax x64
    out["jax_vs_numpy"] = float("nan")
    try:
        jax, _ = require_jax()
    except ImportError:
        out["pass"] = False
        return out
    import jax.numpy as jnp

    with jax.enable_x64(True):
        errs = []
        for r_np, sp in (
            (r, space),
            (np.where(space.allowed, 1e3 * rng.normal(size=space.shape), -np.inf), space),
        ):
            rj = jnp.asarray(r_np)
            qn, qj = ebm_to_arm(r_np, sp), ebm_to_arm(rj, sp)
            errs.append(_maxdiff(qn, qj))
            errs.append(_maxdiff(arm_to_ebm(qn, sp), arm_to_ebm(jnp.asarray(qn), sp)))
            errs.append(abs(float(log_partition(r_np, sp)) - float(log_partition(rj, sp))))
            errs.append(_maxdiff(log_prob_arm(qn, sp), log_prob_arm(jnp.asarray(qn), sp)))
            q2 = np.where(sp.allowed, rng.normal(size=sp.shape), -np.inf)
            errs.append(
                abs(float(kl(qn, q2, sp)) - float(kl(jnp.asarray(qn), jnp.asarray(q2), sp)))
            )
        out["jax_vs_numpy"] = max(errs)
    out["pass"] = bool(
        out["finite"]
        and out["rel_round_trip"] <= 1e-12
        and out["no_nan"]
        and out["exact_zeros"]
        and out["masked_prob_err"] <= 1e-12
        and out["samples_in_support"]
        and out["jax_vs_numpy"] <= 1e-12
    )
    return out


def _best_time(fn: Any, repeats: int) -> float:
    fn()
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return float(best)


def item4(seed: int = 0, brute: bool = True, repeats: int = 3) -> dict[str, Any]:
    """Cost: trie backup at A = 5, T = 8 vs brute force; factored backup at T = 200 and its
    agreement with the trie at T = 10.

    ``pass`` covers the exact parts (trie = brute force and factored = trie to 1e-12, finite
    log Z at T = 200); the times and ``fast`` (the spec's time bars met) are figures only."""
    rng = np.random.default_rng(seed)
    space = SequenceSpace(5, 8)
    r = rng.normal(size=space.shape)
    out: dict[str, Any] = {"nodes": int(space.n_states + space.n_sequences)}
    out["trie_seconds"] = _best_time(lambda: ebm_to_arm(r, space), repeats)
    if brute:
        t = time.perf_counter()
        qb = brute_force_arm(r, space)
        out["brute_seconds"] = time.perf_counter() - t
        out["brute_err"] = _maxdiff(qb, ebm_to_arm(r, space))
        out["speedup"] = out["brute_seconds"] / out["trie_seconds"]
    task = planning_task(seed)
    keyed200 = FactoredSpace(4, 200, key_fn=lambda p, y: (0, 0), eos=3, step=task_key_step)
    r200 = keyed_task_reward(keyed200, task.bigram, 6, 199)
    out["factored_states_T200"] = keyed200.n_states
    out["factored_seconds_T200"] = _best_time(lambda: ebm_to_arm(r200, keyed200), repeats)
    out["log_z_T200"] = float(log_partition(r200, keyed200))
    trie10 = SequenceSpace(4, 10, eos=3)
    keyed10 = FactoredSpace(4, 10, key_fn=lambda p, y: (0, 0), eos=3, step=task_key_step)
    r10 = keyed_task_reward(keyed10, task.bigram, 6, 9)
    idx = keyed10.states_of(trie10)
    r_trie = np.where(trie10.allowed, r10[idx], -np.inf)
    q_trie = ebm_to_arm(r_trie, trie10)
    q_fact = ebm_to_arm(r10, keyed10)
    logz_gap = abs(float(log_partition(r_trie, trie10)) - float(log_partition(r10, keyed10)))
    out["factored_vs_trie_T10"] = max(_maxdiff(q_trie, q_fact[idx], trie10.allowed), logz_gap)
    # the times are reported (the spec's bars: trie < 1 s and >= 10x brute force, factored
    # T = 200 < 1 s), never a pass/fail condition: machine load would flip them between runs
    out["fast"] = bool(out["trie_seconds"] < 1 and out["factored_seconds_T200"] < 1)
    ok = out["factored_vs_trie_T10"] <= 1e-12 and np.isfinite(out["log_z_T200"])
    if brute:
        out["fast"] &= bool(out["speedup"] >= 10)
        ok &= out["brute_err"] <= 1e-12
    out["pass"] = bool(ok)
    return out


def item5(n: int = 100_000, seed: int = 0) -> dict[str, Any]:
    """χ² goodness of fit of 1e5 exact samples (A = 3, T = 4) against p_R at level 0.001."""
    out: dict[str, Any] = {}
    for eos in (None, 2):
        space = SequenceSpace(3, 4, eos=eos)
        rng = np.random.default_rng(seed)
        R = rng.normal(size=space.n_sequences)
        q = ebm_to_arm(reward_to_steps(R, space), space)
        idx = sample(q, space, n, seed=seed + 1, output="index")
        counts = np.bincount(idx, minlength=space.n_sequences)
        p = np.exp(R - logsumexp(R))
        res = stats.chisquare(counts, n * p)
        out[f"p_value_{'eos' if eos is not None else 'fixed'}"] = float(res.pvalue)
    out["pass"] = all(v > 1e-3 for v in out.values())
    return out


def item6(
    seeds: int = 5,
    widths: tuple[int, ...] = (4, 16, 64),
    steps: int = 3000,
    progress: bool = False,
) -> dict[str, Any]:
    """Distillation on A = 3, T = 4, R ~ 1.5·N(0, 1): exact, MLE over N, MLPs over width;
    KL ≤ our bound for every trained ARM."""
    space = SequenceSpace(3, 4)
    free = int(space.allowed.sum() - space.n_states)  # free logits: (A − 1) per state
    Ns = [100, 1_000, 10_000, 100_000]
    kls = np.zeros((seeds, len(Ns)))
    ratios: list[float] = []
    bound_ok = True
    exact_kl = 0.0
    for seed in track(range(seeds), enabled=progress, desc="item 6 MLE"):
        rng = np.random.default_rng(seed)
        R = 1.5 * rng.normal(size=space.n_sequences)
        r = reward_to_steps(R, space)
        q_star = ebm_to_arm(r, space)
        p_r = np.exp(R - brute_force_log_partition(R, space))
        kl_enum = float(np.sum(p_r * (np.log(p_r) - log_prob_arm(q_star, space))))
        exact_kl = max(exact_kl, abs(kl_enum))
        for j, N in enumerate(Ns):
            idx = sample(q_star, space, N, seed=1000 * seed + j, output="index")
            q_hat = fit_mle(idx, space)
            kls[seed, j] = float(kl(q_star, q_hat, space))
            b = float(kl_bound(q_star, q_hat, space))
            bound_ok &= kls[seed, j] <= b + 1e-12
            ratios.append(b / kls[seed, j])
    mean = kls.mean(axis=0)
    slope = float(np.polyfit(np.log(Ns), np.log(mean), 1)[0])
    theory = np.array([free / (2 * N) for N in Ns])
    within = [0.5 <= m / t <= 2 for m, t, N in zip(mean, theory, Ns) if N >= 1_000]
    rng = np.random.default_rng(0)
    R = 1.5 * rng.normal(size=space.n_sequences)
    r = reward_to_steps(R, space)
    q_star = ebm_to_arm(r, space)
    mlp_kl, mlp_ratio = [], []
    for w in track(widths, enabled=progress, desc="item 6 MLP"):
        d = distill(r, space, hidden=w, steps=steps, learning_rate=1e-2, seed=0)
        b = float(kl_bound(q_star, d.q, space))
        bound_ok &= d.kl <= b + 1e-12
        mlp_kl.append(d.kl)
        mlp_ratio.append(b / d.kl if d.kl > 0 else float("inf"))
    monotone = all(mlp_kl[i + 1] <= 1.1 * mlp_kl[i] for i in range(len(mlp_kl) - 1))
    out = {
        "exact_kl": exact_kl,
        "N": Ns,
        "mle_mean_kl": mean.tolist(),
        "theory_free_over_2N": theory.tolist(),
        "slope": slope,
        "strictly_decreasing": bool(np.all(np.diff(mean) < 0)),
        "within_2x": bool(all(within)),
        "mlp_widths": list(widths),
        "mlp_kl": mlp_kl,
        "mlp_bound_ratio": mlp_ratio,
        "mle_bound_ratio_range": [float(min(ratios)), float(max(ratios))],
        "bound_holds": bool(bound_ok),
        "mlp_monotone": bool(monotone),
    }
    out["pass"] = bool(
        exact_kl <= 1e-12
        and out["strictly_decreasing"]
        and -1.3 <= slope <= -0.7
        and out["within_2x"]
        and monotone
        and mlp_kl[-1] <= 1e-3
        and bound_ok
    )
    return out
