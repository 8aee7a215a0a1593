"""Time of one paper-size MetaStreet fit, before and after the training-loop speed-ups.

Run: ``.venv/bin/python packages/metastreet/benchmarks/fit_time.py [--quick] [--out reports/bench/metastreet_fit.json]``

One training run per case (200 epochs, the paper's sizes on the 32x32 synthetic city, one torch
thread), same seed, at ``w = 1`` (cross-entropy only) and at ``w = 0.5`` (with the contrast, as
each of ``w="auto"``'s three candidates), two settings each: *before* is the earlier loop (the image
LSTM as a packed sequence, the whole network re-run for validation after every step, and the
InfoNCE negatives gathered as ``A x M`` copies before normalising); *after* runs the
length-bucketed LSTM, scores validation on the training pass's LSTM output and takes the
negatives' similarities from one matrix product. Both select the epoch on validation; the test
weighted F1 of each is recorded beside its time.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from icml26_shared.bench import BenchReport
from metastreet import HashingEncoder, MetaStreet, make_city, street_features


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="20 epochs instead of 200")
    ap.add_argument("--out", default="reports/bench/metastreet_fit.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    epochs = 20 if args.quick else 200
    city = make_city(32, seed=0)
    street_features(city, 12)  # features once, outside the timed fits
    report = BenchReport("metastreet-fit", quick=args.quick)
    before, after = "before (earlier loop)", "after (bucketed LSTM, shared pass, bank negatives)"
    for w in (1.0, 0.5):
        case = f"paper size, {city.n_streets} streets, {epochs} epochs, w={w}"
        for name, buckets, legacy in ((before, 0, True), (after, 8, False)):
            model = MetaStreet(4, text_encoder=HashingEncoder(64), w=w, n_categories=12,
                               epochs=epochs, lstm_buckets=buckets)  # fmt: skip
            model._separate_validation_pass = model._gathered_negatives = legacy
            t0 = time.perf_counter()
            model.fit(city, seed=0)
            sec = time.perf_counter() - t0
            wf1 = model.evaluate(city)["weighted_f1"]
            report.add(case, name, sec, test_weighted_f1=wf1, val_weighted_f1=model.val_f1_)
            print(f"w={w} {name}: {sec:.1f} s, test wF1 {wf1:.3f}", flush=True)
        report.ratio(case, after, before)
    print(report.to_text())
    print(f"written to {report.write(Path(args.out))}")


if __name__ == "__main__":
    main()
