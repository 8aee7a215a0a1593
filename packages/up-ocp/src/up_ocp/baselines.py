"""The online conformal baselines UP-OCP is compared with, each an ``(init, update)`` pair.

Every factory takes the miscoverage ``alpha`` and returns an
:class:`~up_ocp.OnlineAlgorithm`; all are also reachable by name through
:class:`~up_ocp.OnlineConformal` (see :data:`~up_ocp.METHODS`). Salesforce ``online-conformal``'s
FACI, SAOCP and SF-OGD run on the same score streams through :func:`online_conformal_thresholds`
(optional; it needs that package); :func:`compare_methods` puts ours and theirs side by side on
one stream, with standard errors.
"""

from ._baselines import DEFAULT_DTACI_GAMMAS as DEFAULT_DTACI_GAMMAS
from ._baselines import aci as aci
from ._baselines import conformal_pid as conformal_pid
from ._baselines import decaying_ogd as decaying_ogd
from ._baselines import dtaci as dtaci
from ._baselines import kt_aci as kt_aci
from ._baselines import quantile_tracking as quantile_tracking
from ._baselines import sf_ogd as sf_ogd
from ._compare import compare_methods as compare_methods
from ._compare import interval_summary as interval_summary
from ._compare import online_conformal_available as online_conformal_available
from ._peers import ONLINE_CONFORMAL_METHODS as ONLINE_CONFORMAL_METHODS
from ._peers import online_conformal_thresholds as online_conformal_thresholds
from ._saocp import saocp as saocp

__all__ = [
    "DEFAULT_DTACI_GAMMAS",
    "ONLINE_CONFORMAL_METHODS",
    "aci",
    "compare_methods",
    "conformal_pid",
    "decaying_ogd",
    "dtaci",
    "interval_summary",
    "kt_aci",
    "online_conformal_available",
    "online_conformal_thresholds",
    "quantile_tracking",
    "saocp",
    "sf_ogd",
]
