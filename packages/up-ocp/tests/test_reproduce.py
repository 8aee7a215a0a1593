"""Pieces of ``reproduce`` at tiny sizes (the quick run itself takes over 30 s here)."""

from __future__ import annotations

import numpy as np

from icml26_shared.experiment import Experiment
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
    checks: dict[str, bool] = {}
    rep._identity_table(checks)
    rep._bound_table(checks)
    assert checks == {"1 UP identity to 1e-9": True, "2 bound holds at every t <= 1e4": True}


def test_plot_writes_png(tmp_path):
    s = np.abs(np.random.default_rng(0).standard_normal(300))
    runs = {name: (s, rep.run_method(m, s, **p)) for name, (m, p) in list(rep.ZOO.items())[:3]}
    path = rep._plot(tmp_path / "x.png", runs, "t", 50)
    assert path.stat().st_size > 1000


def test_experiment_object():
    assert isinstance(rep.EXPERIMENT, Experiment) and rep.EXPERIMENT.package == "up-ocp"


def test_peer_table_skips_online_conformal_with_a_note(monkeypatch):
    rng = np.random.default_rng(1)
    monkeypatch.setattr(rep, "load_returns", lambda name: rng.standard_normal(420))
    monkeypatch.setattr(rep, "online_conformal_available", lambda: False)
    checks: dict[str, bool] = {}
    notes: list[str] = []
    table = rep._peer_table(True, False, checks, notes)
    assert any("not installed" in n for n in notes)
    assert checks == {"26.3 no method's mean width is infinite (finite DtACI)": True}
    md = table.to_markdown()
    assert "UP-OCP (ours, ε=1)" in md and "online-conformal)" not in md and "inf" not in md
