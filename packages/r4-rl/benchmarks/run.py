"""Benchmark of ``r4_rl.soft_rank`` against ``torchsort.soft_rank`` (l2), same inputs, one run.

Run: ``.venv/bin/python packages/r4-rl/benchmarks/run.py [--quick] [--out reports/bench/r4-rl.json]``

Peer: ``torchsort`` 0.1.10 (Blondel et al.'s operator, C++ extension) when it imports; otherwise
an independent generic QP (scipy SLSQP over all subset faces of the permutahedron, small ``m``
only) is timed and used as the accuracy reference. The report says which peer ran. Cases are
``(batch, m)`` in float64 on CPU, forward alone and forward + backward; torch uses one thread.
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
import torch

from icml26_shared.bench import BenchReport, time_call
from r4_rl import soft_rank


def qp_soft_rank(v: np.ndarray, eps: float) -> np.ndarray:
    """Row-by-row generic QP projection of ``v/eps`` onto the permutahedron (reference)."""
    from scipy.optimize import minimize

    out = np.empty_like(v)
    m = v.shape[1]
    w = np.arange(m, 0, -1.0)
    faces = [
        np.isin(np.arange(m), s) for k in range(1, m) for s in itertools.combinations(range(m), k)
    ]
    A = np.array(faces, dtype=float)
    b = np.array([w[: int(f.sum())].sum() for f in faces])
    for i, z in enumerate(v / eps):
        cons = [
            {"type": "ineq", "fun": lambda x: b - A @ x, "jac": lambda x: -A},
            {"type": "eq", "fun": lambda x: [x.sum() - w.sum()], "jac": lambda x: np.ones((1, m))},
        ]
        res = minimize(
            lambda x, z=z: ((x - z) ** 2).sum(),
            np.full(m, w.mean()),
            jac=lambda x, z=z: 2 * (x - z),
            constraints=cons,
            method="SLSQP",
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        out[i] = res.x
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/r4-rl.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    try:
        import torchsort
    except ImportError:
        torchsort = None
    peer = "torchsort" if torchsort is not None else "scipy QP"
    cases = (
        [(64, 5), (256, 20), (64, 100)]
        if args.quick
        else [(64, 5), (256, 20), (64, 100), (16, 1000), (1024, 50)]
    )
    if torchsort is None:
        cases = [(8, 4), (8, 6)]
    repeats = 5 if args.quick else 20
    report = BenchReport("r4-rl", quick=args.quick)
    rng = np.random.default_rng(0)
    for batch, m in cases:
        case = f"batch={batch}, m={m}"
        v_np = rng.normal(size=(batch, m))
        v = torch.tensor(v_np, requires_grad=True)
        ours = soft_rank(v, 1.0)

        def fwd_ours(v=v):
            soft_rank(v.detach(), 1.0)

        def fwd_bwd_ours(v=v):
            soft_rank(v, 1.0).sum().backward()

        if torchsort is not None:
            ref = torchsort.soft_rank(v, regularization="l2", regularization_strength=1.0)
            err = float((ours - ref).abs().max())

            def fwd_peer(v=v):
                torchsort.soft_rank(v.detach(), regularization="l2", regularization_strength=1.0)

            def fwd_bwd_peer(v=v):
                torchsort.soft_rank(
                    v, regularization="l2", regularization_strength=1.0
                ).sum().backward()

            report.add(
                case + " fwd",
                "r4_rl",
                time_call(fwd_ours, repeats=repeats),
                max_abs_err=err,
            )
            report.add(case + " fwd", peer, time_call(fwd_peer, repeats=repeats))
            report.add(case + " fwd+bwd", "r4_rl", time_call(fwd_bwd_ours, repeats=repeats))
            report.add(case + " fwd+bwd", peer, time_call(fwd_bwd_peer, repeats=repeats))
            report.ratio(case + " fwd", "r4_rl", peer)
            report.ratio(case + " fwd+bwd", "r4_rl", peer)
        else:
            ref = qp_soft_rank(v_np, 1.0)
            err = float(np.abs(ours.detach().numpy() - ref).max())
            report.add(
                case + " fwd",
                "r4_rl",
                time_call(fwd_ours, repeats=repeats),
                max_abs_err=err,
            )
            report.add(
                case + " fwd", peer, time_call(lambda v_np=v_np: qp_soft_rank(v_np, 1.0), repeats=1)
            )
            report.ratio(case + " fwd", "r4_rl", peer)
    print(f"peer: {peer}")
    print(report.to_text())
    path = report.write(Path(args.out))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
