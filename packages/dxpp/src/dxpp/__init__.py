"""dxpp — differentiable convex QP layers by a smooth-penalty backward, with any QP solver.

``solve_qp`` solves ``min ½xᵀQx + qᵀx s.t. Gx ≤ h, Ax = b`` with any ``qpsolvers`` backend;
``qp_vjp`` differentiates the solution by dXPP's penalty adjoint (one n×n SPD solve) or the
exact reduced KKT system; ``dxpp.torch.QPLayer`` and ``dxpp.jax.qp_solve`` wrap both for
autograd, with the qpth drop-in ``dxpp.torch.QPFunction`` (import them explicitly: they need
the ``torch``/``jax`` extras); ``dxpp.baselines`` holds the exact KKT adjoints (numpy, torch,
sparse LDLᵀ) the benchmarks compare against.

Start with :func:`solve_qp` and :func:`qp_vjp` (numpy), or ``dxpp.torch.QPLayer()`` as a layer in
a torch model.

References:
    Linghu, Liu, Deng. "A Penalty Approach for Differentiation Through Black-Box Quadratic
    Programming Solvers" (dXPP), ICML 2026, arXiv 2602.14154.
"""

import importlib.metadata

from ._api import qp_vjp as qp_vjp
from ._backward import penalty_weights as penalty_weights
from ._problems import QP as QP
from ._problems import chain_projection_qp as chain_projection_qp
from ._problems import multiperiod_portfolio_qp as multiperiod_portfolio_qp
from ._problems import portfolio_qp as portfolio_qp
from ._problems import random_dense_qp as random_dense_qp
from ._problems import random_sparse_qp as random_sparse_qp
from ._problems import simplex_projection_qp as simplex_projection_qp
from ._problems import simplex_projection_vjp as simplex_projection_vjp
from ._reference import kkt_vjp as kkt_vjp
from ._solve import auto_solver as auto_solver
from ._solve import solve_qp as solve_qp
from ._types import QPGrad as QPGrad
from ._types import QPSolution as QPSolution
from ._validate import QPError as QPError

__all__ = [
    "QP",
    "QPError",
    "QPGrad",
    "QPSolution",
    "auto_solver",
    "chain_projection_qp",
    "kkt_vjp",
    "multiperiod_portfolio_qp",
    "penalty_weights",
    "portfolio_qp",
    "qp_vjp",
    "random_dense_qp",
    "random_sparse_qp",
    "simplex_projection_qp",
    "simplex_projection_vjp",
    "solve_qp",
]
__version__ = importlib.metadata.version("dxpp")
