"""The online conformal baselines UP-OCP is compared with, each an ``(init, update)`` pair.

Every factory takes the miscoverage ``alpha`` and returns an
:class:`~up_ocp.OnlineAlgorithm`; all are also reachable by name through
:class:`~up_ocp.OnlineConformal` (see :data:`~up_ocp.METHODS`).
"""

from ._baselines import DEFAULT_DTACI_GAMMAS as DEFAULT_DTACI_GAMMAS
from ._baselines import aci as aci
from ._baselines import conformal_pid as conformal_pid
from ._baselines import decaying_ogd as decaying_ogd
from ._baselines import dtaci as dtaci
from ._baselines import kt_aci as kt_aci
from ._baselines import quantile_tracking as quantile_tracking
from ._baselines import sf_ogd as sf_ogd
from ._saocp import saocp as saocp

__all__ = [
    "DEFAULT_DTACI_GAMMAS",
    "aci",
    "conformal_pid",
    "decaying_ogd",
    "dtaci",
    "kt_aci",
    "quantile_tracking",
    "saocp",
    "sf_ogd",
]
