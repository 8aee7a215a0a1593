"""The reproduce pipeline end to end at toy sizes (the real quick run takes minutes)."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from bittokens import _reproduce
from bittokens._reproduce import QUICK, make_scheme, noise_exact_rate
from icml26_shared.config import override
from icml26_shared.jobs import RunPaused


def _cells(out_dir):
    """The cached cells of a run (one pickle per training run)."""
    return [pickle.loads(p.read_bytes()) for p in sorted((out_dir / "cache").glob("*.pkl"))]


def test_reproduce_pipeline_at_toy_size(tmp_path):
    tiny = dataclasses.replace(
        QUICK,
        tasks=("minmax", "mult"),
        steps=(2, 2),
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
    res = _reproduce.reproduce(tiny, tmp_path, False)
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
    ids = {c.id for c in res.details}
    assert ids == {"params", "noise", "a-minmax", "c-mult", "c-sign", "d-mult"}
    d = next(c for c in res.details if c.id == "d-mult")  # the bar is xVal's score + 0.1
    assert d.op == ">=" and d.bound == pytest.approx(res.tables[0].rows["xval"]["mult"].mean + 0.1)
    # timing is reported, never checked
    assert not any("wall" in label for label in res.checks)
    assert any("on 1 worker process(es)" in n and "not checked" in n for n in res.notes)
    assert any(k.startswith("(c) bittokens mult sign accuracy >= 0.95") for k in res.checks)
    bits = res.tables[1]
    assert list(bits.rows) == [f"{s}-mult" for s in _reproduce.COMPARED]
    assert bits.label("xval-mult") == "xval mult"
    budget = res.tables[2]
    tokens = {k: budget.rows[k]["tokens"] for k in budget.rows}
    steps = {k: budget.rows[k]["steps"] for k in budget.rows}
    for t in ("minmax", "mult"):  # equal tokens (up to one step), different steps
        ref = tokens[f"bittokens-{t}"]
        for s in _reproduce.COMPARED:
            per_step = tokens[f"{s}-{t}"] / steps[f"{s}-{t}"]
            assert abs(tokens[f"{s}-{t}"] - ref) <= per_step / 2 + 1e-9
        assert steps[f"single-digit-{t}"] < steps[f"bittokens-{t}"] == 2
        assert (
            budget.rows[f"bittokens-{t}"]["FLOPs"]
            == 6 * solo.rows["bittokens"]["params (non-emb.)"] * tokens[f"bittokens-{t}"]
        )
    cells = [c | {"tasks": list(c["test"])} for c in _cells(tmp_path)]
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


def test_grid_mode_runs_grid_then_seeds_and_states_ties(tmp_path):
    res = _reproduce.reproduce(_tiny_grid(("minmax",), steps=1), tmp_path, False)
    cells = _cells(tmp_path)
    assert len(cells) == 2 * 2 + 2  # grid at seed 0, then seed 1 at the chosen rate
    assert list(res.tables[0].rows) == ["bittokens", "xval"]
    per_seed = next(t for t in res.tables if t.title.startswith("Test score per seed"))
    assert list(per_seed.rows) == ["bittokens-minmax", "xval-minmax"]
    assert per_seed.columns == ["seed 0", "seed 1", "lr"]
    for scheme in ("bittokens", "xval"):
        row = per_seed.rows[f"{scheme}-minmax"]
        runs = [c for c in cells if c["scheme"] == scheme and c["lr"] == float(row["lr"])]
        assert sorted(c["seed"] for c in runs) == [0, 1]
        assert all(row[f"seed {c['seed']}"] == c["test"]["minmax"] for c in runs)
    # one step learns nothing: every validation score ties and the notes say so
    assert sum("validation scores tied" in n for n in res.notes) == 2


def _tiny_grid(tasks=("minmax", "add"), steps=2):
    """A two-rate, two-seed, two-scheme grid at toy sizes."""
    return dataclasses.replace(
        QUICK,
        tasks=tasks,
        steps=tuple(steps for _ in tasks),
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


def _scores(result):
    """Every table cell but the timings, by table title, row id and column."""
    return {
        (t.title, r, c): t.rows[r][c]
        for t in result.tables
        for r in t.rows
        for c in t.rows[r]
        if not c.startswith("train s")
    }


def test_a_paused_run_resumes_to_the_uninterrupted_result(tmp_path):
    cfg = _tiny_grid(("minmax",), steps=1)
    whole = _reproduce.reproduce(cfg, tmp_path / "whole", False)
    paused = dataclasses.replace(cfg, max_new_jobs=2)  # 4 grid cells, then 2 seed cells
    calls = 0
    while True:
        calls += 1
        try:
            res = _reproduce.reproduce(paused, tmp_path / "parts", False)
            break
        except RunPaused as stop:
            assert stop.code == 3
    assert calls == 3  # 2 grid cells; the other 2 (a pause before the seeds); the 2 seeds
    assert len(_cells(tmp_path / "parts")) == len(_cells(tmp_path / "whole")) == 6
    assert _scores(res) == _scores(whole)
    assert res.checks == whole.checks
    # the run's controls are not part of the cache key: other values reuse every cell
    _reproduce.reproduce(dataclasses.replace(cfg, max_new_jobs=1), tmp_path / "parts", False)
    assert len(_cells(tmp_path / "parts")) == 6


def test_config_fields_are_named_and_checked():
    cfg = override(QUICK, ["steps=300", "schemes=bittokens,xval", "exp_range=-2,2"])
    assert cfg.steps_for("minmax") == 300 and cfg.schemes == ("bittokens", "xval")
    assert cfg.exp_range == (-2, 2)
    with pytest.raises(ValueError, match="unknown config key"):
        override(QUICK, ["stepz=3"])
    with pytest.raises(ValueError, match="steps must give one count per task"):
        override(QUICK, ["tasks=minmax,add"])
    with pytest.raises(ValueError, match="tasks must be among"):
        override(QUICK, ["tasks=minmax@home"])
    with pytest.raises(ValueError, match="max_new_jobs"):
        override(QUICK, ["max_new_jobs=0"])
    assert _reproduce.EXPERIMENT.config(quick=True) is QUICK


def test_full_mode_is_the_acceptance_and_quick_mode_is_smaller():
    """Full = MinMax/Add/Mult on the small range (Mult within 2000 BitTokens steps) and Add/Mult on
    the paper's 15-digit range, BitTokens vs xVal vs single-digit, 3 seeds, an lr grid of the
    paper's optimizer, 2 workers; quick = MinMax only, fewer seeds, one rate."""
    full, quick = _reproduce.FULL, QUICK
    assert full.tasks == ("minmax", "add", "mult", "add@paper", "mult@paper")
    assert full.seeds == (0, 1, 2) and full.steps_for("mult") <= 2000
    assert set(full.schemes) == {"bittokens", "xval", "single-digit"} and full.workers == 2
    assert full.max_new_jobs is None and quick.max_new_jobs is None
    assert full.solo and not full.multitask and len(full.lrs) > 1 and 0.02 in full.lrs
    assert set(quick.tasks) < set(full.tasks) and len(quick.seeds) < len(full.seeds)
    assert len(quick.lrs) == 1 and quick.schemes == full.schemes and quick.workers == 2
    assert quick.d == full.d == 128
    assert _reproduce._task_kw("mult@paper", full)[1] == {"max_digits": 15, "exp_range": (-14, 14)}
    assert _reproduce._train_sampling("bittokens", "mult") == "binary_uniform"
    assert _reproduce._train_sampling("single-digit", "mult") == "decimal"
