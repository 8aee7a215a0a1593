"""OptNet's regime: forward + backward of many small dense QPs, dxpp against qpth, one run.

    python packages/dxpp/benchmarks/optnet_batch.py [--sizes 10 20 50] [--batch 128] [--out FILE]

Problems (OptNet's parametrisation, float64): ``Q = LLᵀ/n + 10⁻³ I``, ``q`` normal, ``m = n``
inequalities ``Gx ≤ Gz + s`` (``s ~ U[0, 1]``, so ``z`` is strictly feasible) and ``⌊n/4⌋``
equalities ``Ax = Az``, each problem with its own matrices. One call is
``QPFunction()(Q, q, G, h, A, b)`` followed by ``(x²).sum().backward()``, timed with
``time_call`` (one warm-up, median of 5) for ``dxpp.torch.QPFunction`` (its batched ProxQP
forward and penalty backward) and ``qpth.qp.QPFunction`` (batched interior point, full-KKT
backward) on the same tensors; first on the machine as it is, then beside one busy process.
The gradients of the two are compared (relative max difference). The ratio reported is
dxpp's time over qpth's (< 1: dxpp faster).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import torch

from dxpp.torch import QPFunction
from icml26_shared.bench import BenchReport, time_call


def optnet_batch(B: int, n: int, seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, dtype=torch.float64, generator=g)

    L = randn(B, n, n)
    Q = L @ L.mT / n + 1e-3 * torch.eye(n, dtype=torch.float64)
    q, G, z = randn(B, n), randn(B, n, n), randn(B, n)
    h = (G @ z.unsqueeze(-1)).squeeze(-1) + torch.rand(B, n, dtype=torch.float64, generator=g)
    A = randn(B, n // 4, n)
    b = (A @ z.unsqueeze(-1)).squeeze(-1)
    return [Q, q, G, h, A, b]


def _call(layer: object, args: list[torch.Tensor]) -> tuple[torch.Tensor, list[torch.Tensor]]:
    ins = [a.clone().requires_grad_(True) for a in args]
    x = layer(*ins)  # type: ignore[operator]
    x.square().sum().backward()
    return x.detach(), [a.grad for a in ins]


def measure(report: BenchReport, B: int, n: int, condition: str) -> float:
    from qpth.qp import QPFunction as QpthFunction

    args = optnet_batch(B, n)
    ours, peer = QPFunction(verbose=-1), QpthFunction(verbose=-1)
    _, g_ours = _call(ours, args)
    _, g_peer = _call(peer, args)
    diff = max(float((a - b).abs().max() / b.abs().max()) for a, b in zip(g_ours, g_peer))
    t_ours = time_call(lambda: _call(ours, args), repeats=5, warmup=1)
    t_peer = time_call(lambda: _call(peer, args), repeats=5, warmup=1)
    case = f"B={B} n={n} {condition}"
    la = round(os.getloadavg()[0], 2)
    report.add(case, "dxpp.torch.QPFunction fwd+bwd", t_ours, grad_rel_diff=diff, loadavg=la)
    report.add(case, "qpth QPFunction fwd+bwd", t_peer, loadavg=la)
    report.ratio(case, "dxpp.torch.QPFunction fwd+bwd", "qpth QPFunction fwd+bwd")
    ratio = t_ours.median / t_peer.median
    print(
        f"{case}: dxpp {t_ours.median * 1e3:7.1f} ms, qpth {t_peer.median * 1e3:7.1f} ms, "
        f"ratio {ratio:.2f}, grad rel. diff {diff:.1e}, load {la}",
        flush=True,
    )
    return ratio


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 50])
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--no-busy", action="store_true", help="skip the busy-process condition")
    ap.add_argument("--out", default="reports/bench/dxpp_optnet_batch.json")
    a = ap.parse_args()
    report = BenchReport("dxpp-optnet-batch")
    report.machine["torch_threads"] = torch.get_num_threads()
    print(f"torch threads {torch.get_num_threads()}, cores {os.cpu_count()}", flush=True)
    for n in a.sizes:
        measure(report, a.batch, n, "as is")
    if not a.no_busy:
        busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
        try:
            time.sleep(2.0)
            for n in a.sizes:
                measure(report, a.batch, n, "one busy process")
        finally:
            busy.terminate()
            busy.wait()
    print(f"written to {report.write(a.out)}")


if __name__ == "__main__":
    main()
