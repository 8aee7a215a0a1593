"""Throughput of GSE-Flow (our reconstruction) next to the EGNN baseline, in one run.

    .venv/bin/python packages/gse-flow/benchmarks/run.py [--quick] [--out reports/bench/gse-flow.json]

Measures, on charged N-body (5 nodes) and a 21-atom toy-MD window (10 + 20 frames):
training windows/s (one optimizer step, after compilation), sampled trajectories/s (K = 5,
10 Euler steps) with and without the history cache, and EGNN predictions/s. Ratios are
computed from timings taken side by side in this process. A second table times the history
cache alone on N-body windows with a growing share of history (H + F = 10 + 20, 40 + 5, 80 + 2).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

import gse_flow as g


def _best(fn, repeats: int) -> float:
    fn()  # compile / warm up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _flow(w: g.Windows, cutoff: float) -> g.GSEFlow:
    """The benchmarked flow, sized to the windows ``w``."""
    return g.GSEFlow(
        key=jax.random.PRNGKey(0),
        n_history=w.history.shape[1],
        n_future=w.future.shape[1],
        node_attr_dim=w.node_attr.shape[-1],
        irreps_hidden="16x0e+8x1o",
        sh_lmax=1,
        n_layers=2,
        cutoff=cutoff,
        sigma=g.prior_scale(w),
        length_scale=0.05,  # the same rule as the EGNN of _bench
    )


def _sampling_times(
    flow: g.GSEFlow, w: g.Windows, key: jax.Array, batch: int, repeats: int
) -> tuple[float, float]:
    """Best-of-``repeats`` seconds to sample K = 5 futures (10 Euler steps) of the windows
    ``w``, with and without the history cache."""

    def samp(cache: bool):
        return lambda: g.sample(
            flow,
            w.history,
            key,
            node_attr=w.node_attr,
            edges=w.edges,
            k=5,
            n_steps=10,
            use_cache=cache,
            batch_size=batch,
        )

    return _best(samp(True), repeats), _best(samp(False), repeats)


def _bench(name: str, w: g.Windows, cutoff: float, batch: int, repeats: int) -> dict:
    flow = _flow(w, cutoff)
    egnn = g.EGNN(hidden=32, n_layers=4, length_scale=0.05, key=jax.random.PRNGKey(0))
    opt = optax.adam(1e-3)
    graph = w.graph
    sub = w.take(np.arange(batch))
    dev = g.Windows(
        jnp.asarray(sub.history), jnp.asarray(sub.future), jnp.asarray(sub.node_attr), graph
    )
    key = jax.random.PRNGKey(1)
    res = {"dataset": name, "batch": batch}
    for label, model, loss in (
        ("gse_flow", flow, g.flow_matching_loss),
        ("egnn", egnn, g.mse_loss),
    ):
        state = opt.init(eqx.filter(model, eqx.is_inexact_array))

        def step(model=model, state=state, loss=loss):
            out = g.train_step(model, state, dev, key, opt, loss)
            jax.block_until_ready(out[2])

        res[f"{label}_train_windows_per_s"] = batch / _best(step, repeats)
    t_cache, t_nocache = _sampling_times(flow, sub, key, batch, repeats)
    res["gse_flow_samples_per_s"] = 5 * batch / t_cache
    res["gse_flow_samples_per_s_no_cache"] = 5 * batch / t_nocache
    res["history_cache_speedup"] = t_nocache / t_cache
    res["egnn_predictions_per_s"] = batch / _best(
        lambda: g.predict(egnn, sub, batch_size=batch), repeats
    )
    res["params"] = {"gse_flow": g.count_parameters(flow), "egnn": g.count_parameters(egnn)}
    return res


def _bench_cache(n_history: int, n_future: int, batch: int, repeats: int) -> dict:
    """Sampling with and without the history cache (K = 5, 10 Euler steps) on N-body windows
    of ``n_history + n_future`` frames: the cache skips the history encoder, whose all-pairs
    temporal edges cost ``O(H²)`` per node and layer, at every step after the first."""
    w = g.nbody_windows(batch, n_history=n_history, n_future=n_future, seed=0)
    flow = _flow(w, 8.0)
    t_cache, t_nocache = _sampling_times(flow, w, jax.random.PRNGKey(1), batch, repeats)
    # the parts on their own: ``use_cache=False`` re-calls encode_history inside the jitted
    # ODE loop with loop-invariant inputs, which XLA may hoist out of the loop; the implied
    # speed-up is that of a sampler that really re-encodes at each of the 10 steps
    hist, attr = jnp.asarray(w.history), jnp.asarray(w.node_attr)
    graph = w.graph
    enc = eqx.filter_jit(jax.vmap(lambda h, a: flow.encode_history(h, a, graph)))
    cache = enc(hist, attr)
    x = jnp.broadcast_to(jnp.asarray(w.future)[:, None], (batch, 5, *w.future.shape[1:]))
    vel = eqx.filter_jit(
        jax.vmap(jax.vmap(lambda c, xx: flow.velocity(c, xx, jnp.float32(0.5)), (None, 0)))
    )
    t_enc = _best(lambda: jax.block_until_ready(enc(hist, attr)), repeats)
    t_vel = _best(lambda: jax.block_until_ready(vel(cache, x)), repeats)
    return {
        "n_history": n_history,
        "n_future": n_future,
        "batch": batch,
        "samples_per_s": 5 * batch / t_cache,
        "samples_per_s_no_cache": 5 * batch / t_nocache,
        "history_cache_speedup": t_nocache / t_cache,
        "encode_ms": 1e3 * t_enc,
        "velocity_ms": 1e3 * t_vel,
        "implied_speedup_10_steps": 10 * (t_enc + t_vel) / (t_enc + 10 * t_vel),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/gse-flow.json")
    args = parser.parse_args()
    batch, repeats = (16, 2) if args.quick else (32, 5)
    rows = [
        _bench("nbody (N=5)", g.nbody_windows(batch, seed=0), 8.0, batch, repeats),
        _bench("toy MD (N=21)", g.toy_md_windows(batch, seed=0), 3.0, batch, repeats),
    ]
    print(
        f"{'dataset':16s} {'flow train w/s':>15s} {'EGNN train w/s':>15s} {'flow samples/s':>15s} "
        f"{'no-cache':>10s} {'cache x':>8s} {'EGNN pred/s':>12s}"
    )
    for r in rows:
        print(
            f"{r['dataset']:16s} {r['gse_flow_train_windows_per_s']:15.1f} "
            f"{r['egnn_train_windows_per_s']:15.1f} {r['gse_flow_samples_per_s']:15.1f} "
            f"{r['gse_flow_samples_per_s_no_cache']:10.1f} {r['history_cache_speedup']:8.2f} "
            f"{r['egnn_predictions_per_s']:12.1f}"
        )
    cache_rows = [_bench_cache(h, f, batch, repeats) for h, f in ((10, 20), (40, 5), (80, 2))]
    print(
        f"\n{'H + F':>8s} {'samples/s':>10s} {'no-cache':>10s} {'cache x':>8s} "
        f"{'encode ms':>10s} {'velocity ms':>12s} {'implied x':>10s}  (N-body, N=5)"
    )
    for r in cache_rows:
        print(
            f"{r['n_history']:>3d} + {r['n_future']:<2d} {r['samples_per_s']:10.1f} "
            f"{r['samples_per_s_no_cache']:10.1f} {r['history_cache_speedup']:8.2f} "
            f"{r['encode_ms']:10.2f} {r['velocity_ms']:12.2f} "
            f"{r['implied_speedup_10_steps']:10.2f}"
        )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {"package": "gse-flow", "quick": args.quick, "results": rows, "cache": cache_rows},
            indent=2,
        )
    )
    print(f"written {out}")


if __name__ == "__main__":
    main()
