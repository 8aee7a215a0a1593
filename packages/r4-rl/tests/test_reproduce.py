"""The reproduce pipeline end to end at toy sizes (the real quick run takes minutes)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from r4_rl import _reproduce


def test_reproduce_pipeline_at_toy_size(tmp_path):
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
    experiment = dataclasses.replace(_reproduce.EXPERIMENT, quick_config=tiny)
    res = experiment.run(quick=True, out_dir=tmp_path, progress=False)
    assert [t.title.split(",")[0].split(" ")[0] for t in res.tables] == [
        "Soft",
        "GridWorld",
        "GridWorld",
        "Pendulum-v1",
    ]
    assert list(res.tables[1].rows) == [*_reproduce.METHODS, "R4-flip", "oracle"]
    assert res.tables[1].label("oracle") == "oracle (true reward)"
    items = [k[0] for k in res.checks]
    assert items == sorted(items) and set(items) == set("1234567")
    # items 1 and 2 do not depend on sizes: they must pass even here
    assert all(v for k, v in res.checks.items() if k[0] in "12")
    assert {"rank-exact", "grid-tau", "small-budget", "pend-cem"} <= {c.id for c in res.details}
    for fig in res.figures:
        assert fig.exists() and fig.suffix == ".png"
    data = json.loads((tmp_path / "result.json").read_text())
    assert data["package"] == "r4-rl" and data["headline"]
    assert data["config"]["budgets"] == [50, 100]


def test_config_presets_overrides_and_validation():
    from icml26_shared.config import override

    exp = _reproduce.EXPERIMENT
    assert exp.quick_config is _reproduce.QUICK and exp.full_config is _reproduce.FULL
    assert override(_reproduce.QUICK, ["budgets=50,100", "seeds=0"]).budgets == (50, 100)
    with pytest.raises(ValueError, match="at most grid_train"):
        dataclasses.replace(_reproduce.QUICK, budgets=(50, 600))
    with pytest.raises(ValueError, match="pend_train must be in"):
        dataclasses.replace(_reproduce.QUICK, pend_train=400)
    with pytest.raises(ValueError, match="seeds"):
        dataclasses.replace(_reproduce.QUICK, seeds=())
