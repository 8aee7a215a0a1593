"""The pieces of ``reproduce`` and the benchmark harness at tiny sizes (the full quick run
takes ~1.5 min here, too long for the default test run)."""

import numpy as np
import pytest

import dxpp
from dxpp._bench import dense_case, simplex_case, single_thread, sparse_case
from dxpp._reproduce import EXPERIMENT, _portfolio_data, _table


def test_dense_case_rows_and_errors():
    with single_thread():
        rows = dense_case(20, 0, peers=())
    key = next(k for k in rows if k.startswith("dxpp penalty (auto"))
    assert rows[key].error <= 1e-6
    assert rows["full KKT LU (OptNet-style)"].error <= 1e-6
    assert all(r.backward > 0 for r in rows.values())
    table = _table("t", [rows, rows])
    assert key in table.rows and "grad rel. error" in table.columns


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


@pytest.mark.slow
def test_reproduce_quick_passes(tmp_path):
    result = EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    assert result.passed, result.checks
    assert (tmp_path / "dxpp_reproduce.png").exists()
