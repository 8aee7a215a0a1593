"""The reproduce pipeline end to end at toy sizes (the real quick run takes minutes)."""

from __future__ import annotations

import dataclasses

import pytest

from perturbedvae import _reproduce

TINY = dataclasses.replace(
    _reproduce.QUICK, seeds=(0, 1), epochs=2, syn_cells=24, syn_controls=80,
    semi_cells=12, semi_controls=40, semi_epochs=1, pred_cells=30, semi_peers=True, cpa=True,
)  # fmt: skip


def _tiny(monkeypatch):
    real_sim = _reproduce.simulate_screen
    monkeypatch.setattr(_reproduce, "simulate_screen", lambda *a, **k: real_sim(*a, n_mc=500, **k))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # a one-core share: the parts run here, patched


def test_reproduce_pipeline_at_toy_size(tmp_path, monkeypatch):
    pytest.importorskip("scanpy")
    pytest.importorskip("matplotlib")
    _tiny(monkeypatch)
    res = _reproduce.reproduce(TINY, tmp_path, False)
    titles = [t.title for t in res.tables]
    assert titles[0].startswith("Interacting held-out doubles") and len(titles) == 7
    head = res.tables[0]
    assert head.columns[:3] == ["syn RMSE", "syn RMSE top-20 DE", "syn Pearson Δ"]
    assert list(head.rows) == [
        "PerturbedVAE", "PerturbedVAE α=0", "no separation", "CPA-like", "additive", "ridge",
        "control mean",
    ]  # fmt: skip
    assert head.rows["additive"]["semi RMSE"].se > 0  # two seeds -> a standard error
    assert titles[1] == "Additive held-out doubles"
    assert len(res.checks) == 25
    assert sum(k.startswith("a ") for k in res.checks) == 6
    # every check that compares numbers records its value and bound (item 5's unit checks are
    # plain pass/fail)
    assert {c.label for c in res.details} == {k for k in res.checks if not k.startswith("5 ")}
    assert res.checks["5 A exactly zero on and above the diagonal after training"]
    assert res.checks["5 closed-form KL = 1e5-sample Monte Carlo within 1%"]
    for fig in res.figures:
        assert fig.exists() and fig.suffix == ".png"
    assert {f.name for f in res.figures} >= {"delta_scatter.png", "background_r2.png"}
    assert "interacting" in res.headline


def test_a_paused_run_resumes_to_the_one_process_result(tmp_path, monkeypatch):
    """``max_new_jobs`` stops after that many (benchmark, seed) parts (exit 3); running again
    resumes from the cache and gives the uninterrupted run's tables and checks."""
    pytest.importorskip("scanpy")
    pytest.importorskip("matplotlib")
    from icml26_shared.jobs import RunPaused

    _tiny(monkeypatch)
    chunked = dataclasses.replace(TINY, max_new_jobs=4)
    with pytest.raises(RunPaused) as paused:
        _reproduce.reproduce(chunked, tmp_path, False)
    assert paused.value.code == 3 and paused.value.remaining == 2
    res = _reproduce.reproduce(chunked, tmp_path, False)
    one = _reproduce.reproduce(TINY, tmp_path / "one", False)
    assert res.checks == one.checks
    ours = one.tables[0].rows["PerturbedVAE"]["syn RMSE"].mean
    assert res.tables[0].rows["PerturbedVAE"]["syn RMSE"].mean == pytest.approx(ours)


def test_validate_scores_singles_only(monkeypatch):
    _tiny(monkeypatch)
    seen = []
    real = _reproduce._score_doubles
    monkeypatch.setattr(_reproduce, "_score_doubles", lambda *a, **k: seen.append(1) or real(*a))
    rows = _reproduce.validate(TINY, "syn", 0, {"alpha": [0.0, 1.0]}, every=1)
    assert [(r["alpha"], r["epochs"]) for r in rows] == [(0.0, 1), (0.0, 2), (1.0, 1), (1.0, 2)]
    assert not seen  # the held-out doubles are never scored
    assert all(0 <= r["val probe from ẑ_ι"] <= 1 and r["val RMSE"] > 0 for r in rows)
