"""Benchmark: our voxelwise ridge (per-voxel λ, one SVD) vs scikit-learn ``Ridge`` per λ group
and, when installed, himalaya's ``Ridge`` (per-target alpha, SVD solver, numpy backend); same
standardised inputs, same λ; reports time ratios and the max weight difference.

    python packages/brain-attrib/benchmarks/run.py [--quick] [--out reports/bench/brain-attrib.json]
"""

from __future__ import annotations

import argparse

import numpy as np

from brain_attrib import fit_ridge
from icml26_shared.bench import BenchReport, time_call


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="reports/bench/brain-attrib.json")
    args = ap.parse_args()
    from sklearn.linear_model import Ridge

    try:
        from himalaya.ridge import Ridge as Himalaya
    except ImportError:  # optional peer: `pip install brain-attrib[peers]`
        Himalaya = None

    rep = BenchReport("brain-attrib", quick=args.quick)
    sizes = [(500, 128, 100)] if args.quick else [(500, 128, 100), (1500, 512, 200)]
    rng = np.random.default_rng(0)
    for n, p, v in sizes:
        x = rng.standard_normal((n, p))
        y = x @ rng.standard_normal((p, v)) * 0.1 + rng.standard_normal((n, v))
        lam = rng.choice(np.logspace(-2, 6, 17), size=v)
        xs = (x - x.mean(0)) / x.std(0)

        def peer(xs=xs, y=y, lam=lam):
            return {val: Ridge(alpha=val).fit(xs, y[:, lam == val]) for val in np.unique(lam)}

        case = f"n={n},p={p},v={v}"
        ours = fit_ridge(x, y, lam=lam)
        ref = peer()
        diff = max(float(np.abs(ours.w[:, lam == val] - m.coef_.T).max()) for val, m in ref.items())
        rep.add(
            case,
            "ours",
            time_call(lambda x=x, y=y, lam=lam: fit_ridge(x, y, lam=lam), repeats=3),
            max_abs_diff=diff,
        )
        rep.add(case, "sklearn Ridge", time_call(peer, repeats=3))
        rep.ratio(case, "ours", "sklearn Ridge")
        if Himalaya is not None:

            def hima(xs=xs, y=y, lam=lam):
                return Himalaya(alpha=lam, fit_intercept=True).fit(xs, y)

            dh = float(np.abs(ours.w - np.asarray(hima().coef_)).max())
            rep.add(case, "himalaya Ridge", time_call(hima, repeats=3), max_abs_diff=dh)
            rep.ratio(case, "ours", "himalaya Ridge")
    print(rep.to_text())
    rep.write(args.out)


if __name__ == "__main__":
    main()
