"""The reproduce pipeline end to end at toy sizes (the real quick run takes minutes)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from r4_rl import _reproduce


def test_reproduce_pipeline_at_toy_size(tmp_path, monkeypatch):
    pytest.importorskip("gymnasium")
    pytest.importorskip("matplotlib")
    tiny = dataclasses.replace(
        _reproduce.QUICK,
        seeds=(0,),
        grid_pool=200,
        grid_train=100,
        budgets=(50, 100),
        grid_epochs=3,
        q_episodes=200,
        pend_seeds=(0,),
        pend_pool=24,
        pend_train=12,
        pend_budget=12,
        pend_epochs=1,
        cem_iterations=1,
        cem_population=3,
        cem_episodes=1,
        eval_episodes=1,
    )
    monkeypatch.setattr(_reproduce, "QUICK", tiny)
    res = _reproduce.EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    assert [t.title.split(",")[0].split(" ")[0] for t in res.tables] == [
        "Soft",
        "GridWorld",
        "GridWorld",
        "Pendulum-v1",
    ]
    assert list(res.tables[1].rows) == [
        *_reproduce.METHODS,
        "R4, 10% ratings flipped",
        "oracle (true reward)",
    ]
    assert len(res.checks) == 7 and all(k[0] == str(i + 1) for i, k in enumerate(res.checks))
    # items 1 and 2 do not depend on sizes: they must pass even here
    assert list(res.checks.values())[:2] == [True, True]
    for fig in res.figures:
        assert fig.exists() and fig.suffix == ".png"
    data = json.loads((tmp_path / "result.json").read_text())
    assert data["package"] == "r4-rl" and data["headline"]
