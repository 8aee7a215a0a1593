"""Real series and score streams: daily returns shipped inside PyPI packages, any CSV series.

Nothing here downloads. :func:`load_returns` reads series that the ``arch`` package ships
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
    "RETURN_SERIES",
    "forecast_residuals",
    "load_csv_series",
    "load_returns",
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
