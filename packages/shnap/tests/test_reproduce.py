import numpy as np
import pytest

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


def test_negative_cases_have_an_electrode_and_nodules():
    cases = rep._negative_cases(2, seed=2)
    assert all(len(c.electrode_masks) == 1 and c.nodules for c in cases)


@pytest.mark.slow
def test_quick_reproduce_runs_and_passes(tmp_path):
    result = rep.EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    assert result.tables and result.figures
    assert all(result.checks.values()), result.checks
