"""Benchmarks for bittokens: codec throughput, tokens per number, train-step time per scheme.

Run: ``.venv/bin/python packages/bittokens/benchmarks/run.py [--quick] [--out reports/bench/bittokens.json]``

Everything is measured side by side in one run (best of ``repeats`` timings):

* codec throughput (numbers/s, one process) of the vectorised numpy and torch codecs vs a
  per-number Python loop (``struct`` + bit formatting) and vs per-bit int64 shifts in numpy;
* tokens per number of each scheme, plus a byte-level BPE trained here with ``tokenizers``;
* train-step time (forward + backward + AdamW) of a TinyGPT per scheme on MinMax.
"""

from __future__ import annotations

import argparse
import json
import struct
import time
from pathlib import Path

import numpy as np
import torch

from bittokens import TinyGPT, decode, encode, format_number
from bittokens._reproduce import SCHEME_NAMES, make_scheme
from bittokens._train import AdamW
from bittokens.data import make_task, sample_numbers


def best_time(fn, repeats: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def loop_encode(xs: list[float]) -> list[list[int]]:
    out = []
    for x in xs:
        (u,) = struct.unpack(">Q", struct.pack(">d", x))
        out.append([int(c) for c in format(u, "064b")])
    return out


def loop_decode(rows: list[list[int]]) -> list[float]:
    return [struct.unpack(">d", struct.pack(">Q", int("".join(map(str, r)), 2)))[0] for r in rows]


def codec(n: int, n_loop: int, repeats: int) -> dict[str, float]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-14, 15, n)
    bits = encode(x, reciprocal=False)
    logits = (2 * bits.astype(np.float32) - 1) + rng.uniform(-0.4, 0.4, bits.shape).astype(
        np.float32
    )
    shifts = np.arange(63, -1, -1, dtype=np.uint64)
    weights = np.uint64(1) << shifts
    xt = torch.from_numpy(x)
    bt = torch.from_numpy(bits)
    xs = x[:n_loop].tolist()
    rows = loop_encode(xs)
    res = {
        "numpy encode (64 bits)": n / best_time(lambda: encode(x, reciprocal=False), repeats),
        "numpy encode (128 bits, reciprocal)": n / best_time(lambda: encode(x), repeats),
        "numpy decode from bits": n / best_time(lambda: decode(bits), repeats),
        "numpy decode from float32 logits": n / best_time(lambda: decode(logits), repeats),
        "torch encode (64 bits)": n / best_time(lambda: encode(xt, reciprocal=False), repeats),
        "torch decode from bits": n / best_time(lambda: decode(bt), repeats),
        "numpy per-bit int64 shifts encode": n
        / best_time(
            lambda: ((x.view(np.uint64)[:, None] >> shifts) & np.uint64(1)).astype(np.uint8),
            repeats,
        ),
        "numpy per-bit int64 shifts decode": n
        / best_time(lambda: (bits.astype(np.uint64) * weights).sum(-1).view(np.float64), repeats),
        "python loop encode": n_loop / best_time(lambda: loop_encode(xs), max(1, repeats // 2)),
        "python loop decode": n_loop / best_time(lambda: loop_decode(rows), max(1, repeats // 2)),
    }
    assert np.array_equal(np.array(loop_decode(rows)).view(np.uint64), x[:n_loop].view(np.uint64))
    assert np.array_equal(np.array(rows, dtype=np.uint8), bits[:n_loop])
    return res


def tokens_per_number(n: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    nums = sample_numbers(rng, n, max_digits=4, exp_range=(-3, 3)).tolist()
    out = {s: TinyGPT(make_scheme(s)).tokens_per_number(nums) for s in SCHEME_NAMES}
    try:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    except ImportError:  # pragma: no cover
        return out
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    corpus = [
        " ".join(format_number(v) for v in sample_numbers(rng, 8).tolist()) for _ in range(3000)
    ]
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=2000, show_progress=False))
    text = [format_number(v) for v in nums]
    out["BPE (2000 merges, trained here)"] = float(
        np.mean([len(e.ids) for e in tok.encode_batch(text)])
    )
    return out


def step_time(steps: int, batch: int) -> dict[str, float]:
    torch.set_num_threads(1)
    task = make_task("minmax", 512, seed=0)
    out = {}
    for s in SCHEME_NAMES:
        torch.manual_seed(0)
        model = TinyGPT(make_scheme(s))
        data = model.tokenize(task)
        opt = AdamW(model.parameters(), lr=1e-3)

        def one(model: TinyGPT = model, data=data, opt: AdamW = opt) -> None:
            b = data[torch.randint(0, len(data), (batch,))]
            t = model.loss_terms(b)
            loss = t["ce_sum"] / t["ce_count"] + t["num_sum"] / t["num_count"].clamp(min=1)
            opt.zero_grad()
            loss.backward()
            opt.step()

        one()
        start = time.perf_counter()
        for _ in range(steps):
            one()
        out[s] = (time.perf_counter() - start) / steps * 1000
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default="reports/bench/bittokens.json")
    args = parser.parse_args()
    n, n_loop, repeats = (10**6, 2 * 10**4, 3) if args.quick else (4 * 10**6, 10**5, 5)
    rates = codec(n, n_loop, repeats)
    tokens = tokens_per_number(2000)
    steps = step_time(5 if args.quick else 20, 32)

    print(f"Codec throughput, float64, one process (n = {n:,}, loop n = {n_loop:,}), M numbers/s")
    loop_enc, loop_dec = rates["python loop encode"], rates["python loop decode"]
    for k, v in rates.items():
        base = loop_dec if "decode" in k else loop_enc
        print(f"  {k:40s} {v / 1e6:9.2f}   x{v / base:8.1f} vs python loop")
    print("\nTokens per number (<= 4 significant digits, exponents -3..3)")
    for k, v in tokens.items():
        print(f"  {k:40s} {v:6.2f}")
    print("\nTrain step (MinMax, batch 32, 1 thread), ms")
    ref = steps["bittokens"]
    for k, v in steps.items():
        print(f"  {k:40s} {v:8.1f}   x{v / ref:5.2f} vs bittokens")
    checks = {
        "encode >= 10M/s": rates["numpy encode (64 bits)"] >= 1e7,
        "decode bits >= 50M/s": rates["numpy decode from bits"] >= 5e7,
        "decode logits >= 10M/s": rates["numpy decode from float32 logits"] >= 1e7,
        "encode >= 50x loop": rates["numpy encode (64 bits)"] >= 50 * loop_enc,
        "decode bits >= 50x loop": rates["numpy decode from bits"] >= 50 * loop_dec,
        "decode logits >= 50x loop": rates["numpy decode from float32 logits"] >= 50 * loop_dec,
    }
    print(
        "\nAcceptance item 2:",
        ", ".join(f"{k}: {'pass' if v else 'FAIL'}" for k, v in checks.items()),
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "package": "bittokens",
        "quick": args.quick,
        "codec_numbers_per_s": rates,
        "tokens_per_number": tokens,
        "train_step_ms": steps,
        "checks": checks,
    }
    out.write_text(json.dumps(payload, indent=2))
    print(f"\nwritten {out}")


if __name__ == "__main__":
    main()
