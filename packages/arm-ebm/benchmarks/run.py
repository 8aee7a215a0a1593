"""Timings of arm-ebm against brute-force enumeration, side by side in one run.

    .venv/bin/python packages/arm-ebm/benchmarks/run.py [--quick] [--out reports/bench/arm-ebm.json]

Cases (median of repeats; the brute force runs once):
* trie backup EBM → ARM at A = 5, T = 8 (T = 7 with --quick): ``ebm_to_arm`` (numpy, and jax
  under jit) against ``baselines.brute_force_arm`` (one ``scipy.special.logsumexp`` over the
  completions of every state); max |Δq| reported.
* log Z: the backup against enumerating R and one ``scipy.special.logsumexp``.
* factored backup at T = 200 over keys (#a − #b, last token) of the planning task, and its
  agreement with the trie at T = 10 (where both run; ratio reported).
* exact ancestral sampling: 1e5 samples on the A = 5 trie.
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.special import logsumexp

import arm_ebm as ae
from arm_ebm.baselines import brute_force_arm
from arm_ebm.data import keyed_task_reward, planning_task, task_key_step
from icml26_shared.bench import BenchReport, time_call


def _gap(a: np.ndarray, b: np.ndarray) -> float:
    with np.errstate(invalid="ignore"):
        d = np.where(np.isneginf(a) & np.isneginf(b), 0.0, np.abs(a - b))
    return float(d.max())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/arm-ebm.json")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7
    report = BenchReport("arm-ebm", quick=args.quick)

    T = 7 if args.quick else 8
    space = ae.SequenceSpace(5, T)
    r = np.random.default_rng(0).normal(size=space.shape)
    case = f"backup A=5 T={T} ({space.n_states + space.n_sequences} nodes)"
    q = ae.ebm_to_arm(r, space)
    report.add(
        case, "ebm_to_arm (numpy)", time_call(lambda: ae.ebm_to_arm(r, space), repeats=repeats)
    )
    try:
        import jax

        with jax.enable_x64(True):
            rj = jax.numpy.asarray(r)
            f = jax.jit(lambda x: ae.ebm_to_arm(x, space))
            err = _gap(np.asarray(f(rj)), q)
            report.add(
                case,
                "ebm_to_arm (jax, jit)",
                time_call(lambda: f(rj).block_until_ready(), repeats=repeats),
                max_err=err,
            )
    except ImportError:
        pass
    qb = None

    def brute() -> None:
        nonlocal qb
        qb = brute_force_arm(r, space)

    report.add(case, "brute force (scipy per state)", time_call(brute, repeats=1, warmup=0))
    report.rows[-1]["max_err"] = _gap(qb, q)
    report.ratio(case, "ebm_to_arm (numpy)", "brute force (scipy per state)")

    case = f"log Z A=5 T={T}"
    report.add(
        case,
        "log_partition (backup)",
        time_call(lambda: ae.log_partition(r, space), repeats=repeats),
    )

    def enum_lse() -> float:
        return float(logsumexp(ae.sequence_reward(r, space)))

    report.add(
        case,
        "enumerate R + scipy logsumexp",
        time_call(enum_lse, repeats=repeats),
        max_err=abs(enum_lse() - float(ae.log_partition(r, space))),
    )
    report.ratio(case, "log_partition (backup)", "enumerate R + scipy logsumexp")

    task = planning_task(0)
    keyed = ae.FactoredSpace(4, 200, key_fn=lambda p, y: (0, 0), eos=3, step=task_key_step)
    r200 = keyed_task_reward(keyed, task.bigram, 6, 199)
    report.add(
        f"factored T=200 ({keyed.n_states} keyed states)",
        "ebm_to_arm (factored)",
        time_call(lambda: ae.ebm_to_arm(r200, keyed), repeats=repeats),
        log_z=float(ae.log_partition(r200, keyed)),
    )
    trie10 = ae.SequenceSpace(4, 10, eos=3)
    keyed10 = ae.FactoredSpace(4, 10, key_fn=lambda p, y: (0, 0), eos=3, step=task_key_step)
    r10 = keyed_task_reward(keyed10, task.bigram, 6, 9)
    idx = keyed10.states_of(trie10)
    rt = np.where(trie10.allowed, r10[idx], -np.inf)
    case = f"T=10: factored ({keyed10.n_states}) vs trie ({trie10.n_states})"
    gap = _gap(
        np.where(trie10.allowed, ae.ebm_to_arm(r10, keyed10)[idx], -np.inf),
        ae.ebm_to_arm(rt, trie10),
    )
    report.add(
        case,
        "factored",
        time_call(lambda: ae.ebm_to_arm(r10, keyed10), repeats=repeats),
        max_err=gap,
    )
    report.add(case, "trie", time_call(lambda: ae.ebm_to_arm(rt, trie10), repeats=repeats))
    report.ratio(case, "factored", "trie")

    n = 100_000
    report.add(
        f"sampling A=5 T={T}",
        f"sample n={n}",
        time_call(lambda: ae.sample(q, space, n, seed=0, output="index"), repeats=repeats),
    )
    print(report.to_text())
    path = report.write(args.out)
    print(f"written to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
