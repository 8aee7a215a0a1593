"""Parameter-free online conformal prediction via universal portfolios (UP-OCP), with the online
baseline zoo behind one API.

:class:`OnlineConformal` is the estimator (``confidence_level``, ``run`` over whole streams or
``predict_interval`` / ``update`` one round at a time). Underneath, every method is an
``(init, update)`` pair in the optax style (:class:`OnlineAlgorithm`): :func:`up_ocp` and
:func:`up_grid` here, the peers in :mod:`up_ocp.baselines`; loaders in :mod:`up_ocp.data`. The
method is a reconstruction of Liu, Dobriban, Orabona, "Online Conformal Prediction via Universal
Portfolio Algorithms" (ICML 2026, arXiv:2602.03168).

Start with ``OnlineConformal("up", confidence_level=0.9).run(scores)`` on non-negative scores of
shape ``(n_streams, T)`` (time on the last axis; a DataFrame's index is read as time): it returns
the threshold announced before each score.
"""

import importlib as _importlib
import warnings as _warnings
from importlib.metadata import version as _version
from typing import Any as _Any

from . import baselines as baselines
from . import data as data
from ._estimator import METHODS as METHODS
from ._estimator import OnlineConformal as OnlineConformal
from ._estimator import make_algorithm as make_algorithm
from ._jax import run_up_jax as run_up_jax
from ._protocol import OnlineAlgorithm as OnlineAlgorithm
from ._protocol import run_algorithm as run_algorithm
from ._up import UPState as UPState
from ._up import coverage_bound as coverage_bound
from ._up import up_grid as up_grid
from ._up import up_ocp as up_ocp

__all__ = [
    "METHODS",
    "OnlineAlgorithm",
    "OnlineConformal",
    "UPState",
    "baselines",
    "coverage_bound",
    "data",
    "make_algorithm",
    "run_algorithm",
    "run_up_jax",
    "up_grid",
    "up_ocp",
]
__version__ = _version("up-ocp")

# Names that left the top level in 0.1.x: each still works for one release, with a warning.
_MOVED = {
    **{
        n: ("up_ocp.baselines", "up_ocp._baselines")
        for n in ("aci", "conformal_pid", "decaying_ogd", "dtaci", "kt_aci", "quantile_tracking")
    },
    "sf_ogd": ("up_ocp.baselines", "up_ocp._baselines"),
    "saocp": ("up_ocp.baselines", "up_ocp._saocp"),
    "forecast_residuals": ("up_ocp.data", "up_ocp._data"),
    "load_csv_series": ("up_ocp.data", "up_ocp._data"),
    "load_returns": ("up_ocp.data", "up_ocp._data"),
    "init": ("up_ocp.up_ocp(alpha, ...).init", "up_ocp._up"),
    "update": ("up_ocp.up_ocp(alpha, ...).update", "up_ocp._up"),
    "cover_fraction": ("nothing public (an internal maths helper)", "up_ocp._up"),
    "cover_log_wealth": ("nothing public (an internal maths helper)", "up_ocp._up"),
    "kl_bernoulli": ("nothing public (an internal maths helper)", "up_ocp._up"),
    "kt_fraction": ("nothing public (an internal maths helper)", "up_ocp._up"),
    "conformal_quantile": (
        "icml26_shared.conformal.split_quantile (scores in any order, a miscoverage in (0, 1))",
        "up_ocp._baselines",
    ),
}


def __getattr__(name: str) -> _Any:
    if name in _MOVED:
        home, module = _MOVED[name]
        where = home if " " in home or home.endswith((".init", ".update")) else f"{home}.{name}"
        _warnings.warn(
            f"up_ocp.{name} is deprecated and will be removed in up-ocp 0.2: use {where}",
            DeprecationWarning,
            stacklevel=2,
        )
        if name == "conformal_quantile":
            return _importlib.import_module(module)._level_quantile
        return getattr(_importlib.import_module(module), name)
    raise AttributeError(f"module 'up_ocp' has no attribute {name!r}")
