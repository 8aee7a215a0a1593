"""Pieces of ``reproduce`` at tiny sizes (the quick run itself takes over 30 s here)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from icml26_shared.config import config_dict, override
from icml26_shared.experiment import Experiment, ExperimentResult
from up_ocp import _reproduce as rep


def test_width_conventions():
    s = np.array([1.0, 3.0, 2.0, 5.0])
    q = np.array([np.inf, -1.0, np.inf, 2.5])
    # +inf counts the largest score seen before t (0 first); an empty set (q < 0) counts 0
    np.testing.assert_array_equal(rep._widths(s, q), [0.0, 0.0, 3.0, 2.5])
    summ = rep.summarize(s, q)
    assert summ["miss"] == 0.5 and summ["inf"] == 0.5


def test_aci_pick_best_and_median():
    rng = np.random.default_rng(0)
    s = np.abs(rng.standard_normal((2, 800)))
    grid = rep.aci_grid(s)
    assert grid["miss"].shape == (len(rep.ACI_GRID), 2)
    pick = rep.pick_aci(grid)
    ok = np.abs(grid["miss"].mean(1) - 0.1) <= 0.01
    assert ok[pick["best"]]
    assert grid["width"].mean(1)[pick["best"]] == np.min(grid["width"].mean(1)[ok])
    assert pick["median"] == len(rep.ACI_GRID) // 2


def test_identity_and_bound_tables_pass():
    result = ExperimentResult("up-ocp", "t")
    rep._identity_table(result)
    rep._bound_table(result)
    assert [c.id for c in result.details] == ["identity", "bound"]
    assert all(c.passed for c in result.details)
    assert result.details[0].value <= 1e-9 <= result.details[0].bound


def test_plot_writes_png(tmp_path):
    s = np.abs(np.random.default_rng(0).standard_normal(300))
    runs = {row: (m.label, s, rep._run_zoo(row, s)) for row, m in list(rep.ZOO.items())[:3]}
    path = rep._plot(tmp_path / "x.png", runs, "t", 50)
    assert path.stat().st_size > 1000


def test_experiment_object():
    assert isinstance(rep.EXPERIMENT, Experiment) and rep.EXPERIMENT.package == "up-ocp"
    assert rep.EXPERIMENT.quick_config is rep.QUICK and rep.EXPERIMENT.full_config is rep.FULL


def test_config_overrides_and_validation():
    cfg = override(rep.QUICK, ["cp_lengths=100,200", "peer_series=sp500,wti"])
    assert cfg.cp_lengths == (100, 200) and cfg.peer_series == ("sp500", "wti")
    assert config_dict(rep.FULL)["peer_series"] == list(rep.RETURN_SERIES)
    with pytest.raises(ValueError, match="cp_seeds"):
        dataclasses.replace(rep.QUICK, cp_seeds=0)
    with pytest.raises(ValueError, match="sp500"):
        dataclasses.replace(rep.QUICK, real_series=("vix",))
    with pytest.raises(ValueError, match="must be one of"):
        override(rep.QUICK, ["real_series=sp500,dax"])


def test_peer_table_skips_online_conformal_with_a_note(monkeypatch):
    rng = np.random.default_rng(1)
    monkeypatch.setattr(rep, "load_returns", lambda name: rng.standard_normal(420))
    monkeypatch.setattr(rep, "online_conformal_available", lambda: False)
    result = ExperimentResult("up-ocp", "t")
    table = rep._peer_table(rep.QUICK, False, result)
    assert any("not installed" in n for n in result.notes)
    assert [(c.id, c.value, c.passed) for c in result.details] == [("peer-finite", 0.0, True)]
    assert "oc-faci" not in table.rows and "up-ocp" in table.rows
    md = table.to_markdown()
    assert "UP-OCP (ours, ε=1)" in md and "online-conformal)" not in md and "inf" not in md


def test_stream_tables_on_two_short_series():
    pytest.importorskip("statsmodels")
    cfg = dataclasses.replace(
        rep.QUICK, stream_series=("inflation", "elnino"), stream_max_T=300, stream_window=20
    )
    result = ExperimentResult("up-ocp", "t")
    cov, wid, summary = rep._stream_tables(cfg, False, result)
    assert cov.to_dict() and wid.to_dict()
    assert summary["long"] == []  # no stream of >= 1,000 steps: no coverage check
    assert set(summary["plain_cov"]) == {"inflation", "elnino"}


def test_stream_config_refuses_unknown_series():
    with pytest.raises(ValueError, match="stream_series"):
        dataclasses.replace(rep.QUICK, stream_series=("airpassengers",))
    with pytest.raises(ValueError, match="stream_max_T"):
        dataclasses.replace(rep.QUICK, stream_max_T=10)
