"""PyTorch adapter (``pip install dxpp[torch]``): :class:`QPLayer`, :func:`qp_solve` and the
qpth drop-in :class:`QPFunction`.

The forward pass calls the chosen ``qpsolvers`` backend on CPU numpy copies. The dense
backward is formed and factored with ``torch.linalg`` (:mod:`dxpp._torch_backward`): batched,
on the tensors' device, inside torch's own thread pool (the caller's thread setting governs
it; one small unbatched CPU problem is assembled in numpy, see :func:`dxpp._torch_backward.small_vjp`). Sparse inputs (``torch.sparse_coo``/``csr``/``csc``) use
the numpy/scipy sparse core (qdldl) and get gradients on their sparsity pattern. Integer
inputs are promoted to float64; float32 in → float32 out (computed in float64).

References:
    Linghu, Liu, Deng. "A Penalty Approach for Differentiation Through Black-Box Quadratic
    Programming Solvers" (dXPP), ICML 2026, arXiv 2602.14154.
    Amos, Kolter. "OptNet: Differentiable Optimization as a Layer in Neural Networks",
    ICML 2017 (qpth's conventions, followed by :class:`QPFunction`).
"""

from __future__ import annotations

import functools
from enum import Enum
from typing import Any, TypedDict, Unpack

try:
    import torch
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "dxpp.torch needs PyTorch: install it with `pip install dxpp[torch]`"
    ) from exc

import numpy as np
import scipy.sparse as sp

from icml26_shared.checks import check_choice

from ._api import LayerOptions, to_input_shapes
from ._defaults import ACTIVE_TOL, BETA, MODE, REFINE, SOLVER, C, Mode
from ._solve import import_qpsolvers
from ._torch_backward import small_vjp, torch_vjp
from ._validate import canonicalize, psd_shift

__all__ = ["QPFunction", "QPLayer", "qp_solve"]

# qpsolvers is imported here, not at the first forward call: every layer needs it, and its
# one-off import (≈0.15 s with cached bytecode) then does not land in the first training step.
import_qpsolvers()

_NAMES = ("Q", "q", "G", "h", "A", "b")
_BASE_NDIM = (2, 1, 2, 1, 2, 1)
_IPM_BACKENDS = ("piqp", "clarabel", "cvxopt")


def _check_tensor(t: Any, name: str) -> None:
    if t is None or not isinstance(t, torch.Tensor):
        return
    if t.is_complex():
        raise TypeError(f"{name} must be real-valued, got dtype {t.dtype}")
    if t.dtype == torch.bool:
        raise TypeError(f"{name} must be a numeric tensor, got dtype torch.bool")


def _out_dtype(tensors: tuple[Any, ...]) -> torch.dtype:
    """float32 only when every floating input is float32 (numpy's rule); else float64."""
    floats = [t.dtype for t in tensors if isinstance(t, torch.Tensor) and t.is_floating_point()]
    return torch.float32 if floats and all(d == torch.float32 for d in floats) else torch.float64


def _to_numpy(t: Any) -> Any:
    if t is None or not isinstance(t, torch.Tensor):
        return t
    if t.layout != torch.strided:
        coo = t.detach().cpu().to_sparse_coo().coalesce()
        idx = coo.indices().numpy()
        vals = coo.values().to(torch.float64).numpy()
        return sp.csc_matrix((vals, (idx[0], idx[1])), shape=tuple(coo.shape))
    return t.detach().to("cpu", torch.float64).numpy()


def _to_torch(a: Any, like: torch.Tensor) -> torch.Tensor | None:
    """A numpy/scipy gradient as a tensor with ``like``'s dtype, device and layout."""
    if a is None:
        return None
    if sp.issparse(a):
        coo = a.tocoo()
        idx = torch.from_numpy(np.vstack([coo.row, coo.col]).astype(np.int64))
        out = torch.sparse_coo_tensor(idx, torch.from_numpy(coo.data), tuple(a.shape))
        out = out.to(dtype=like.dtype, device=like.device).coalesce()
        if like.layout == torch.sparse_csr:
            return out.to_sparse_csr()
        if like.layout == torch.sparse_csc:
            return out.to_sparse_csc()
        return out
    return torch.from_numpy(np.ascontiguousarray(a)).to(dtype=like.dtype, device=like.device)


def _batched(t: Any, base: int, B: int, rows: int, n: int, device: torch.device) -> Any:
    """float64 view with a leading batch axis of size ``B`` (zeros ``(B, rows, n)`` if absent)."""
    if t is None:
        shape = (B, 0, n) if base == 2 else (B, 0)
        return torch.zeros(shape, dtype=torch.float64, device=device)
    t = t.detach().to(torch.float64)
    t = t if t.ndim == base + 1 else t.unsqueeze(0)
    return t.expand(B, *t.shape[1:])


def _fit(g: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """A gradient in its input's shape: a batch-summed ``(n, n)`` gradient of a ``(1, n, n)``
    input (a batch axis of size 1, or one ``expand``-ed from it) is reshaped, a per-problem
    gradient of a broadcast input summed."""
    if g.shape == shape:
        return g
    if g.numel() == shape.numel():
        return g.reshape(shape)
    return g.sum_to_size(shape)


def _check_psd(Q: torch.Tensor) -> None:
    """One batched Cholesky of ``Q + shift·I`` in torch; raises if ``Q`` is not PSD."""
    rel_shift = psd_shift(np.float32 if Q.dtype == torch.float32 else np.float64)
    Q = Q.detach().to(torch.float64)
    mats = Q if Q.ndim == 3 else Q.unsqueeze(0)
    if mats.shape[0] == 0 or mats.shape[-1] == 0:
        return
    diag = torch.diagonal(mats, dim1=-2, dim2=-1)
    n = mats.shape[-1]
    shift = rel_shift * diag.abs().amax(-1).clamp(min=1e-300) * n
    sym = 0.5 * (mats + mats.mT)
    eye = torch.eye(n, dtype=mats.dtype, device=mats.device)
    _, info = torch.linalg.cholesky_ex(sym + shift[:, None, None] * eye)
    if bool((info != 0).any()):
        k = int((info != 0).nonzero()[0, 0])
        lam = float(torch.linalg.eigvalsh(sym[k])[0])
        where = f" (batch {k})" if mats.shape[0] > 1 else ""
        raise ValueError(
            f"Q must be positive semi-definite, got smallest eigenvalue {lam:.3g}{where}"
        )


SECOND_ORDER_MESSAGE = (
    "dxpp's QP layer has first derivatives only: a second derivative "
    "(torch.autograd.functional.hessian, backward(create_graph=True) followed by another "
    "backward, hvp) would miss how the solution moves with the problem and come out wrong, so "
    "it is refused. Differentiate once, or use finite differences of the gradient"
)


def _first_order_only(backward: Any) -> Any:
    """Like ``once_differentiable``, but a backward asked to build a graph for a second
    derivative (``create_graph=True``, which ``functional.hessian`` uses) raises at once instead
    of handing back gradients that a second pass would read as zeros."""

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        if torch.is_grad_enabled():
            raise RuntimeError(SECOND_ORDER_MESSAGE)
        return backward(ctx, *grads)

    return wrapper


class _QPFunction(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx: Any, opts: LayerOptions, Q: Any, q: Any, G: Any, h: Any, A: Any, b: Any
    ) -> Any:
        tensors = (Q, q, G, h, A, b)
        for t, name in zip(tensors, _NAMES):
            _check_tensor(t, name)
        dtype = _out_dtype(tensors)
        sparse = any(isinstance(t, torch.Tensor) and t.layout != torch.strided for t in tensors)
        # Q's PSD check runs in torch below; canonicalize only warns when it is switched off
        # one small problem: the numpy Cholesky in canonicalize is cheaper than torch's
        numpy_psd = opts.check_psd and not sparse and Q.ndim == 2 and Q.shape[-1] <= 128
        data = canonicalize(
            *(_to_numpy(t) for t in tensors),
            check_psd=numpy_psd,
            warn_psd=not opts.check_psd,
            q_dtype=np.float32
            if Q.dtype in (torch.float32, torch.float16, torch.bfloat16)
            else None,
        )
        if opts.check_psd and not sparse and not numpy_psd:
            _check_psd(Q)
        sol = opts.solve(data)
        device = q.device
        ctx.opts, ctx.data, ctx.sparse, ctx.sol = opts, data, sparse, sol
        ctx.save_for_backward(*(t if isinstance(t, torch.Tensor) else None for t in tensors))

        def out(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(a if data.batched else a[0]).to(dtype=dtype, device=device)

        x, nu, mu = out(sol.x), out(sol.nu), out(sol.mu)
        ctx.mark_non_differentiable(nu, mu)
        return x, nu, mu

    @staticmethod
    @_first_order_only
    def backward(ctx: Any, grad_x: Any, _gnu: Any, _gmu: Any) -> Any:
        if not bool(torch.isfinite(grad_x).all()):
            raise ValueError(
                "the upstream gradient dL/dx* reaching the QP layer must be finite, got "
                f"{int(torch.isnan(grad_x).sum())} NaN and {int(torch.isinf(grad_x).sum())} inf "
                "entries (the loss after the layer produced them): the QP gradients would all "
                "be NaN"
            )
        data, sol, opts = ctx.data, ctx.sol, ctx.opts
        inputs = ctx.saved_tensors
        needs = ctx.needs_input_grad[1:]
        if ctx.sparse:
            g = grad_x.detach().to("cpu", torch.float64).numpy()
            grad = opts.vjp(data, sol, g if data.batched else g[None])
            shapes = {
                "q": tuple(inputs[1].shape),
                "h": None if inputs[3] is None else tuple(inputs[3].shape),
                "b": None if inputs[5] is None else tuple(inputs[5].shape),
            }
            grad = to_input_shapes(grad, shapes, np.dtype(np.float64))
            return (
                None,
                *(
                    _to_torch(gk, t) if need and t is not None else None
                    for need, gk, t in zip(needs, grad, inputs)
                ),
            )
        B, n, m, p = data.batch, data.n, data.m, data.p
        device = grad_x.device
        if B == 1 and device.type == "cpu" and opts.mode == "auto":
            Q0, _, G0, _, A0, _ = data.item(0)
            g0 = grad_x.detach().to(torch.float64).reshape(n).numpy()
            fast = small_vjp(
                Q0, G0, A0, sol.x[0], sol.nu[0], sol.mu[0], sol.active[0], g0, needs[::2]
            )
            if fast is not None:
                return (
                    None,
                    *(
                        torch.from_numpy(gk).reshape(t.shape).to(t.dtype)
                        if need and t is not None and gk is not None
                        else None
                        for need, gk, t in zip(needs, fast, inputs)
                    ),
                )
        shared = [t is None or t.ndim == 2 or t.shape[0] == 1 for t in inputs[::2]]
        args = [
            _batched(t, base, B, rows, n, device)
            for t, base, rows in zip(inputs, _BASE_NDIM, (n, n, m, m, p, p))
        ]
        Qb, _, Gb, hb, Ab, bb = args

        def dev(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(a).to(device)

        grads = torch_vjp(
            Qb,
            Gb,
            hb,
            Ab,
            bb,
            dev(sol.x),
            dev(sol.nu),
            dev(sol.mu),
            dev(sol.active),
            grad_x.detach().to(torch.float64).reshape(B, n),
            mode=opts.mode,
            beta=opts.beta,
            c=opts.c,
            refine=opts.refine,
            shared=(shared[0], shared[1], shared[2]),
            needs=(needs[0], needs[2], needs[4]),
            q_norm=None if data.q_norms is None else dev(data.q_norms),
        )
        outs: list[Any] = [None]
        for need, gk, t in zip(needs, grads, inputs):
            if need and t is not None and gk is not None:
                outs.append(_fit(gk, t.shape).to(t.dtype))
            else:
                outs.append(None)
        return tuple(outs)


def _apply(opts: LayerOptions, Q: Any, q: Any, G: Any, h: Any, A: Any, b: Any) -> Any:
    for name, t in zip(_NAMES, (Q, q, G, h, A, b)):
        if t is not None and not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor or None, got {type(t).__name__}")
    if Q is None or q is None:
        raise ValueError(f"Q and q must be given, got Q={type(Q).__name__}, q={type(q).__name__}")
    return _QPFunction.apply(opts, Q, q, G, h, A, b)


def qp_solve(
    Q: torch.Tensor,
    q: torch.Tensor,
    G: torch.Tensor | None = None,
    h: torch.Tensor | None = None,
    A: torch.Tensor | None = None,
    b: torch.Tensor | None = None,
    *,
    solver: str = SOLVER,
    mode: Mode = MODE,
    beta: float = BETA,
    c: float = C,
    refine: int = REFINE,
    tol: float | None = None,
    active_tol: float = ACTIVE_TOL,
    check_psd: bool = True,
    solver_kwargs: dict[str, object] | None = None,
) -> torch.Tensor:
    """Differentiable ``x*`` of ``min ½xᵀQx + qᵀx s.t. Gx ≤ h, Ax = b`` (functional form of
    :class:`QPLayer`, the same name and options as :func:`dxpp.jax.qp_solve`).

    Example:
        >>> import torch
        >>> from dxpp.torch import qp_solve
        >>> q = torch.tensor([-1.0, -1.0], dtype=torch.float64, requires_grad=True)
        >>> x = qp_solve(torch.eye(2, dtype=torch.float64), q,
        ...              torch.ones(1, 2, dtype=torch.float64), torch.ones(1, dtype=torch.float64))
        >>> x[0].backward()  # x₀ = (1 − q₀ + q₁)/2 on the active constraint x₀ + x₁ ≤ 1
        >>> x.detach().numpy().round(6), q.grad.numpy().round(6)
        (array([0.5, 0.5]), array([-0.5,  0.5]))
    """
    opts = LayerOptions.check(
        solver=solver,
        mode=mode,
        beta=beta,
        c=c,
        refine=refine,
        tol=tol,
        active_tol=active_tol,
        check_psd=check_psd,
        solver_kwargs=solver_kwargs,
    )
    return _apply(opts, Q, q, G, h, A, b)[0]


class QPLayer(torch.nn.Module):
    """Differentiable solution map ``(Q, q, G, h, A, b) ↦ x*`` of
    ``min ½xᵀQx + qᵀx s.t. Gx ≤ h, Ax = b``.

    Any input may carry a leading batch axis; the gradient of an input without one is summed
    over the batch (torch's broadcasting rule).

    Args:
        solver: ``"auto"`` or any ``qpsolvers`` backend name.
        mode: ``"penalty"`` (dXPP's one SPD solve) or ``"exact"`` (reduced KKT).
        beta: penalty width β (also sets the solver tolerance ``1e-5·β``).
        c: penalty factor; the penalty is ``c/β`` times stiffer than ``‖Q‖``.
        refine: at most this many multiplier-refinement steps in the backward pass (0 = the
            paper's pure penalty adjoint).
        tol: solver tolerance override (looser than ``1e-3·β`` is tightened with a warning).
        active_tol: relative slack threshold of the active set.
        return_duals: also return ``(ν*, μ*)`` (not differentiable).
        check_psd: check dense ``Q`` for positive semi-definiteness in every call (one batched
            Cholesky); ``False`` only warns on negative diagonal entries.
        solver_kwargs: extra backend options.

    Example:
        >>> import torch
        >>> from dxpp.torch import QPLayer
        >>> Q = torch.eye(2, dtype=torch.float64)
        >>> q = torch.tensor([-1.0, -1.0], dtype=torch.float64, requires_grad=True)
        >>> x = QPLayer()(Q, q, torch.ones(1, 2, dtype=torch.float64),
        ...               torch.ones(1, dtype=torch.float64))
        >>> x.detach().numpy().round(6)
        array([0.5, 0.5])
    """

    def __init__(
        self,
        *,
        solver: str = SOLVER,
        mode: Mode = MODE,
        beta: float = BETA,
        c: float = C,
        refine: int = REFINE,
        tol: float | None = None,
        active_tol: float = ACTIVE_TOL,
        return_duals: bool = False,
        check_psd: bool = True,
        solver_kwargs: dict[str, object] | None = None,
    ) -> None:
        super().__init__()
        self.opts = LayerOptions.check(
            solver=solver,
            mode=mode,
            beta=beta,
            c=c,
            refine=refine,
            tol=tol,
            active_tol=active_tol,
            check_psd=check_psd,
            solver_kwargs=solver_kwargs,
        )
        self.return_duals = bool(return_duals)

    def forward(
        self,
        Q: torch.Tensor,
        q: torch.Tensor,
        G: torch.Tensor | None = None,
        h: torch.Tensor | None = None,
        A: torch.Tensor | None = None,
        b: torch.Tensor | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Solve and return ``x*`` (and ``(ν*, μ*)`` when ``return_duals``)."""
        x, nu, mu = _apply(self.opts, Q, q, G, h, A, b)
        return (x, nu, mu) if self.return_duals else x


class _ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, t: torch.Tensor, scale: float) -> torch.Tensor:
        ctx.scale = scale
        return t.view_as(t)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> Any:
        return g * ctx.scale, None


def _shape_of(t: torch.Tensor | None) -> tuple[int, ...] | None:
    return None if t is None else tuple(t.shape)


def _none_if_empty(t: Any) -> Any:
    return None if t is None or (isinstance(t, torch.Tensor) and t.numel() == 0) else t


class LayerKwargs(TypedDict, total=False):
    """The :class:`QPLayer` options :class:`QPFunction` passes on."""

    mode: Mode
    beta: float
    c: float
    refine: int
    active_tol: float
    solver_kwargs: dict[str, object] | None


class QPFunction:
    """Drop-in for ``qpth.qp.QPFunction``: ``QPFunction(eps=…, verbose=…, maxIter=…)(Q, p, G,
    h, A, b)`` with qpth's conventions, solved by any ``qpsolvers`` backend and differentiated
    by dXPP's penalty backward (so OptNet-style code changes one import).

    qpth's conventions kept: empty tensors (``torch.Tensor()``) mean "no such constraints";
    each of ``Q (nz,nz) | (B,nz,nz)``, ``p (nz,) | (B,nz)``, ``G``, ``h``, ``A``, ``b`` may or
    may not carry the batch axis (unbatched ones are broadcast); the output is always batched,
    ``(B, nz)``; and, as in qpth 0.0.18, the gradient of a broadcast (unbatched) input is the
    **mean** over the batch, not the sum (``broadcast_grad="sum"`` gives the true gradient
    of the summed loss, as :class:`QPLayer` does).

    Args:
        eps: qpth's interior-point tolerance; here the solver tolerance, clipped to
            ``[1e-10, 1e-3·β]`` (double-precision backends do not certify qpth's default
            1e-12; looser than ``1e-3·β`` is tightened with a warning).
        verbose: ``> 0`` turns on the backend's own output; ``≤ 0`` is silent.
        notImprovedLim: accepted for compatibility; unused (no qpth IPM here).
        maxIter: iteration cap passed as ``max_iter`` to interior-point backends (PIQP,
            Clarabel, CVXOPT); other backends (``solver="auto"`` picks ProxQP for dense
            input) count iterations differently and ignore it.
        solver: a ``qpsolvers`` backend name or ``"auto"``; qpth's ``QPSolvers`` enum values
            are accepted and mean ``"auto"``.
        check_Q_spd: check ``Q`` for positive semi-definiteness (qpth's flag).
        broadcast_grad: ``"mean"`` (qpth) or ``"sum"``.
        **options: any other :class:`QPLayer` option (``mode``, ``beta``, ``c``, ``refine``).

    Example:
        >>> import torch
        >>> from dxpp.torch import QPFunction
        >>> Q, p = torch.eye(2, dtype=torch.float64), -torch.ones(2, dtype=torch.float64)
        >>> G, h = torch.ones(1, 2, dtype=torch.float64), torch.ones(1, dtype=torch.float64)
        >>> e = torch.Tensor()
        >>> QPFunction(verbose=-1)(Q, p, G, h, e, e).numpy().round(6)
        array([[0.5, 0.5]])
    """

    def __init__(
        self,
        eps: float = 1e-12,
        verbose: int = 0,
        notImprovedLim: int = 3,
        maxIter: int = 20,
        solver: str | Enum = "auto",
        check_Q_spd: bool = True,
        broadcast_grad: str = "mean",
        **options: Unpack[LayerKwargs],
    ) -> None:
        self.broadcast_grad = check_choice(broadcast_grad, "broadcast_grad", ("mean", "sum"))
        unknown = set(options) - set(LayerKwargs.__annotations__)
        if unknown:
            raise TypeError(f"unknown QPFunction options {sorted(unknown)}")
        beta = float(options.pop("beta", BETA))
        if not isinstance(eps, int | float) or not eps > 0:
            raise ValueError(f"eps must be a number > 0, got {eps!r}")
        if isinstance(maxIter, bool) or not isinstance(maxIter, int) or maxIter < 1:
            raise ValueError(f"maxIter must be an integer >= 1, got {maxIter!r}")
        backend = solver if isinstance(solver, str) else "auto"
        kwargs: dict[str, object] = dict(options.pop("solver_kwargs", None) or {})
        if backend in _IPM_BACKENDS:
            kwargs.setdefault("max_iter", int(maxIter))
        if verbose > 0:
            kwargs.setdefault("verbose", True)
        self.opts = LayerOptions.check(
            solver=backend,
            beta=beta,
            tol=max(float(eps), 1e-10),
            check_psd=bool(check_Q_spd),
            solver_kwargs=kwargs,
            mode=options.get("mode", MODE),
            c=options.get("c", C),
            refine=options.get("refine", REFINE),
            active_tol=options.get("active_tol", ACTIVE_TOL),
        )

    def __call__(
        self,
        Q: torch.Tensor,
        p: torch.Tensor,
        G: torch.Tensor | None = None,
        h: torch.Tensor | None = None,
        A: torch.Tensor | None = None,
        b: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Solve the batch; returns ``(B, nz)``."""
        args = [_none_if_empty(t) for t in (Q, p, G, h, A, b)]
        for i, j in ((2, 3), (4, 5)):
            if (args[i] is None) != (args[j] is None):
                raise ValueError(
                    f"{_NAMES[i]} and {_NAMES[j]} must both be empty or both be "
                    f"given, got shapes {_shape_of((Q, p, G, h, A, b)[i])} "
                    f"and {_shape_of((Q, p, G, h, A, b)[j])}"
                )
        B = max(
            (
                t.shape[0]
                for t, base in zip(args, _BASE_NDIM)
                if t is not None and t.ndim == base + 1
            ),
            default=1,
        )
        if self.broadcast_grad == "mean" and B > 1:
            args = [
                _ScaleGrad.apply(t, 1.0 / B)
                if t is not None and t.ndim == base and t.requires_grad
                else t
                for t, base in zip(args, _BASE_NDIM)
            ]
        x = _apply(self.opts, *args)[0]
        return x if x.ndim == 2 else x.unsqueeze(0)
