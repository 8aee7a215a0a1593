"""The pieces of ``reproduce`` and the benchmark harness at tiny sizes (the full quick run
takes ~1.5 min here, too long for the default test run)."""

import numpy as np
import pytest

import dxpp
from dxpp._bench import dense_case, simplex_case, sparse_case
from dxpp._reproduce import EXPERIMENT, FULL, QUICK, _portfolio_data, _table
from icml26_shared.config import override
from icml26_shared.threads import single_thread


def test_dense_case_rows_and_errors():
    with single_thread():
        rows = dense_case(20, 0, peers=())
    assert rows["dxpp_penalty"].error <= 1e-6
    assert rows["dxpp_penalty"].label.startswith("dxpp penalty (auto")
    assert rows["full_kkt"].error <= 1e-6
    assert all(r.backward > 0 for r in rows.values())
    table = _table("t", [rows, rows])
    assert "dxpp_penalty" in table.rows and "grad rel. error" in table.columns
    assert table.label("full_kkt") == "full KKT LU (OptNet-style)"


def test_sparse_and_simplex_cases():
    rows = sparse_case(dxpp.random_sparse_qp(300, seed=0))
    assert next(iter(rows.values())).error <= 1e-6
    rows = simplex_case(500)
    assert next(iter(rows.values())).error <= 1e-6


def test_portfolio_data_and_experiment():
    data = _portfolio_data(np.random.default_rng(0), 50, 4, 3)
    assert data["r"].shape == (50, 4) and data["f"].shape == (50, 3)
    assert np.all(np.linalg.eigvalsh(data["cov"]) > 0)
    assert EXPERIMENT.package == "dxpp"


def test_config_presets_and_overrides():
    assert EXPERIMENT.config(quick=True) == QUICK and EXPERIMENT.config() == FULL
    assert override(QUICK, ["sizes=20,30", "portfolio_steps=5"]).sizes == (20, 30)
    with pytest.raises(ValueError, match="unknown config key"):
        override(QUICK, ["size=20"])
    with pytest.raises(ValueError, match="portfolio_batch"):
        override(QUICK, ["portfolio_batch=0"])


@pytest.mark.slow
def test_reproduce_quick_passes(tmp_path):
    result = EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    assert result.passed, result.checks
    assert (tmp_path / "dxpp_reproduce.png").exists()
