"""The DLPT benchmark simulator: ``simulate_rct(n, ...)`` with ``.true_value(policy)``.

See :mod:`dlpt._data` for the generator.
"""

from ._data import RCTData as RCTData
from ._data import covariate_probs as covariate_probs
from ._data import simulate_rct as simulate_rct

__all__ = ["RCTData", "covariate_probs", "simulate_rct"]
