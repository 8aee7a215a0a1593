"""Parameter-free online conformal prediction via universal portfolios (UP-OCP), with the online
baseline zoo behind one API.

Functional core (optax style): ``state = init(alpha); q, state = update(state, score)``; every
method is also an ``(init, update)`` pair (:class:`OnlineAlgorithm`) and sits behind
:class:`OnlineConformal`. The method is a reconstruction of Liu, Dobriban, Orabona, "Online
Conformal Prediction via Universal Portfolio Algorithms" (ICML 2026, arXiv:2602.03168).
"""

from ._api import METHODS as METHODS
from ._api import OnlineConformal as OnlineConformal
from ._api import make_algorithm as make_algorithm
from ._baselines import aci as aci
from ._baselines import conformal_pid as conformal_pid
from ._baselines import conformal_quantile as conformal_quantile
from ._baselines import decaying_ogd as decaying_ogd
from ._baselines import dtaci as dtaci
from ._baselines import kt_aci as kt_aci
from ._baselines import quantile_tracking as quantile_tracking
from ._baselines import sf_ogd as sf_ogd
from ._core import OnlineAlgorithm as OnlineAlgorithm
from ._core import run_algorithm as run_algorithm
from ._data import forecast_residuals as forecast_residuals
from ._data import load_csv_series as load_csv_series
from ._data import load_returns as load_returns
from ._jax import run_up_jax as run_up_jax
from ._saocp import saocp as saocp
from ._up import UPState as UPState
from ._up import cover_fraction as cover_fraction
from ._up import cover_log_wealth as cover_log_wealth
from ._up import coverage_bound as coverage_bound
from ._up import init as init
from ._up import kl_bernoulli as kl_bernoulli
from ._up import kt_fraction as kt_fraction
from ._up import up_grid as up_grid
from ._up import up_ocp as up_ocp
from ._up import update as update

__all__ = [
    "METHODS",
    "OnlineAlgorithm",
    "OnlineConformal",
    "UPState",
    "aci",
    "conformal_pid",
    "conformal_quantile",
    "cover_fraction",
    "cover_log_wealth",
    "coverage_bound",
    "decaying_ogd",
    "dtaci",
    "forecast_residuals",
    "init",
    "kl_bernoulli",
    "kt_aci",
    "kt_fraction",
    "load_csv_series",
    "load_returns",
    "make_algorithm",
    "quantile_tracking",
    "run_algorithm",
    "run_up_jax",
    "saocp",
    "sf_ogd",
    "up_grid",
    "up_ocp",
    "update",
]
__version__ = "0.1.0"
