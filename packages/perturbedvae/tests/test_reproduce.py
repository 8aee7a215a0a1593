"""The reproduce pipeline end to end at toy sizes (the real quick run takes minutes)."""

from __future__ import annotations

import dataclasses

import pytest

from perturbedvae import _reproduce


def test_reproduce_pipeline_at_toy_size(tmp_path, monkeypatch):
    pytest.importorskip("scanpy")
    pytest.importorskip("matplotlib")
    tiny = dataclasses.replace(
        _reproduce.QUICK, seeds=(0, 1), epochs=2, syn_cells=24, syn_controls=80,
        semi_cells=12, semi_controls=40, semi_epochs=1, pred_cells=30, semi_peers=True,
    )  # fmt: skip
    monkeypatch.setattr(_reproduce, "QUICK", tiny)
    real_sim = _reproduce.simulate_screen
    monkeypatch.setattr(_reproduce, "simulate_screen", lambda *a, **k: real_sim(*a, n_mc=500, **k))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a one-core share: the parts run here, patched
    res = _reproduce.reproduce(True, tmp_path, False)
    titles = [t.title for t in res.tables]
    assert titles[0] == "Synthetic screen: held-out doubles" and len(titles) == 4
    methods = list(res.tables[0].rows)
    assert methods == [
        "PerturbedVAE", "PerturbedVAE α=0", "CPA-like", "additive", "ridge", "control mean",
    ]  # fmt: skip
    assert res.tables[0].rows["additive"]["RMSE"].se > 0  # two seeds -> a standard error
    assert len(res.checks) == 15
    assert res.checks["5 A exactly zero on and above the diagonal after training"]
    assert res.checks["5 closed-form KL = 1e5-sample Monte Carlo within 1%"]
    assert res.checks["5 read_screen parses GEARS- and Norman-style labels"]
    for fig in res.figures:
        assert fig.exists() and fig.suffix == ".png"
    assert {f.name for f in res.figures} >= {"delta_scatter.png", "background_r2.png"}
    assert "RMSE" in res.headline


def test_staged_parts_assemble_like_one_process_run(tmp_path, monkeypatch):
    pytest.importorskip("scanpy")
    pytest.importorskip("matplotlib")
    import json

    from perturbedvae import staged

    tiny = dataclasses.replace(
        _reproduce.QUICK, seeds=(0, 1), epochs=1, syn_cells=24, syn_controls=80,
        semi_cells=12, semi_controls=40, semi_epochs=1, pred_cells=30, semi_peers=True,
    )  # fmt: skip
    monkeypatch.setattr(staged, "QUICK", tiny)
    monkeypatch.setattr(_reproduce, "QUICK", tiny)
    real_sim = _reproduce.simulate_screen
    monkeypatch.setattr(_reproduce, "simulate_screen", lambda *a, **k: real_sim(*a, n_mc=500, **k))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a one-core share: the parts run here, patched
    for part in ("syn", "semi"):
        for seed in (0, 1):
            args = ["part", "--quick", "--no-progress", "--part", part, "--seed", str(seed)]
            assert staged.main([*args, "--out", str(tmp_path)]) == 0
    staged.main(["summary", "--quick", "--out", str(tmp_path)])
    res = json.loads((tmp_path / "result.json").read_text())
    one = _reproduce.reproduce(True, tmp_path / "one", False)
    assert res["checks"] == one.checks
    ours = one.tables[0].rows["PerturbedVAE"]["RMSE"].mean
    assert res["tables"][0]["rows"]["PerturbedVAE"]["RMSE"]["mean"] == pytest.approx(ours)
