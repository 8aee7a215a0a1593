import pytest

from icml26_shared.config import override
from icml26_shared.experiment import Experiment
from icml26_shared.jobs import RunPaused
from shnap import _reproduce as rep


def test_experiment_is_registered():
    assert rep.EXPERIMENT.package == "shnap"
    assert callable(rep.EXPERIMENT.reproduce)


def test_algebra_check_meets_item_1():
    alg = rep._algebra_check()
    assert alg["max_err"] < 1e-10 and alg["eff"] < 1e-10
    assert abs(alg["r2"] - 1) < 1e-10 and alg["r2_triple"] < 1


def test_oracle_recovery_with_an_exact_fill_is_perfect(lung_fill):
    cases = rep._oracle_cases(2, seed=1)
    out = rep._oracle_recovery(lung_fill, cases, 1, False, "")
    assert out["rmse"] < 1e-6 and out["r2"] > 1 - 1e-9 and out["violations"] == 0
    assert out["rho_main"] > 0.99


def test_oracle_recovery_ties_exact_zeros(lung_fill):
    """An exact removal recovers every term, so its Spearman is 1 on both; the true pairwise
    terms take two values and the non-interacting ones come out as float residues, which
    must tie instead of being ranked."""
    cases = rep._oracle_cases(8, seed=0)
    out = rep._oracle_recovery(lung_fill, cases, 1, False, "")
    assert 0 < out["interacting_share"] < 1
    assert out["rho_main"] == pytest.approx(1.0) and out["rho_pair"] == pytest.approx(1.0)


def test_negative_cases_have_an_electrode_and_nodules():
    cases = rep._negative_cases(2, seed=2)
    assert all(len(c.electrode_masks) == 1 and c.nodules for c in cases)


#: the spec items whose bars the quick run misses (measured: bridge AUC 0.906 and 82.6 %
#: nodule-free against <= 0.65 and >= 95 %; oracle rho main 0.622 against 0.9; the 2x2
#: depth-independent radial world); the README's "What does not work yet" says why
KNOWN_MISSES = ("3-auc", "3-nodule-free", "4-", "6b-")


@pytest.mark.slow
def test_quick_reproduce_runs_and_passes(tmp_path):
    """Every bar the quick run is known to meet is met; the known misses stay listed here
    (a bar that starts to pass fails this test until it leaves KNOWN_MISSES)."""
    result = rep.EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    assert result.tables and result.figures
    missed = [c for c in result.details if c.id.startswith(KNOWN_MISSES)]
    met = [c for c in result.details if not c.id.startswith(KNOWN_MISSES)]
    assert all(c.passed for c in met), [c for c in met if not c.passed]
    plain = {k: v for k, v in result.checks.items() if k not in {c.label for c in result.details}}
    assert all(plain.values()), plain
    assert missed and not all(c.passed for c in missed), missed


def _tiny(monkeypatch, lung_fill, **more):
    """Tiny sizes, an exact test editor and a stand-in realism study."""
    tiny = override(
        rep.QUICK,
        {
            "cnn_cases": 16,
            "cnn_epochs": 1,
            **dict.fromkeys(("oracle_cases", "oracle_cases_costly"), 2),
            **dict.fromkeys(("shortcut_cases", "shortcut_cases_costly"), 2),
            **dict.fromkeys(("snap_cases", "snap_cases_costly"), 2),
            **dict.fromkeys(("snap_points", "snap_points_costly"), 5),
            "realism_crops": 10,
            "ablation_cases": 16,
            "ablation_epochs": 1,
            "ablation_seeds": 1,
            "heldout_cases": 40,
            **more,
        },
    )
    monkeypatch.setattr(rep, "_editors", lambda config, progress: ({"lung-fill": lung_fill}, []))
    monkeypatch.setattr(
        rep,
        "_realism",
        lambda editors, n, model: {name: {"auc": 0.5, "nodule_free": 1.0} for name in editors},
    )
    return tiny


def test_reproduce_pipeline_on_tiny_sizes(tmp_path, monkeypatch, lung_fill):
    """The whole reproduce path (tables, checks, figures) with an exact test editor, tiny
    CNNs and few cases: wiring only, the figures are not the acceptance run."""
    pytest.importorskip("matplotlib")
    tiny = _tiny(monkeypatch, lung_fill)
    experiment = Experiment("shnap", "tiny", rep.reproduce, tiny, rep.FULL)
    result = experiment.run(quick=True, out_dir=tmp_path, progress=False)
    names = [t.title for t in result.tables]
    assert any("per editor" in n for n in names) and any("radial" in n for n in names)
    assert "lung-fill" in result.tables[1].rows
    assert result.checks["2 locality: no voxel outside a mask changed (all editors, all edits)"]
    assert {c.id for c in result.details} >= {"1-phi", "1-efficiency", "1-r2", "2-locality"}
    assert result.tables[0].label("cnn-zeros") == "cnn-zeros (flawed data)"
    assert result.config["cnn_cases"] == 16
    assert all(f.is_file() for f in result.figures) and len(result.figures) == 2
    assert (tmp_path / "result.json").is_file()
    assert len(list((tmp_path / "cache").glob("*.pkl"))) == 2  # the editor's audits, realism


def _cells(result):
    timing = ("seconds", "s / SHNAP case")
    return {
        (t.title, r, c): v
        for t in result.tables
        for r, row in t.rows.items()
        for c, v in row.items()
        if c not in timing
    }


def test_a_paused_run_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, lung_fill):
    pytest.importorskip("matplotlib")
    tiny = _tiny(monkeypatch, lung_fill)
    whole = rep.reproduce(tiny, tmp_path / "whole", False)
    paused = override(tiny, {"max_new_jobs": 1})
    with pytest.raises(RunPaused):
        rep.reproduce(paused, tmp_path / "parts", False)
    resumed = rep.reproduce(paused, tmp_path / "parts", False)
    assert _cells(resumed) == _cells(whole)
    assert resumed.checks == whole.checks


def test_counts_give_the_peer_its_own_sizes_and_the_fills_the_cheap_ones():
    full = rep.FULL
    bridge, repaint, zero = (full.counts(e) for e in ("bridge", "repaint", "zero"))
    assert bridge == {"oracle": 50, "shortcut": 20, "snap": 20, "points": 40, "realism": 500}
    assert repaint == {**bridge, "oracle": 30, "snap": 8, "realism": 250}
    assert zero["oracle"] == full.oracle_cases and zero["snap"] == full.snap_cases
    assert rep.QUICK.counts("repaint") == rep.QUICK.counts("bridge")  # no peer sizes in quick


def test_config_fields_are_named_and_checked():
    cfg = override(rep.QUICK, ["snap_cases=5", "insert_steps=none", "threads=1"])
    assert cfg.snap_cases == 5 and cfg.insert_steps is None and cfg.threads == 1
    with pytest.raises(ValueError, match="unknown config key"):
        override(rep.QUICK, ["snap_casez=5"])
    with pytest.raises(ValueError, match="threads must be >= 1"):
        override(rep.QUICK, ["threads=0"])
    assert not rep.QUICK.repaint and rep.FULL.repaint
    assert rep.EXPERIMENT.config(quick=True) is rep.QUICK
