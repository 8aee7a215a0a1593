"""Side-by-side timing of dxpp and its peers (used by ``benchmarks/run.py`` and ``reproduce``).

Every case solves the same QP with each method, times the forward and the backward pass of
``L = gᵀx*`` for one fixed random ``g``, and reports the gradient's relative error against an
exact reference (the reduced active-set KKT solve on our forward solution; the closed form
for the simplex projection). Peers are optional: a missing one is reported, not fatal.
All timings run single-threaded (BLAS and torch), because the benchmark machine is shared.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from ._api import qp_vjp
from ._backward import _row_grad, _sym_outer_on
from ._problems import QP, random_dense_qp, simplex_projection_qp, simplex_projection_vjp
from ._reference import kkt_vjp
from ._solve import solve_qp
from ._types import Gradient, QPGrad, QPSolution

__all__ = ["Row", "dense_case", "simplex_case", "sparse_case"]

NAMES = ("Q", "q", "G", "h", "A", "b")


@dataclass
class Row:
    """One method on one problem: seconds and gradient error (``nan`` when not measured), and
    the label tables show for it (rows are keyed by a short stable id)."""

    forward: float = float("nan")
    backward: float = float("nan")
    error: float = float("nan")
    note: str = ""
    label: str = ""

    @property
    def total(self) -> float:
        return self.forward + self.backward


def _timed(fn: Callable[[], Any], repeat: int = 1) -> tuple[Any, float]:
    """Result and the best wall time over ``repeat`` calls."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best


REPEAT = 3  # backward passes are timed as the best of 3 (forward passes once)


def _grad(t: Any) -> NDArray:
    """A leaf tensor's gradient as numpy (it must have one)."""
    if t.grad is None:
        raise RuntimeError("the backward pass left a gradient unset")
    return t.grad.numpy()


def _dense(a: Any) -> NDArray:
    return a.toarray() if sp.issparse(a) else np.asarray(a, dtype=np.float64)


def grad_error(ours: QPGrad | list, ref: QPGrad, names: tuple[str, ...] = NAMES) -> float:
    """Max over the named parameters of ``‖ours − ref‖/‖ref‖`` (sparse: on ours' pattern)."""
    errs = []
    for name in names:
        i = NAMES.index(name)
        a, b = ours[i], ref[i]
        if a is None or b is None:
            continue
        a, b = _dense(a), _dense(b)
        if sp.issparse(ours[i]):
            b = np.where(_dense(ours[i]) != 0, b, 0.0)
        errs.append(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300))
    return float(max(errs))


# ---------------------------------------------------------------- dense random QPs
def _torch_peer(layer_fn: Callable[..., Any], qp: QP, g: NDArray) -> tuple[Row, list]:
    import torch

    args = [torch.tensor(a, requires_grad=True) for a in qp]
    x, tf = _timed(lambda: layer_fn(*args))
    loss = x.reshape(-1) @ torch.tensor(g)

    def backward() -> None:
        for a in args:
            a.grad = None
        loss.backward(retain_graph=True)

    _, tb = _timed(backward, REPEAT)
    return Row(tf, tb), [_grad(a) for a in args]


def _qpth(qp: QP, g: NDArray) -> tuple[Row, list]:
    from qpth.qp import QPFunction

    return _torch_peer(lambda *a: QPFunction(verbose=-1)(*a), qp, g)


def _proxsuite(qp: QP, g: NDArray) -> tuple[Row, list]:
    """ProxSuite's torch layer at its defaults; its ``(Q, p, A, b, G, l, u)`` order, with
    ``l = −1e20`` (no lower side), gradients mapped back to ``(Q, q, G, h, A, b)``."""
    import torch
    from proxsuite.torch.qplayer import QPFunction  # pyright: ignore[reportMissingImports]

    layer = QPFunction()

    def call(Q: Any, q: Any, G: Any, h: Any, A: Any, b: Any) -> Any:
        return layer(Q, q, A, b, G, torch.full_like(h, -1e20), h)[0]

    return _torch_peer(call, qp, g)


def _dqp(qp: QP, g: NDArray) -> tuple[Row, list]:
    import io
    from contextlib import redirect_stdout

    from dqp import dQP

    with redirect_stdout(io.StringIO()):
        layer = dQP.dQP_layer(
            settings=dQP.build_settings(
                qp_solver="piqp", lin_solver="scipy LU", eps_abs=1e-9, eps_rel=0
            )
        )
        return _torch_peer(lambda *a: layer(*a)[0], qp, g)


def _cvxpylayers(qp: QP, g: NDArray) -> tuple[Row, list]:
    import cvxpy as cp
    import torch
    from cvxpylayers.torch import CvxpyLayer  # pyright: ignore[reportPrivateImportUsage]

    n, m, p = qp.q.size, qp.h.size, qp.b.size
    x = cp.Variable(n)
    params = [cp.Parameter(s) for s in (n, (m, n), m, (p, n), p)]
    q, G, h, A, b = params
    prob = cp.Problem(
        cp.Minimize(0.5 * cp.quad_form(x, qp.Q, assume_PSD=True) + q @ x), [G @ x <= h, A @ x == b]
    )
    layer, tc = _timed(lambda: CvxpyLayer(prob, parameters=params, variables=[x]))
    args = [torch.tensor(a, requires_grad=True) for a in qp[1:]]
    (xs,), tf = _timed(lambda: layer(*args))
    loss = xs @ torch.tensor(g)

    def backward() -> None:
        for a in args:
            a.grad = None
        loss.backward(retain_graph=True)

    _, tb = _timed(backward, REPEAT)
    return Row(tf, tb, note=f"construction {tc:.2f} s; default diffcp (SCS, lsqr)"), [
        None,
        *(_grad(a) for a in args),
    ]


#: peers by id: (label, runner)
PEERS: dict[str, tuple[str, Callable[[QP, NDArray], tuple[Row, list]]]] = {
    "qpth": ("qpth (OptNet)", _qpth),
    "proxsuite": ("ProxSuite QPFunction", _proxsuite),
    "dqp": ("dQP (PIQP + LU)", _dqp),
    "cvxpylayers": ("cvxpylayers", _cvxpylayers),
}


def _torch_rows(qp: QP, sol: QPSolution, g: NDArray, tf: float, ref: QPGrad) -> dict[str, Row]:
    """dxpp's torch backward and the torch-computed full/reduced KKT LU on the same solution."""
    try:
        import torch

        from .baselines import torch_kkt_vjp
        from .torch import QPLayer
    except ImportError:
        return {}
    args = [torch.tensor(a, requires_grad=True) for a in qp]
    x, nu, mu = QPLayer(check_psd=False, return_duals=True)(*args)
    loss = x @ torch.tensor(g)

    def backward() -> None:
        for a in args:
            a.grad = None
        loss.backward(retain_graph=True)

    backward()
    _, tb = _timed(backward, REPEAT)
    grads = [_grad(a) for a in args]
    rows = {"dxpp_torch": Row(tf, tb, grad_error(grads, ref), label="dxpp.torch backward")}
    for kind in ("full", "reduced"):
        out, t = _timed(
            lambda k=kind: torch_kkt_vjp(*args, x, nu, mu, sol.active, g, kind=k), REPEAT
        )
        grads = [None if o is None else o.numpy() for o in out]
        rows[f"{kind}_kkt_torch"] = Row(
            tf, t, grad_error(grads, ref), label=f"{kind} KKT LU (torch)"
        )
    return rows


def dense_case(
    n: int,
    seed: int,
    *,
    peers: tuple[str, ...] = tuple(PEERS),
    cvxpylayers_max_n: int = 100,
    profile: dict[str, Any] | None = None,
) -> dict[str, Row]:
    """dQP's random dense QP of size ``n``: every method's times and gradient error."""
    qp = random_dense_qp(n, seed)
    g = np.random.default_rng(10_000 + seed).normal(size=n)
    rows: dict[str, Row] = {}
    sol, tf = _timed(lambda: solve_qp(*qp, solver="auto", check_psd=False))
    ref, t_red = _timed(lambda: kkt_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, g), REPEAT)
    prof: dict[str, Any] = {} if profile is None else profile
    ours, tb = _timed(lambda: qp_vjp(*qp, sol, g), REPEAT)
    qp_vjp(*qp, sol, g, profile=prof)  # one more call, profiled
    label = f"dxpp penalty (auto: {sol.solver})"
    rows["dxpp_penalty"] = Row(tf, tb, grad_error(ours, ref), label=label)
    ours0, tb0 = _timed(lambda: qp_vjp(*qp, sol, g, refine=0), REPEAT)
    label = "dxpp penalty, refine=0 (paper)"
    rows["dxpp_refine0"] = Row(tf, tb0, grad_error(ours0, ref), label=label)
    ex, te = _timed(lambda: qp_vjp(*qp, sol, g, mode="exact"), REPEAT)
    rows["dxpp_exact"] = Row(tf, te, grad_error(ex, ref), label="dxpp exact (reduced KKT)")
    full, tfull = _timed(
        lambda: kkt_vjp(*qp, sol.x, sol.nu, sol.mu, sol.active, g, kind="full"), REPEAT
    )
    label = "full KKT LU (OptNet-style)"
    rows["full_kkt"] = Row(tf, tfull, grad_error(full, ref), label=label)
    rows["reduced_kkt"] = Row(tf, t_red, 0.0, label="reduced KKT LU (reference)")
    rows.update(_torch_rows(qp, sol, g, tf, ref))
    for peer in peers:
        label, run = PEERS[peer]
        if peer == "cvxpylayers" and n > cvxpylayers_max_n:
            continue
        try:
            row, grads = run(qp, g)
        except ImportError as exc:
            rows[peer] = Row(note=f"not installed ({exc.name})", label=label)
            continue
        row.error = grad_error(grads, ref)
        row.label = label
        rows[peer] = row
    return rows


# ---------------------------------------------------------------- sparse problems
def _sparse_kkt_ldl(qp: QP, sol: QPSolution, g: NDArray) -> QPGrad[Gradient]:
    """Reduced KKT by sparse LDLᵀ (qdldl on the quasi-definite ``[Q Cᵀ; C −δI]``)."""
    import qdldl

    J = np.flatnonzero(sol.active)
    G = sp.csr_matrix(qp.G) if qp.G is not None else sp.csr_matrix((0, qp.q.size))
    A = sp.csr_matrix(qp.A) if qp.A is not None else sp.csr_matrix((0, qp.q.size))
    C = sp.vstack([G[J], A], format="csc")
    k, n = C.shape[0], qp.q.size
    K = sp.bmat([[sp.csc_matrix(qp.Q), C.T], [C, -1e-12 * sp.eye(k)]], format="csc")
    s = qdldl.Solver(sp.triu(K, format="csc"), upper=True).solve(np.concatenate([g, np.zeros(k)]))
    v, t = s[:n], s[n:]
    gh = np.zeros(G.shape[0])
    gh[J] = t[: J.size]
    return QPGrad(
        _sym_outer_on(sp.csc_matrix(qp.Q), v, sol.x),
        -v,
        _row_grad(sp.csc_matrix(G), J, sol.nu[J], t[: J.size], v, sol.x),
        gh,
        _row_grad(sp.csc_matrix(A), np.arange(A.shape[0]), sol.mu, t[J.size :], v, sol.x),
        t[J.size :],
    )


def sparse_case(qp: QP, seed: int = 0) -> dict[str, Row]:
    """A sparse QP: dxpp's penalty backward vs sparse reduced-KKT LDLᵀ and LU solves."""
    g = np.random.default_rng(20_000 + seed).normal(size=qp.q.size)
    sol, tf = _timed(lambda: solve_qp(*qp, solver="auto"))
    ref, t_lu = _timed(lambda: qp_vjp(*qp, sol, g, mode="exact"), REPEAT)
    ours, tb = _timed(lambda: qp_vjp(*qp, sol, g), REPEAT)
    ldl, t_ldl = _timed(lambda: _sparse_kkt_ldl(qp, sol, g), REPEAT)
    return {
        "dxpp_penalty": Row(
            tf, tb, grad_error(ours, ref), label=f"dxpp penalty (auto: {sol.solver})"
        ),
        "kkt_ldl": Row(tf, t_ldl, grad_error(ldl, ref), label="reduced KKT LDLᵀ (qdldl)"),
        "kkt_lu": Row(tf, t_lu, 0.0, label="reduced KKT LU (SuperLU, dxpp exact)"),
    }


def simplex_case(n: int, seed: int = 0) -> dict[str, Row]:
    """Projection onto the probability simplex: error vs the closed-form Jacobian."""
    rng = np.random.default_rng(30_000 + seed)
    y = rng.normal(size=n)
    g = rng.normal(size=n)
    qp = simplex_projection_qp(y)
    sol, tf = _timed(lambda: solve_qp(*qp, solver="auto"))
    ours, tb = _timed(lambda: qp_vjp(*qp, sol, g), REPEAT)
    closed = -simplex_projection_vjp(y, g)
    err = float(np.linalg.norm(ours.q - closed) / np.linalg.norm(closed))
    ex, te = _timed(lambda: qp_vjp(*qp, sol, g, mode="exact"))
    err_ex = float(np.linalg.norm(ex.q - closed) / np.linalg.norm(closed))
    return {
        "dxpp_penalty": Row(tf, tb, err, label=f"dxpp penalty (auto: {sol.solver})"),
        "dxpp_exact": Row(tf, te, err_ex, label="dxpp exact (reduced KKT, SuperLU)"),
    }
