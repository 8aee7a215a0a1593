"""The reproduce pipeline end to end at toy sizes (the real quick run takes minutes)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from bittokens import _reproduce
from bittokens._reproduce import QUICK, make_scheme, noise_exact_rate


def test_reproduce_pipeline_at_toy_size(tmp_path, monkeypatch, torch_threads):
    tiny = dataclasses.replace(
        QUICK,
        tasks=("minmax", "mult"),
        steps=(("minmax", 2), ("mult", 2)),
        batch_size=4,
        lrs=(1e-3,),
        seeds=(0,),
        n_train=16,
        n_val=3,
        n_test=3,
        curve_points=1,
        workers=1,
        multitask=False,
    )
    monkeypatch.setattr(_reproduce, "QUICK", tiny)
    res = _reproduce.reproduce(True, tmp_path, False)
    assert [t.title.split(",")[0] for t in res.tables] == [
        "Test scores",
        "Numeric answers: log-sMAPE and per-field bit accuracy (test",
        "Equal token budget per task: tokens",
        "Test score per seed (scheme x task x seed)",
        "Bit-exact decode rate under logit noise 2b-1+U(-a",
    ]
    solo = res.tables[0]
    assert list(solo.rows) == list(_reproduce.COMPARED)
    assert solo.rows["bittokens"]["tokens/number"] == 1.0
    assert solo.rows["single-digit"]["tokens/number"] > 2
    for fig in res.figures:
        assert fig.exists() and fig.suffix == ".png"
    assert set(res.checks) >= {
        "(a) bittokens minmax exact >= 0.95",
        "(d) bittokens mult >= xval + 0.1",
    }
    # the time bar is for two workers; this toy run had one, so it cannot test it
    assert "quick <= 4 min wall, 2 workers" not in res.checks
    assert any("on 1 worker process(es)" in n for n in res.notes)
    assert any(k.startswith("(c) bittokens mult sign accuracy >= 0.95") for k in res.checks)
    bits = res.tables[1]
    assert list(bits.rows) == [f"{s} mult" for s in _reproduce.COMPARED]
    budget = res.tables[2]
    tokens = {k: budget.rows[k]["tokens"] for k in budget.rows}
    steps = {k: budget.rows[k]["steps"] for k in budget.rows}
    for t in ("minmax", "mult"):  # equal tokens (up to one step), different steps
        ref = tokens[f"bittokens {t}"]
        for s in _reproduce.COMPARED:
            per_step = tokens[f"{s} {t}"] / steps[f"{s} {t}"]
            assert abs(tokens[f"{s} {t}"] - ref) <= per_step / 2 + 1e-9
        assert steps[f"single-digit {t}"] < steps[f"bittokens {t}"] == 2
        assert (
            budget.rows[f"bittokens {t}"]["FLOPs"]
            == 6 * solo.rows["bittokens"]["params (non-emb.)"] * tokens[f"bittokens {t}"]
        )
    cells = [json.loads(line) for line in (tmp_path / "cells.jsonl").read_text().splitlines()]
    assert len(cells) == 2 * 3 * 1  # tasks x schemes x seeds x one rate
    assert all(c["cpu_seconds"] > 0 for c in cells)
    assert {c["scheme"]: c["steps"] for c in cells if c["tasks"] == ["mult"]}["bittokens"] == 2
    assert any("One learning rate for every scheme, 0.001" in n for n in res.notes)
    assert res.checks["params within 10% (non-embedding)"]
    assert res.headline.startswith("minmax: bittokens ") and "mult: bittokens " in res.headline
    assert any(n.startswith("Quick mode is sized for a few minutes") for n in res.notes)


def test_noise_rate_matches_theory():
    amps = np.array([0.5, 1.0, 1.5])
    rates = noise_exact_rate(amps, n=4000)
    assert rates[0] == 1.0 and rates[1] == 1.0
    theory = (1 - 0.5 / 3.0) ** 64
    assert abs(rates[2] - theory) < 4 * np.sqrt(theory * (1 - theory) / 4000) + 1e-3


def test_make_scheme_names():
    assert make_scheme("bittokens").name == "bittokens"
    with pytest.raises(ValueError, match="name must be one of"):
        make_scheme("bpe")


def _run(scheme, lr, val):
    return {"scheme": scheme, "lr": lr, "val": val, "test": {"mult": 0.0}}


def test_lr_choice_reports_ties_instead_of_silently_taking_the_first():
    best, note = _reproduce._choose_lr([_run("xval", 1e-3, 0.2), _run("xval", 3e-3, 0.5)])
    assert best["lr"] == 3e-3 and note is None
    best, note = _reproduce._choose_lr([_run("xval", 3e-3, 0.0), _run("xval", 1e-3, 0.0)])
    assert best["lr"] == 3e-3
    assert "tied at 0 for lr 0.003, 0.001" in note and "chose 0.003" in note


def test_grid_mode_runs_grid_then_seeds_and_states_ties(tmp_path, monkeypatch, torch_threads):
    monkeypatch.setattr(_reproduce, "FULL", _tiny_grid(("minmax",), steps=1))
    res = _reproduce.reproduce(False, tmp_path, False)
    cells = [json.loads(line) for line in (tmp_path / "cells.jsonl").read_text().splitlines()]
    assert len(cells) == 2 * 2 + 2  # grid at seed 0, then seed 1 at the chosen rate
    assert list(res.tables[0].rows) == ["bittokens", "xval"]
    per_seed = next(t for t in res.tables if t.title.startswith("Test score per seed"))
    assert list(per_seed.rows) == ["bittokens minmax", "xval minmax"]
    assert per_seed.columns == ["seed 0", "seed 1", "lr"]
    for scheme in ("bittokens", "xval"):
        row = per_seed.rows[f"{scheme} minmax"]
        runs = [c for c in cells if c["scheme"] == scheme and c["lr"] == float(row["lr"])]
        assert sorted(c["seed"] for c in runs) == [0, 1]
        assert all(row[f"seed {c['seed']}"] == c["test"]["minmax"] for c in runs)
    # one step learns nothing: every validation score ties and the notes say so
    assert sum("validation scores tied" in n for n in res.notes) == 2
    stages = [json.loads(x) for x in (tmp_path / "stages.jsonl").read_text().splitlines()]
    two = min(r["workers"] for r in stages) >= 2  # the time bar needs the two workers it names
    assert ("comparison <= 30 min wall, 2 workers" in res.checks) == two


def _tiny_grid(tasks=("minmax", "add"), steps=2):
    """A two-rate, two-seed, two-scheme grid at toy sizes."""
    return dataclasses.replace(
        QUICK,
        tasks=tasks,
        steps=tuple((t, steps) for t in tasks),
        batch_size=4,
        lrs=(1e-3, 3e-3),
        seeds=(0, 1),
        n_train=8,
        n_val=2,
        n_test=2,
        curve_points=1,
        workers=1,
        schemes=("bittokens", "xval"),
    )


def test_split_half_is_a_balanced_partition():
    cfg = dataclasses.replace(_reproduce.FULL, workers=1)
    jobs = _reproduce._grid_jobs(cfg, _reproduce._groups(cfg))
    a, b = _reproduce.split_half(jobs, 0), _reproduce.split_half(jobs, 1)
    assert sorted(map(repr, a + b)) == sorted(map(repr, jobs)) and not set(a) & set(b)
    cost_a, cost_b = (sum(_reproduce._cost(j) for j in h) for h in (a, b))
    assert abs(cost_a - cost_b) <= max(_reproduce._cost(j) for j in jobs)
    with pytest.raises(ValueError, match="half must be 0 or 1"):
        _reproduce.split_half(jobs, 2)


def test_comparison_in_parts_gives_the_one_shot_result(tmp_path, monkeypatch, torch_threads):
    from bittokens import comparison

    monkeypatch.setattr(_reproduce, "FULL", _tiny_grid())
    whole = _reproduce.reproduce(False, tmp_path / "whole", False)
    parts = tmp_path / "parts"
    with pytest.raises(ValueError, match="stage 'grid' must be finished first"):
        comparison.main(["seeds", "--out", str(parts), "--no-progress"])
    for half in ("0", "1"):
        assert comparison.main(["grid", "--half", half, "--out", str(parts), "--no-progress"]) == 0
    # a repeated slot resumes: nothing is left to run
    assert comparison.main(["grid", "--half", "1", "--out", str(parts), "--no-progress"]) == 0
    for half in ("0", "1"):
        comparison.main(["seeds", "--half", half, "--out", str(parts), "--no-progress"])
    comparison.main(["summary", "--out", str(parts)])
    stages = [json.loads(x) for x in (parts / "stages.jsonl").read_text().splitlines()]
    assert [s["cells"] for s in stages][2] == 0
    assert sum(s["cells"] for s in stages) == 2 * 2 * 2 + 2 * 2  # grid, then seed 1
    staged = json.loads((parts / "result.json").read_text())
    one = json.loads(json.dumps(whole.tables[0].to_dict()["rows"]))
    for scheme, row in staged["tables"][0]["rows"].items():  # scores, not timings
        for col in ("minmax", "add", "tokens/number", "params (non-emb.)", "best lr"):
            assert row[col] == one[scheme][col], (scheme, col)
    assert staged["checks"].keys() == whole.checks.keys()


def test_full_mode_is_the_acceptance_and_quick_mode_is_smaller():
    """Full = MinMax/Add/Mult on the small range (Mult within 2000 BitTokens steps) and Add/Mult on
    the paper's 15-digit range, BitTokens vs xVal vs single-digit, 3 seeds, an lr grid of the
    paper's optimizer, 2 workers; quick = MinMax only, fewer seeds, one rate."""
    full, quick = _reproduce.FULL, QUICK
    assert full.tasks == ("minmax", "add", "mult", "add@paper", "mult@paper")
    assert full.seeds == (0, 1, 2) and full.steps_for("mult") <= 2000
    assert set(full.schemes) == {"bittokens", "xval", "single-digit"} and full.workers == 2
    assert full.solo and not full.multitask and len(full.lrs) > 1 and 0.02 in full.lrs
    assert set(quick.tasks) < set(full.tasks) and len(quick.seeds) < len(full.seeds)
    assert len(quick.lrs) == 1 and quick.schemes == full.schemes and quick.workers == 2
    assert quick.d == full.d == 128
    assert _reproduce._task_kw("mult@paper", full)[1] == {"max_digits": 15, "exp_range": (-14, 14)}
    assert _reproduce._train_sampling("bittokens", "mult") == "binary_uniform"
    assert _reproduce._train_sampling("single-digit", "mult") == "decimal"
