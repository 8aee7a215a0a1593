"""Timing of collab-cp against its peer on the same inputs, side by side in one run.

    .venv/bin/python packages/collab-cp/benchmarks/run.py [--quick] [--out reports/bench/collab-cp.json]

Cases (median of repeats, seconds):
* offline: calibrate on 500 points + predict sets for 10,000 points (K = 10) with
  CollaborativeConformal (top-2 human), with H ≡ ∅ (= split CP), our SplitConformalClassifier,
  and MAPIE's SplitConformalClassifier (prefit, LAC score) — the only peer: it computes the AI-alone
  sets, no library offers human–AI sets. The H ≡ ∅ sets are checked equal to MAPIE's.
* online: OnlineCollaborative.run over a 10,000-step stream vs 10,000 single-step ``update`` calls.
* experiments: random calibration/test splits per second in ``split_evaluation``.
"""

from __future__ import annotations

import argparse

import numpy as np

from icml26_shared.bench import BenchReport, time_call


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/collab-cp.json")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 7

    from collab_cp import CollaborativeConformal, OnlineCollaborative
    from collab_cp.baselines import SplitConformalClassifier
    from collab_cp.data import shifting_stream, synthetic_collaboration
    from collab_cp.experiments import split_evaluation

    n_test = 2_000 if args.quick else 10_000
    d = synthetic_collaboration(500 + n_test, "top_k", k=2, seed=0)
    cal, test = slice(0, 500), slice(500, None)
    empty = np.zeros_like(d.human)
    report = BenchReport("collab-cp", quick=args.quick)

    def collab():
        m = CollaborativeConformal(0.05, 0.7).conformalize(d.probs[cal], d.human[cal], d.y[cal])
        return m.predict_set(d.probs[test], d.human[test])

    def collab_empty():
        m = CollaborativeConformal(0.05, 0.7).conformalize(d.probs[cal], empty[cal], d.y[cal])
        return m.predict_set(d.probs[test], empty[test])

    def ours_split():
        return (
            SplitConformalClassifier(0.7)
            .conformalize(d.probs[cal], d.y[cal])
            .predict_set(d.probs[test])
        )

    cases = {
        "CollaborativeConformal (top-2 human)": collab,
        "CollaborativeConformal (H = ∅)": collab_empty,
        "collab_cp.baselines.SplitConformalClassifier": ours_split,
    }
    try:
        from mapie.classification import SplitConformalClassifier as MapieSCC
        from sklearn.base import BaseEstimator, ClassifierMixin

        class Lookup(ClassifierMixin, BaseEstimator):
            def __init__(self, table=None):
                self.table = table

            def fit(self, X, y):
                self.classes_ = np.arange(self.table.shape[1])
                return self

            def predict_proba(self, X):
                return self.table[np.asarray(X, dtype=int).ravel()]

            def predict(self, X):
                return self.predict_proba(X).argmax(axis=1)

        idx = np.arange(d.y.size)[:, None]
        est = Lookup(d.probs).fit(idx[:10], np.arange(10))

        def mapie():
            m = MapieSCC(est, confidence_level=0.7, conformity_score="lac", prefit=True)
            m.conformalize(idx[cal], d.y[cal])
            return m.predict_set(idx[test])[1][:, :, 0]

        cases["MAPIE SplitConformalClassifier (peer)"] = mapie
        same = bool(np.array_equal(mapie(), collab_empty()))
    except ImportError:
        same = None

    offline = f"offline: calibrate 500 + predict {n_test} (K = 10)"
    for name, fn in cases.items():
        report.add(offline, name, time_call(fn, repeats=repeats), identical_to_mapie=same)
    if same is not None:
        report.ratio(
            offline,
            "collab_cp.baselines.SplitConformalClassifier",
            "MAPIE SplitConformalClassifier (peer)",
        )
        report.ratio(
            offline, "CollaborativeConformal (top-2 human)", "MAPIE SplitConformalClassifier (peer)"
        )

    stream = shifting_stream(2_000 if args.quick else 10_000, seed=0)

    def run_batch():
        OnlineCollaborative(0.05, 0.7).run(stream.probs, stream.human, stream.y)

    def run_steps():
        o = OnlineCollaborative(0.05, 0.7)
        for t in range(stream.y.size):
            o.update(stream.probs[t], stream.human[t], int(stream.y[t]))

    online = f"online: {stream.y.size} steps"
    report.add(online, "run() over the stream", time_call(run_batch, repeats=repeats))
    report.add(online, "update() per step", time_call(run_steps, repeats=max(1, repeats // 2)))
    report.ratio(online, "run() over the stream", "update() per step")

    pool = synthetic_collaboration(5000, "top_k", k=2, seed=1)
    n_splits = 100 if args.quick else 500
    case = f"experiments: {n_splits} splits of 5,000"
    for baselines in (False, True):
        t = time_call(
            lambda b=baselines: split_evaluation(
                1 - pool.probs,
                pool.human,
                pool.y,
                n_cal=500,
                n_splits=n_splits,
                epsilon=0.05,
                delta=0.7,
                human_scores=1 - pool.human_probs,
                baselines=b,
            ),
            repeats=1,
            warmup=0,
        )
        report.add(
            case, f"split_evaluation(baselines={baselines})", t, splits_per_s=n_splits / t.median
        )

    print(report.to_text())
    print(f"H = ∅ sets identical to MAPIE's: {same}")
    print(f"written to {report.write(args.out)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
