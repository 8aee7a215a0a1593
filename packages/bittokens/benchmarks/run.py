"""Benchmarks for bittokens: codec throughput, tokens per number, train-step time per scheme.

Run: ``.venv/bin/python packages/bittokens/benchmarks/run.py [--quick] [--out reports/bench/bittokens.json]``

Everything is measured side by side in one run with :mod:`icml26_shared.bench` (median of the
repeats; the report records the load average at the start and the end):

* codec throughput (numbers/s, one process) of the vectorised numpy and torch codecs vs a
  per-number Python loop (``struct`` + bit formatting) and vs per-bit int64 shifts in numpy, on
  the same inputs, with the speed ratios;
* tokens per number of each scheme, plus a byte-level BPE trained here with ``tokenizers``;
* train-step time (forward + backward + AdamW, via :func:`bittokens.fit`) of a TinyGPT per
  scheme on MinMax, with the ratio to BitTokens.

Only public names of :mod:`bittokens` are imported.
"""

from __future__ import annotations

import argparse
import struct

import numpy as np
import torch

from bittokens import BitTokens, TinyGPT, decode, encode, fit, format_number
from bittokens.baselines import DigitTokens, FoNE, SubwordTokens, XVal
from bittokens.data import make_task, sample_numbers
from icml26_shared.bench import BenchReport, time_call


def schemes(d: int = 128) -> dict:
    """The five schemes with the head sizes ``reproduce`` uses (parameter totals within 10%)."""
    return {
        "bittokens": BitTokens(d),
        "single-digit": DigitTokens(d),
        "subword": SubwordTokens(d),
        "xval": XVal(d, head_hidden=2 * d),
        "fone": FoNE(d),
    }


def loop_encode(xs: list[float]) -> list[list[int]]:
    out = []
    for x in xs:
        (u,) = struct.unpack(">Q", struct.pack(">d", x))
        out.append([int(c) for c in format(u, "064b")])
    return out


def loop_decode(rows: list[list[int]]) -> list[float]:
    return [struct.unpack(">d", struct.pack(">Q", int("".join(map(str, r)), 2)))[0] for r in rows]


def codec(report: BenchReport, n: int, n_loop: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-14, 15, n)
    bits = encode(x, reciprocal=False)
    logits = (2 * bits.astype(np.float32) - 1) + rng.uniform(-0.4, 0.4, bits.shape).astype(
        np.float32
    )
    shifts = np.arange(63, -1, -1, dtype=np.uint64)
    weights = np.uint64(1) << shifts
    xt, bt = torch.from_numpy(x), torch.from_numpy(bits)
    xs = x[:n_loop].tolist()
    rows = loop_encode(xs)
    assert np.array_equal(np.array(loop_decode(rows)).view(np.uint64), x[:n_loop].view(np.uint64))
    assert np.array_equal(np.array(rows, dtype=np.uint8), bits[:n_loop])
    cases = {
        "encode 64 bits": {
            "numpy": lambda: encode(x, reciprocal=False),
            "torch": lambda: encode(xt, reciprocal=False),
            "numpy per-bit int64 shifts": lambda: (
                (x.view(np.uint64)[:, None] >> shifts) & np.uint64(1)
            ).astype(np.uint8),
            "python loop": lambda: loop_encode(xs),
        },
        "encode 128 bits (reciprocal)": {"numpy": lambda: encode(x)},
        "decode from bits": {
            "numpy": lambda: decode(bits),
            "torch": lambda: decode(bt),
            "numpy per-bit int64 shifts": lambda: (
                (bits.astype(np.uint64) * weights).sum(-1).view(np.float64)
            ),
            "python loop": lambda: loop_decode(rows),
        },
        "decode from float32 logits": {"numpy": lambda: decode(logits)},
    }
    for case, methods in cases.items():
        for method, fn in methods.items():
            count = n_loop if method == "python loop" else n
            reps = max(1, repeats // 2) if method == "python loop" else repeats
            t = time_call(fn, repeats=reps)
            report.add(case, method, t, numbers_per_s=count / t.median, n=count)
    # the loop runs on fewer numbers, so the ratios compare numbers per second
    for case in ("encode 64 bits", "decode from bits"):
        for method in ("numpy", "torch", "numpy per-bit int64 shifts"):
            _per_number_ratio(report, case, method, "python loop")
    _per_number_ratio(
        report, "encode 128 bits (reciprocal)", "numpy", "python loop", "encode 64 bits"
    )
    _per_number_ratio(
        report, "decode from float32 logits", "numpy", "python loop", "decode from bits"
    )


def _rate(report: BenchReport, case: str, method: str) -> float:
    return next(
        r["numbers_per_s"] for r in report.rows if r["case"] == case and r["method"] == method
    )


def _per_number_ratio(
    report: BenchReport, case: str, ours: str, peer: str, peer_case: str | None = None
) -> float:
    value = _rate(report, case, ours) / _rate(report, peer_case or case, peer)
    report.ratios.append(
        {"case": case, "ours": ours, "peer": f"{peer} ({peer_case or case})", "speedup": value}
    )
    return value


def tokens_per_number(report: BenchReport, n: int) -> None:
    rng = np.random.default_rng(1)
    nums = sample_numbers(rng, n, max_digits=4, exp_range=(-3, 3)).tolist()
    for name, scheme in schemes().items():
        report.add("tokens per number", name, None, tokens=TinyGPT(scheme).tokens_per_number(nums))
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError:  # pragma: no cover
        return
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [
        " ".join(format_number(v) for v in sample_numbers(rng, 8).tolist()) for _ in range(3000)
    ]
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=2000, show_progress=False))
    text = [format_number(v) for v in nums]
    report.add(
        "tokens per number",
        "BPE (2000 merges, trained here)",
        None,
        tokens=float(np.mean([len(e.ids) for e in tok.encode_batch(text)])),
    )


def step_time(report: BenchReport, steps: int, batch: int, repeats: int) -> None:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        task = make_task("minmax", 512, seed=0)
        case = f"train {steps} steps (MinMax, batch {batch}, 1 thread)"
        for name, scheme in schemes().items():
            torch.manual_seed(0)
            model = TinyGPT(scheme)
            data = model.tokenize(task)
            t = time_call(
                lambda m=model, d=data: fit(m, d, steps=steps, batch_size=batch, lr=1e-3),
                repeats=repeats,
            )
            report.add(case, name, t, ms_per_step=t.median / steps * 1e3)
        for name in ("single-digit", "subword", "xval", "fone"):
            report.ratio(case, "bittokens", name)
    finally:
        torch.set_num_threads(threads)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/bittokens.json")
    args = parser.parse_args()
    n, n_loop, repeats = (10**6, 2 * 10**4, 3) if args.quick else (4 * 10**6, 10**5, 5)
    report = BenchReport("bittokens", quick=args.quick)
    codec(report, n, n_loop, repeats)
    tokens_per_number(report, 2000)
    step_time(report, 5 if args.quick else 20, 32, 3)
    enc = _rate(report, "encode 64 bits", "numpy")
    dec = _rate(report, "decode from bits", "numpy")
    dec_l = _rate(report, "decode from float32 logits", "numpy")
    loop_e = _rate(report, "encode 64 bits", "python loop")
    loop_d = _rate(report, "decode from bits", "python loop")
    checks = {
        "encode >= 10M/s": enc >= 1e7,
        "decode bits >= 50M/s": dec >= 5e7,
        "decode logits >= 10M/s": dec_l >= 1e7,
        "encode >= 50x loop": enc >= 50 * loop_e,
        "decode bits >= 50x loop": dec >= 50 * loop_d,
        "decode logits >= 50x loop": dec_l >= 50 * loop_d,
    }
    report.machine["acceptance_item_2"] = checks
    print(report.to_text())
    print(
        "\nAcceptance item 2:",
        ", ".join(f"{k}: {'pass' if v else 'FAIL'}" for k, v in checks.items()),
    )
    print(f"written {report.write(args.out)}")


if __name__ == "__main__":
    main()
