"""Benchmark of ``metastreet.GATLayer`` against PyG's ``GATConv`` (same weights, same inputs).

Run: ``.venv/bin/python packages/metastreet/benchmarks/run.py [--quick] [--out reports/bench/metastreet.json]``

Cases: street graphs of ``make_city`` (n_side 16 / 32), 8 heads x 64, forward + backward, one
torch thread. Records the max abs difference of the outputs next to the timings. PyG is optional:
without it only ours is timed.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from icml26_shared.bench import BenchReport, time_call
from metastreet import GATLayer, make_city


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="reports/bench/metastreet.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    report = BenchReport("metastreet", quick=args.quick)
    try:
        from torch_geometric.nn import GATConv
    except ImportError:
        GATConv = None
    for n_side in (12,) if args.quick else (16, 32):
        city = make_city(n_side, seed=0, images_per_street=(1, 1))
        n = city.n_streets
        e = city.edges
        loops = np.repeat(np.arange(n)[:, None], 2, 1)
        ei = torch.as_tensor(np.unique(np.concatenate([e, e[:, ::-1], loops]), axis=0).T.copy())
        x = torch.randn(n, 256)
        ours = GATLayer(256, 64, 8)
        case = f"streets={n}"

        def step(layer: torch.nn.Module, x: torch.Tensor = x, ei: torch.Tensor = ei) -> None:
            layer.zero_grad()
            layer(x, ei).sum().backward()

        report.add(case, "metastreet.GATLayer", time_call(lambda m=ours: step(m), repeats=5))
        if GATConv is not None:
            ref = GATConv(256, 64, heads=8, add_self_loops=False)
            ref.load_state_dict(ours.state_dict())
            diff = float((ours(x, ei) - ref(x, ei)).abs().max())
            report.add(
                case, "pyg.GATConv", time_call(lambda m=ref: step(m), repeats=5), max_abs_diff=diff
            )
            report.ratio(case, "metastreet.GATLayer", "pyg.GATConv")
    print(report.to_text())
    path = report.write(Path(args.out))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
