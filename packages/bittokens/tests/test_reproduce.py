"""The reproduce pipeline end to end at toy sizes (the real quick run takes minutes)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from bittokens import _reproduce
from bittokens._reproduce import QUICK, make_scheme, noise_exact_rate


def test_reproduce_pipeline_at_toy_size(tmp_path, monkeypatch, torch_threads):
    tiny = dataclasses.replace(
        QUICK,
        tasks=("minmax", "mult"),
        steps=2,
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
        "Bit-exact decode rate under logit noise 2b-1+U(-a",
    ]
    solo = res.tables[0]
    assert list(solo.rows) == list(_reproduce.COMPARED)
    assert solo.rows["bittokens"]["tokens/number"] == 1.0
    assert solo.rows["single-digit"]["tokens/number"] > 2
    for fig in res.figures:
        assert fig.exists() and fig.suffix == ".png"
    assert set(res.checks) >= {
        "bittokens minmax exact >= 0.95",
        "bittokens mult >= xval + 0.1",
        "bittokens mult >= single-digit + 0.1",
        "quick <= 4 min wall, 2 workers",
    }
    cells = [json.loads(line) for line in (tmp_path / "cells.jsonl").read_text().splitlines()]
    assert len(cells) == 2 * 3 * 1  # tasks x schemes x seeds x one rate
    assert all(c["cpu_seconds"] > 0 for c in cells)
    assert any("One learning rate for every scheme, 0.001" in n for n in res.notes)
    assert res.checks["params within 10% (non-embedding)"]
    assert res.headline.startswith("minmax: bittokens ") and "mult: bittokens " in res.headline
    assert any(n.startswith("Quick tasks: MinMax and Add") for n in res.notes)


def test_noise_rate_matches_theory():
    amps = np.array([0.5, 1.0, 1.5])
    rates = noise_exact_rate(amps, n=4000)
    assert rates[0] == 1.0 and rates[1] == 1.0
    theory = (1 - 0.5 / 3.0) ** 64
    assert abs(rates[2] - theory) < 4 * np.sqrt(theory * (1 - theory) / 4000) + 1e-3


def test_make_scheme_names():
    assert make_scheme("bittokens").name == "bittokens"
    import pytest

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
    tiny = dataclasses.replace(
        QUICK,
        tasks=("minmax",),
        steps=1,
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
    monkeypatch.setattr(_reproduce, "FULL", tiny)
    res = _reproduce.reproduce(False, tmp_path, False)
    cells = [json.loads(line) for line in (tmp_path / "cells.jsonl").read_text().splitlines()]
    assert len(cells) == 2 * 2 + 2  # grid at seed 0, then seed 1 at the chosen rate
    assert list(res.tables[0].rows) == ["bittokens", "xval"]
    # one step learns nothing: every validation score ties and the notes say so
    assert sum("validation scores tied" in n for n in res.notes) == 2
    assert "comparison <= 30 min wall, 2 workers" in res.checks
