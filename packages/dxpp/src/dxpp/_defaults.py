"""dxpp's default options, defined once: every public signature refers to these names.

``MODE = "auto"`` picks the backward per call where the active set is known when it runs
(``dxpp.torch``: the reduced KKT solve with active bounds eliminated when it is cheaper than
the penalty solve, see :func:`dxpp._torch_backward.prefer_reduced`); the numpy core and the
JAX backward (traced once under ``jit``, before any active set exists) read it as
``"penalty"``.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["ACTIVE_TOL", "BETA", "MODE", "MODES", "REFINE", "SOLVER", "C", "Mode"]

Mode = Literal["auto", "penalty", "exact"]
MODES: Final = ("auto", "penalty", "exact")
SOLVER: Final = "auto"
MODE: Final[Mode] = "auto"
#: penalty width β (also sets the forward tolerance ``1e-5·β``)
BETA: Final = 1e-4
#: penalty factor: the penalty is ``c/β`` times stiffer than ``‖Q‖``
C: Final = 10.0
#: at most this many multiplier-refinement steps (0 = the paper's pure penalty adjoint)
REFINE: Final = 10
#: relative slack threshold of the active set
ACTIVE_TOL: Final = 1e-7
