"""Issue 24 item 3, standalone: the sparse backward's overhead over its own qdldl
factorisation (fresh pattern and with the symbolic factorisation reused) and its ratio to the
reduced-KKT qdldl LDLᵀ backward, on the banded random QP.

    OMP_NUM_THREADS=1 python packages/dxpp/benchmarks/sparse_overhead.py [--sizes 5000 20000]

The first call on a pattern is timed once ("fresh"); then 7 interleaved pairs of calls (dxpp
with the symbolic factorisation reused, the reduced-KKT qdldl solve), and the minimum of each
is reported (the minimum is the figure least disturbed by other jobs on a shared machine).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import dxpp
from dxpp.baselines import sparse_kkt_ldl_vjp


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    a = ap.parse_args()
    for n in a.sizes:
        qp = dxpp.random_sparse_qp(n, seed=0)
        sol = dxpp.solve_qp(*qp)
        g = np.random.default_rng(20_000).normal(size=n)
        prof: dict = {}
        t = time.perf_counter()
        dxpp.qp_vjp(*qp, sol, g, profile=prof)
        fresh = time.perf_counter() - t
        ours, ldl, fac = [], [], []
        for _ in range(7):
            p: dict = {}
            t = time.perf_counter()
            dxpp.qp_vjp(*qp, sol, g, profile=p)
            ours.append(time.perf_counter() - t)
            fac.append(p["ldl"])
            t = time.perf_counter()
            sparse_kkt_ldl_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, g)
            ldl.append(time.perf_counter() - t)
        o, lk = min(ours), min(ldl)
        print(
            f"n={n}: fresh {fresh * 1e3:.1f} ms (qdldl factor {prof['ldl'] * 1e3:.1f} ms, "
            f"overhead {fresh / prof['ldl']:.2f}x) | reused min {o * 1e3:.1f} ms (update "
            f"{min(fac) * 1e3:.1f} ms, overhead {o / min(fac):.1f}x) | KKT qdldl min "
            f"{lk * 1e3:.1f} ms | KKT/ours {lk / o:.2f} (fresh: {lk / fresh:.2f}) | "
            f"load {os.getloadavg()[0]:.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
