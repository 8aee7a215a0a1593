"""Issue 14 diagnostic: choose the ``"x1"`` skip's data scale ρ on *validation*.

    python packages/gse-flow/benchmarks/diag_rho.py [--steps 250] [--rho 0.25 0.5 1]

Quick-mode data (500 train windows of seed 100, the first ``--n-val`` validation windows of
seed 200), the quick-mode flow (prior "cv", per-frame σ, zero readout init, clipped Adam),
``--steps`` × batch 16 per ρ. Prints one JSON line per ρ as it finishes (resumable by ρ):
validation minADE@5, sample-mean ADE and per-sample ADE at 1/2/5/10/20 Euler steps, and the
noise pass-through ratio at 1 and 10 steps. The test set is not touched.
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import numpy as np
import optax

import gse_flow as g


def _optimizer(steps: int) -> optax.GradientTransformation:
    """The reproduce recipe: Adam, warm-up + cosine schedule, global-norm clipping."""
    sched = optax.warmup_cosine_decay_schedule(0.0, 2e-3, max(steps // 20, 1), steps, 1e-5)
    return optax.chain(optax.clip_by_global_norm(1.0), optax.adam(sched))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--n-val", type=int, default=48)
    ap.add_argument("--rho", type=float, nargs="+", default=[0.25, 0.5, 1.0])
    args = ap.parse_args()
    tr = g.nbody_windows(500, seed=100)
    va = g.nbody_windows(100, seed=200).take(np.arange(args.n_val))
    kw = g.flow_config(tr, "cv")
    cv = g.evaluate(g.constant_velocity(va.history, 20)[:, None], va.future)["ade"]
    print(json.dumps({"val_cv_ade": cv, "n_val": args.n_val, "steps": args.steps}), flush=True)
    for rho in args.rho:
        t0 = time.perf_counter()
        res = g.train(
            g.GSEFlow(key=jax.random.PRNGKey(0), data_scale=rho, **kw),
            tr,
            _optimizer(args.steps),
            args.steps,
            key=jax.random.PRNGKey(1),
            batch_size=16,
        )
        t_train = time.perf_counter() - t0
        row = {"rho": rho, "train_s": round(t_train, 1), "loss_end": float(res.losses[-20:].mean())}
        for n in (1, 2, 5, 10, 20):
            s = g.sample(
                res.model,
                va.history,
                jax.random.PRNGKey(5),
                node_attr=va.node_attr,
                edges=va.edges,
                k=5,
                n_steps=n,
            )
            e = g.evaluate(s, va.future)
            row[f"euler{n}"] = [round(e["min_ade"], 4), round(e["mean_ade"], 4), round(e["ade"], 4)]
        for n in (1, 10):
            row[f"pass{n}"] = round(
                g.noise_pass_through(
                    res.model, va.take(np.arange(16)), jax.random.PRNGKey(7), n_steps=n
                ),
                3,
            )
        row["total_s"] = round(time.perf_counter() - t0, 1)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
