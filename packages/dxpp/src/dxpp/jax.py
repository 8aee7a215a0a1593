"""JAX adapter (``pip install dxpp[jax]``): :func:`qp_solve`, :class:`QPLayer` and
:class:`QPFunction` — the same names as :mod:`dxpp.torch`.

The forward solve runs on the host (any ``qpsolvers`` backend). Called on concrete arrays
(outside ``jit``/``vmap``, also under eager ``jax.grad``) the problem is checked and solved
*before* any callback, so bad input raises ``ValueError``/``TypeError`` and an infeasible or
unbounded QP raises :class:`dxpp.QPError`, as in numpy and torch. Under ``jit``/``vmap`` the
forward is a ``jax.pure_callback``; an error raised inside it reaches the caller as the
runtime error JAX wraps callback exceptions in (``jax.errors.JaxRuntimeError``), whose message
contains the ``QPError``/``ValueError`` text.

The float64 backward is pure ``jax.numpy``/``jax.scipy`` (:mod:`dxpp._jax_backward`):
jit-able, vmap-able, on the arrays' device. float64 needs x64 (``with jax.enable_x64(True):``).
float32 arrays (the default without x64) are differentiated by the float64 numpy core on the
host through a callback (the penalty system's condition number, ~``c/β·κ(Q)``, is beyond
float32), and the result is returned in float32. Dense arrays only.

References:
    Linghu, Liu, Deng. "A Penalty Approach for Differentiation Through Black-Box Quadratic
    Programming Solvers" (dXPP), ICML 2026, arXiv 2602.14154.
"""

from __future__ import annotations

import functools
from typing import Any

try:
    import jax
    import jax.numpy as jnp
    from jax.typing import ArrayLike
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError("dxpp.jax needs JAX: install it with `pip install dxpp[jax]`") from exc

import numpy as np

from ._api import LayerOptions, to_input_shapes
from ._defaults import ACTIVE_TOL, BETA, MODE, REFINE, SOLVER, C, Mode
from ._jax_backward import jax_vjp
from ._solve import import_qpsolvers
from ._types import QPSolution
from ._validate import QPData, canonicalize

__all__ = ["QPFunction", "QPLayer", "qp_solve"]

import_qpsolvers()  # at import time, as in dxpp.torch: the first forward call needs it

_NAMES = ("Q", "q", "G", "h", "A", "b")
_BASE_NDIM = (2, 1, 2, 1, 2, 1)


def _host_problem(args: tuple, present: tuple[bool, ...]) -> list[Any]:
    it = iter(np.asarray(a, dtype=np.float64) for a in args)
    return [next(it) if p else None for p in present]


def _host_solution(data: QPData, opts: LayerOptions) -> tuple[np.ndarray, ...]:
    sol = opts.solve(data)
    squeeze = (lambda a: a) if data.batched else (lambda a: a[0])
    return tuple(squeeze(a) for a in (sol.x, sol.nu, sol.mu, sol.active.astype(np.float64)))


def _result_shapes(args: tuple, present: tuple[bool, ...]) -> tuple[Any, ...]:
    q = args[1]
    n = q.shape[-1]
    m = args[sum(present[:3])].shape[-1] if present[3] else 0
    p = args[sum(present[:5])].shape[-1] if present[5] else 0
    dims = [nd for nd, pr in zip(_BASE_NDIM, present) if pr]
    batch = max((a.shape[0] for a, nd in zip(args, dims) if a.ndim == nd + 1), default=None)
    bshape = () if batch is None else (batch,)
    return tuple(jax.ShapeDtypeStruct((*bshape, k), q.dtype) for k in (n, m, p, m))


@functools.lru_cache(maxsize=64)
def _build(present: tuple[bool, ...], opts: LayerOptions) -> Any:
    # The host callbacks cast their outputs to the dtypes fixed when the caller was traced:
    # under `jax.enable_x64(True)` used as a context manager, a jitted function may run (and
    # hand its callback arrays) after the context has been left.
    def solve_host(*args: Any, dtypes: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
        data = canonicalize(
            *_host_problem(args, present),
            check_psd=opts.check_psd,
            q_dtype=np.asarray(args[0]).dtype,
        )
        out = _host_solution(data, opts)
        return tuple(np.asarray(a, dtype=dt) for a, dt in zip(out, dtypes))

    def vjp_host(*args: Any, dtypes: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
        k = sum(present)
        prob, (x, nu, mu, act, g) = args[:k], args[k:]
        arrays = _host_problem(prob, present)
        data = canonicalize(*arrays, check_psd=False, warn_psd=False)

        def lift(a: Any) -> np.ndarray:
            a = np.asarray(a, np.float64)
            return a if data.batched else a[None]

        _check_upstream(np.asarray(g))
        n_act = lift(act) > 0.5
        sol = QPSolution(lift(x), lift(nu), lift(mu), n_act, np.zeros_like(n_act), "")
        grad = opts.vjp(data, sol, lift(g))
        shapes = {nm: (np.shape(a) if a is not None else None) for nm, a in zip(_NAMES, arrays)}
        grad = to_input_shapes(grad, shapes, np.dtype(np.float64))
        out = [gk for gk, pr in zip(grad, present) if pr]
        return tuple(np.asarray(gk, dtype=dt) for gk, dt in zip(out, dtypes))

    def forward(args: tuple) -> tuple:
        frozen = tuple(jax.lax.stop_gradient(a) for a in args)
        shapes = _result_shapes(args, present)
        wide = shapes[0].dtype == jnp.float64
        if not wide:
            host = functools.partial(solve_host, dtypes=tuple(s.dtype for s in shapes))
            return jax.pure_callback(host, shapes, *frozen, vmap_method="broadcast_all")
        # float64 results travel as pairs of uint32 words: JAX canonicalises a callback's
        # outputs with the x64 flag of the thread that runs it, so a function traced inside
        # `jax.enable_x64(True)` but run after it would see its float64 results cut to float32
        words = tuple(jax.ShapeDtypeStruct((*s.shape, 2), jnp.uint32) for s in shapes)
        host = functools.partial(_as_words, solve_host, tuple(s.dtype for s in shapes))
        out = jax.pure_callback(host, words, *frozen, vmap_method="broadcast_all")
        return tuple(jax.lax.bitcast_convert_type(w, jnp.float64) for w in out)

    @jax.custom_vjp
    def qp(args: tuple, sol: tuple) -> jax.Array:
        return sol[0]

    def fwd(args: tuple, sol: tuple) -> tuple:
        # the residuals pass through `_first_order_only`: differentiating the backward pass
        # (a Hessian, grad of grad) reaches its JVP rule and raises instead of returning zeros
        return sol[0], (tuple(_first_order_only(a) for a in args), sol)

    def bwd(res: tuple, g: jax.Array) -> tuple:
        _check_upstream(g)
        args, sol = res
        x, nu, mu, act = sol
        if args[1].dtype == jnp.float64:
            it = iter(args)
            arrays = [next(it) if pr else None for pr in present]
            grads = jax_vjp(
                arrays,
                x,
                nu,
                mu,
                act,
                g,
                mode="penalty" if opts.mode == "auto" else opts.mode,  # traced once
                beta=opts.beta,
                c=opts.c,
                refine=opts.refine,
            )
            out = tuple(gk for gk in grads if gk is not None)
        else:
            shapes = tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args)
            host = functools.partial(vjp_host, dtypes=tuple(s.dtype for s in shapes))
            out = tuple(
                jax.pure_callback(
                    host, shapes, *args, x, nu, mu, act, g, vmap_method="broadcast_all"
                )
            )
        return out, tuple(jnp.zeros_like(s) for s in sol)

    qp.defvjp(fwd, bwd)
    return forward, qp


SECOND_ORDER_MESSAGE = (
    "dxpp's QP layer has first derivatives only: a second derivative (jax.hessian, "
    "jax.jacfwd of a gradient, grad of grad) would miss how the solution moves with the "
    "problem and come out wrong, so it is refused. Differentiate once (jax.grad / jax.vjp / "
    "jax.jacrev), or use finite differences of the gradient"
)


@jax.custom_jvp
def _first_order_only(t: jax.Array) -> jax.Array:
    """The identity, whose derivative raises: the QP layer's gradients are not differentiable
    (they hold the solution fixed), so differentiating them must fail, not return zeros."""
    return t


@_first_order_only.defjvp
def _first_order_only_jvp(primals: tuple, tangents: tuple) -> tuple:
    raise NotImplementedError(SECOND_ORDER_MESSAGE)


def _as_words(fn: Any, dtypes: tuple[Any, ...], *args: Any) -> tuple[np.ndarray, ...]:
    """``fn(*args, dtypes=dtypes)`` with each float64 result viewed as ``(..., 2)`` uint32."""
    out = fn(*args, dtypes=dtypes)
    return tuple(
        np.ascontiguousarray(a, dtype=np.float64).view(np.uint32).reshape(*np.shape(a), 2)
        for a in out
    )


def _check_upstream(g: Any) -> None:
    """Refuse a NaN/inf upstream gradient when its values are known (eager mode, the host
    callback); under ``jit`` the check is skipped (enable ``jax_debug_nans`` there)."""
    if isinstance(g, jax.core.Tracer):  # pyright: ignore[reportAttributeAccessIssue]
        return
    a = np.asarray(g)
    if not np.isfinite(a).all():
        raise ValueError(
            "the upstream gradient dL/dx* reaching qp_solve must be finite, got "
            f"{int(np.isnan(a).sum())} NaN and {int(np.isinf(a).sum())} inf entries (the loss "
            "after the layer produced them): the QP gradients would all be NaN"
        )


def _concrete(args: tuple) -> list[np.ndarray] | None:
    """Host copies of ``args`` when they have values now (not under jit/vmap), else None."""
    out = []
    for a in args:
        a = jax.lax.stop_gradient(a)
        if isinstance(a, jax.core.Tracer):  # pyright: ignore[reportAttributeAccessIssue]
            return None
        out.append(np.asarray(a))
    return out


def _run(opts: LayerOptions, Q: Any, q: Any, G: Any, h: Any, A: Any, b: Any) -> jax.Array:
    raw = (Q, q, G, h, A, b)
    for name, a in zip(_NAMES, raw):
        if a is not None and jnp.iscomplexobj(a):
            raise TypeError(f"{name} must be real-valued, got dtype {jnp.asarray(a).dtype}")
    if Q is None or q is None:
        raise ValueError(f"Q and q must be given, got Q={type(Q).__name__}, q={type(q).__name__}")
    present = tuple(a is not None for a in raw)
    args = tuple(jnp.asarray(a) for a in raw if a is not None)
    dt = jnp.result_type(*args)
    if not jnp.issubdtype(dt, jnp.floating):
        dt = jnp.result_type(float)  # integers: float64 under x64, else float32
    args = tuple(a.astype(dt) for a in args)
    forward, qp = _build(present, opts)
    host = _concrete(args)
    if host is None:
        sol = forward(args)
    else:  # validate and solve now: errors surface as themselves, not inside a callback
        data = canonicalize(
            *_host_problem(tuple(host), present),
            check_psd=opts.check_psd,
            q_dtype=np.dtype(dt),
        )
        sol = tuple(jnp.asarray(a, dtype=dt) for a in _host_solution(data, opts))
    return qp(args, sol)


def qp_solve(
    Q: ArrayLike,
    q: ArrayLike,
    G: ArrayLike | None = None,
    h: ArrayLike | None = None,
    A: ArrayLike | None = None,
    b: ArrayLike | None = None,
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
) -> jax.Array:
    """Differentiable ``x*`` of ``min ½xᵀQx + qᵀx s.t. Gx ≤ h, Ax = b`` (``jax.custom_vjp``).

    Args:
        Q, q, G, h, A, b: dense JAX arrays (``G``/``h`` and ``A``/``b`` optional); any may have
            a leading batch axis (or use ``jax.vmap``).
        solver, mode, beta, c, refine, tol, active_tol, check_psd, solver_kwargs: as in
            :class:`dxpp.torch.QPLayer`.

    Returns:
        ``x*`` with the inputs' floating dtype (and the batch axis if any input had one).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from dxpp.jax import qp_solve
        >>> with jax.enable_x64(True):
        ...     f = lambda q: qp_solve(jnp.eye(2), q, jnp.ones((1, 2)), jnp.ones(1))[0]
        ...     print(jax.grad(f)(jnp.array([-1.0, -1.0])).round(6))
        [-0.5  0.5]
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
    return _run(opts, Q, q, G, h, A, b)


class QPLayer:
    """Callable QP layer with fixed options, ``QPLayer(**options)(Q, q, G, h, A, b) -> x*``
    (the options of :func:`qp_solve`; the same class name as :class:`dxpp.torch.QPLayer`).

    Example:
        >>> import jax.numpy as jnp
        >>> from dxpp.jax import QPLayer
        >>> QPLayer()(jnp.eye(2), jnp.array([-1.0, -1.0]), jnp.ones((1, 2)), jnp.ones(1)).round(4)
        Array([0.5, 0.5], dtype=float32)
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
        check_psd: bool = True,
        solver_kwargs: dict[str, object] | None = None,
    ) -> None:
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

    def __call__(
        self,
        Q: ArrayLike,
        q: ArrayLike,
        G: ArrayLike | None = None,
        h: ArrayLike | None = None,
        A: ArrayLike | None = None,
        b: ArrayLike | None = None,
    ) -> jax.Array:
        """Solve; see :func:`qp_solve`."""
        return _run(self.opts, Q, q, G, h, A, b)


class QPFunction:
    """qpth's calling convention in JAX (the same name as :class:`dxpp.torch.QPFunction`):
    empty arrays mean "no such constraints", the output is always batched ``(B, nz)``. JAX's
    gradients of broadcast inputs are sums (there is no qpth here to mimic).

    Args:
        eps, verbose, notImprovedLim, maxIter, solver, check_Q_spd, **options: as in
            :class:`dxpp.torch.QPFunction` (``eps`` → solver tolerance clipped to ≥ 1e-10).
    """

    def __init__(
        self,
        eps: float = 1e-12,
        verbose: int = 0,
        notImprovedLim: int = 3,
        maxIter: int = 20,
        solver: Any = "auto",
        check_Q_spd: bool = True,
        **options: Any,
    ) -> None:
        if not isinstance(eps, int | float) or not eps > 0:
            raise ValueError(f"eps must be a number > 0, got {eps!r}")
        backend = solver if isinstance(solver, str) else "auto"
        kwargs = dict(options.pop("solver_kwargs", None) or {})
        if backend in ("piqp", "clarabel", "cvxopt"):
            kwargs.setdefault("max_iter", int(maxIter))
        if verbose > 0:
            kwargs.setdefault("verbose", True)
        self.opts = LayerOptions.check(
            solver=backend,
            tol=max(float(eps), 1e-10),
            check_psd=bool(check_Q_spd),
            solver_kwargs=kwargs,
            **options,
        )

    def __call__(
        self, Q: Any, p: Any, G: Any = None, h: Any = None, A: Any = None, b: Any = None
    ) -> jax.Array:
        """Solve the batch; returns ``(B, nz)``."""
        args = [None if a is None or jnp.size(a) == 0 else a for a in (Q, p, G, h, A, b)]
        x = _run(self.opts, *args)
        return x if x.ndim == 2 else x[None]
