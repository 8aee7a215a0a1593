"""Wall-clock of unlearning on digits: ours against retraining and the parameter baselines.

Run: ``.venv/bin/python packages/rep-unlearn/benchmarks/run.py [--quick] [--out reports/bench/rep-unlearn.json]``

One process, one thread count, the same task and original model for every method; medians of
``repeats`` calls (``icml26_shared.bench.time_call``). Baseline hyperparameters are first chosen
by their validation rule and then timed at that value; ours is timed both at the chosen β (one
fit) and with the whole β grid (``beta="auto"``). Ratios: method time / our time (> 1: ours is
faster). Quality figures (forget / retained-test accuracy) are recorded beside each timing.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from icml26_shared.bench import BenchReport, time_call
from rep_unlearn import Unlearner, evaluate
from rep_unlearn import baselines as B
from rep_unlearn.data import digits_task

KEYS = {"fine-tune": "lr", "NegGrad+": "alpha", "SCRUB": "lr"}
FNS = {"fine-tune": B.finetune, "NegGrad+": B.neggrad, "SCRUB": B.scrub}


def bench_case(report: BenchReport, forget: str, encoder: str, seed: int, repeats: int) -> None:
    task = digits_task(forget, encoder=encoder, seed=seed)
    case = f"digits/{encoder} {forget} seed {seed}"
    original = task.fit_original(seed)
    holder: dict[str, torch.nn.Module] = {}

    def run_retrain() -> None:
        holder["retrain"] = B.retrain(
            lambda: task.make_model(seed + 1000), task.retain, recipe=task.recipe, seed=seed + 1000
        )

    t = time_call(run_retrain, repeats=repeats, warmup=0)
    rt = holder["retrain"]

    def quality(model: torch.nn.Module) -> dict[str, float]:
        r = evaluate(model, task, original, rt, probe=False)
        return {"forget_acc": r.forget_acc, "test_acc_retained": r.test_acc_retained}

    report.add(case, "retrain", t, **quality(rt))
    auto = Unlearner(seed=seed)
    holder["ours"] = auto.fit(original, task.retain, task.forget, val=task.val)
    one = Unlearner(seed=seed, beta=auto.beta_)
    report.add(
        case,
        "ours (one fit)",
        time_call(lambda: one.fit(original, task.retain, task.forget), repeats=repeats),
        beta=auto.beta_,
        **quality(holder["ours"]),
    )
    report.add(
        case,
        "ours (beta grid)",
        time_call(
            lambda: Unlearner(seed=seed).fit(original, task.retain, task.forget, val=task.val),
            repeats=repeats,
        ),
    )
    for name, fn in FNS.items():
        tuned = fn(original, task.retain, task.forget, val=task.val, seed=seed)
        value = tuned.hyperparameters_[KEYS[name]]
        timing = time_call(
            lambda fn=fn, name=name, value=value: fn(
                original, task.retain, task.forget, val=task.val, seed=seed, **{KEYS[name]: value}
            ),
            repeats=repeats,
            warmup=0,
        )
        report.add(case, name, timing, **{KEYS[name]: value}, **quality(tuned))
    for peer in ["retrain", "fine-tune", "NegGrad+", "SCRUB"]:
        report.ratio(case, "ours (one fit)", peer)
    report.ratio(case, "ours (beta grid)", "retrain")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one seed, MLP only, 3 repeats")
    parser.add_argument("--out", default="reports/bench/rep-unlearn.json")
    args = parser.parse_args()
    report = BenchReport("rep-unlearn", quick=args.quick)
    repeats = 3 if args.quick else 5
    cases = [("class:0", "mlp", 0)]
    if not args.quick:
        cases += [("class:0", "mlp", 1), ("random:0.1", "mlp", 0), ("class:0", "cnn", 0)]
    for forget, encoder, seed in cases:
        bench_case(report, forget, encoder, seed, repeats)
    print(report.to_text())
    print(f"torch threads: {torch.get_num_threads()}")
    print(f"written {report.write(Path(args.out))}")


if __name__ == "__main__":
    main()
