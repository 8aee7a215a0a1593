"""Non-equivariant flow-matching peer (torchcfm) on the N-body protocol of ``reproduce``.

    .venv/bin/python packages/gse-flow/benchmarks/peer_torchcfm.py [--quick]
        [--result DIR/result.json] [--out reports/bench/gse-flow-torchcfm.json]

The spec's peer: a velocity MLP on flattened coordinates, trained with ``torchcfm``'s
``ConditionalFlowMatcher`` (straight path, σ = 0: ``x_t = (1 − t)x0 + t x1``, target
``x1 − x0``) under random-rotation augmentation, on the same windows (``nbody_windows`` seeds
100 / 300), prior (constant velocity + per-frame σ, node-centred noise), steps, batch size,
learning-rate schedule and gradient clipping as GSE-Flow in ``reproduce`` (full: 3000 windows,
500 × 32; ``--quick``: 500, 150 × 16), sampled with 10 Euler steps, K = 5. Two widths: one
matched to GSE-Flow's parameter count (±20%, as the EGNN is) and a wide one. With
``--result`` (a ``reproduce`` result.json of the same mode), one table with its rows.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np
import torch
from scipy.spatial.transform import Rotation
from torchcfm.conditional_flow_matching import ConditionalFlowMatcher

import gse_flow as g

N_EMB = 16


def _centre(w: g.Windows) -> tuple[np.ndarray, np.ndarray]:
    """History and future centred on the centroid of the last observed frame."""
    c = np.asarray(w.history)[:, -1:].mean(axis=2, keepdims=True)
    return np.asarray(w.history) - c, np.asarray(w.future) - c


class VelocityMLP(torch.nn.Module):
    """``v(x_t, t | history)``: an MLP on ``[(x_t − μ)/σ_f, history/ℓ_x, Δhistory/ℓ_v,
    charges, emb(t)]`` (ℓ_x the RMS centred position, ℓ_v the RMS frame displacement × √3 of
    the training histories), output times σ_f (per future frame)."""

    def __init__(self, n_hist: int, n_fut: int, n_nodes: int, width: int, sigma, scales):
        super().__init__()
        d_in = d_input(n_hist, n_fut, n_nodes)
        self.net = torch.nn.Sequential(
            torch.nn.Linear(d_in, width),
            torch.nn.SiLU(),
            torch.nn.Linear(width, width),
            torch.nn.SiLU(),
            torch.nn.Linear(width, n_fut * n_nodes * 3),
        )
        self.register_buffer("sigma", torch.as_tensor(sigma, dtype=torch.float32)[:, None, None])
        self.pos_scale, self.vel_scale = scales
        self.register_buffer("freqs", math.pi * 2.0 ** torch.arange(N_EMB // 2).float())

    def forward(self, xt, t, mu, hist, attr):
        b = xt.shape[0]
        emb = torch.cat([torch.sin(self.freqs * t[:, None]), torch.cos(self.freqs * t[:, None])], 1)
        z = torch.cat(
            [
                ((xt - mu) / self.sigma).reshape(b, -1),
                (hist / self.pos_scale).reshape(b, -1),
                (torch.diff(hist, dim=1) / self.vel_scale).reshape(b, -1),
                attr.reshape(b, -1),
                emb,
            ],
            1,
        )
        return self.net(z).reshape(xt.shape) * self.sigma


def d_input(n_hist: int, n_fut: int, n_nodes: int) -> int:
    return (2 * n_hist - 1 + n_fut) * n_nodes * 3 + n_nodes + N_EMB


def _cv(hist: torch.Tensor, n_fut: int) -> torch.Tensor:
    v = hist[:, -1] - hist[:, -2]
    k = torch.arange(1, n_fut + 1, dtype=hist.dtype)[None, :, None, None]
    return hist[:, -1:] + k * v[:, None]


def _noise(shape, gen) -> torch.Tensor:
    e = torch.randn(shape, generator=gen)
    return e - e.mean(dim=-2, keepdim=True)  # node mean removed, as GSE-Flow's prior


def _rotate(hist, fut, gen):
    r = Rotation.random(hist.shape[0], random_state=int(torch.randint(2**31, (1,), generator=gen)))
    m = torch.as_tensor(r.as_matrix(), dtype=torch.float32)[:, None, None]
    return (m @ hist[..., None])[..., 0], (m @ fut[..., None])[..., 0]


def train_peer(tr: g.Windows, width: int, steps: int, batch: int, seed: int = 0):
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    hist, fut = (torch.as_tensor(a, dtype=torch.float32) for a in _centre(tr))
    attr = torch.as_tensor(np.asarray(tr.node_attr), dtype=torch.float32)
    sigma = g.prior_scale(tr, "cv", per_frame=True)
    scales = (
        float(np.sqrt(np.mean(hist.numpy() ** 2))),
        float(np.sqrt(np.mean(np.diff(hist.numpy(), axis=1) ** 2)) * np.sqrt(3)),
    )
    model = VelocityMLP(hist.shape[1], fut.shape[1], hist.shape[2], width, sigma, scales)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    warm = max(steps // 20, 1)

    def lr_at(i: int) -> float:  # optax.warmup_cosine_decay_schedule(0, 2e-3, warm, steps, 1e-5)
        if i < warm:
            return i / warm
        p = (i - warm) / max(steps - warm, 1)
        return (1e-5 + 0.5 * (2e-3 - 1e-5) * (1 + math.cos(math.pi * p))) / 2e-3

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    cfm = ConditionalFlowMatcher(sigma=0.0)
    t0 = time.perf_counter()
    for _ in range(steps):
        idx = torch.randint(len(hist), (batch,), generator=gen)
        h, f = _rotate(hist[idx], fut[idx], gen)
        mu = _cv(h, f.shape[1])
        x0 = mu + model.sigma * _noise(f.shape, gen)
        t, xt, ut = cfm.sample_location_and_conditional_flow(x0, f)
        loss = (((model(xt, t, mu, h, attr[idx]) - ut) / model.sigma) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
    return model, time.perf_counter() - t0, loss.item()


@torch.no_grad()
def sample_peer(model: VelocityMLP, te: g.Windows, k: int = 5, n_steps: int = 10, seed: int = 1):
    gen = torch.Generator().manual_seed(seed)
    c = np.asarray(te.history)[:, -1:].mean(axis=2, keepdims=True)
    hist = torch.as_tensor(np.asarray(te.history) - c, dtype=torch.float32)
    attr = torch.as_tensor(np.asarray(te.node_attr), dtype=torch.float32)
    n_fut = model.sigma.shape[0]
    mu = _cv(hist, n_fut)
    out = []
    for _ in range(k):
        x = mu + model.sigma * _noise(mu.shape, gen)
        for i in range(n_steps):
            t = torch.full((len(x),), i / n_steps)
            x = x + model(x, t, mu, hist, attr) / n_steps
        out.append(x.numpy() + c)
    return np.stack(out, axis=1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--result", type=Path, help="a reproduce result.json of the same mode")
    parser.add_argument("--out", default="reports/bench/gse-flow-torchcfm.json")
    args = parser.parse_args()
    n_train, n_test, steps, batch = (500, 64, 150, 16) if args.quick else (3000, 500, 500, 32)
    tr = g.nbody_windows(n_train, seed=100)
    te = g.nbody_windows(n_test, seed=300)
    target = 28_490  # GSE-Flow's parameter count at the spec's N-body size (16x0e+8x1o)
    rows = {}
    if args.result:
        res = json.loads(args.result.read_text())
        nbody = next(t for t in res["tables"] if t["title"].startswith("Charged N-body"))
        labels = nbody.get("labels", {})  # rows are keyed by id, shown by label
        rows = {
            labels.get(name, name): {
                m: (v["mean"] if isinstance(v, dict) else v) for m, v in cols.items()
            }
            for name, cols in nbody["rows"].items()
        }
    # width whose parameter count is nearest GSE-Flow's, and a wide one
    (_, H, N, _), F = tr.history.shape, tr.future.shape[1]
    d_in, d_out = d_input(H, F, N), F * N * 3
    matched = min(
        range(8, 257), key=lambda w: abs(d_in * w + w * w + w * d_out + 2 * w + d_out - target)
    )
    timing = {}
    for label, width in (
        (f"torchcfm MLP, width {matched}", matched),
        ("torchcfm MLP, width 256", 256),
    ):
        model, secs, loss = train_peer(tr, width, steps, batch)
        s = sample_peer(model, te)
        ev = g.evaluate(s, te.future)
        n_params = sum(p.numel() for p in model.parameters())
        rows[label] = {
            "ADE": ev["ade"],
            "FDE": ev["fde"],
            "minADE@5": ev["min_ade"],
            "minFDE@5": ev["min_fde"],
            "mean-ADE": ev["mean_ade"],
            "params": n_params,
        }
        timing[label] = {"train_s": secs, "final_loss": loss}
        print(f"{label}: {n_params} params, trained {secs:.1f} s, last loss {loss:.3f}", flush=True)
    cols = ["ADE", "FDE", "minADE@5", "minFDE@5", "mean-ADE", "params"]
    print(
        f"\nCharged N-body ({n_train} train / {n_test} test windows, {steps} steps × batch {batch})"
    )
    print("| method | " + " | ".join(cols) + " |\n|---|" + "---|" * len(cols))
    for name, r in rows.items():
        cells = [
            ("–" if c not in r else (f"{r[c]:,}" if c == "params" else f"{r[c]:.3f}")) for c in cols
        ]
        print(f"| {name} | " + " | ".join(cells) + " |")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"quick": args.quick, "rows": rows, "timing": timing}, indent=2))
    print(f"written {out}")


if __name__ == "__main__":
    main()
