"""JAX adapter: :func:`qp_solve`, a ``jax.custom_vjp`` QP solution map (``pip install dxpp[jax]``).

Forward and backward run on the host through ``jax.pure_callback`` and the same numpy/scipy
core as :mod:`dxpp.torch` (:func:`dxpp.solve_qp` / :func:`dxpp.qp_vjp`), so the two adapters
agree to round-off. Works under ``jax.jit`` and ``jax.vmap`` (``vmap`` turns into one batched
host call). Dense arrays only. float64 needs x64, e.g. ``with jax.enable_x64(True): ...``;
float32 in → float32 out (computed in float64).

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
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError("dxpp.jax needs JAX: install it with `pip install dxpp[jax]`") from exc

import numpy as np

from icml26_shared.checks import check_choice, check_positive, check_positive_int

from ._api import to_input_shapes
from ._backward import vjp_data
from ._solve import QPSolution, solve_data
from ._validate import canonicalize

__all__ = ["qp_solve"]

_NAMES = ("Q", "q", "G", "h", "A", "b")


def _host_problem(args: tuple, present: tuple[bool, ...]) -> list[Any]:
    it = iter(np.asarray(a, dtype=np.float64) for a in args)
    return [next(it) if p else None for p in present]


@functools.lru_cache(maxsize=64)
def _build(present: tuple[bool, ...], opts: tuple[tuple[str, Any], ...]) -> Any:
    o = dict(opts)

    def solve_host(*args: Any) -> tuple[np.ndarray, ...]:
        data = canonicalize(*_host_problem(args, present), check_psd=o["check_psd"])
        sol = solve_data(data, solver=o["solver"], tol=o["tol"], beta=o["beta"],
                         active_tol=o["active_tol"])
        squeeze = (lambda a: a) if data.batched else (lambda a: a[0])
        return tuple(squeeze(a) for a in (sol.x, sol.nu, sol.mu,
                                          sol.active.astype(np.float64)))

    def vjp_host(*args: Any) -> tuple[np.ndarray, ...]:
        k = sum(present)
        prob, (x, nu, mu, act, g) = args[:k], args[k:]
        arrays = _host_problem(prob, present)
        data = canonicalize(*arrays, check_psd=False)
        lift = (lambda a: np.asarray(a, np.float64)) if data.batched else (
            lambda a: np.asarray(a, np.float64)[None])
        n_act = lift(act) > 0.5
        sol = QPSolution(lift(x), lift(nu), lift(mu), n_act, np.zeros_like(n_act), "")
        grad = vjp_data(data, sol, lift(g), mode=o["mode"], beta=o["beta"], c=o["c"],
                        refine=o["refine"])
        shapes = {n: (np.shape(a) if a is not None else None) for n, a in zip(_NAMES, arrays)}
        grad = to_input_shapes(grad, shapes, np.dtype(np.float64))
        out = [gk for gk, p in zip(grad, present) if p]
        return tuple(np.asarray(gk, dtype=np.asarray(a).dtype) for gk, a in zip(out, prob))

    def shapes_of(args: tuple) -> tuple[Any, Any, Any, Any]:
        q = args[1]
        n = q.shape[-1]
        m = args[_pos(present, 3)].shape[-1] if present[3] else 0
        p = args[_pos(present, 5)].shape[-1] if present[5] else 0
        bshape = _batch_shape(args, present)
        dt = q.dtype
        return tuple(jax.ShapeDtypeStruct((*bshape, k), dt) for k in (n, m, p, m))

    @jax.custom_vjp
    def qp(*args: Any) -> Any:
        return jax.pure_callback(solve_host, shapes_of(args), *args,
                                 vmap_method="broadcast_all")[0]

    def fwd(*args: Any) -> Any:
        x, nu, mu, act = jax.pure_callback(solve_host, shapes_of(args), *args,
                                           vmap_method="broadcast_all")
        return x, (args, x, nu, mu, act)

    def bwd(res: Any, g: Any) -> Any:
        args, x, nu, mu, act = res
        out_shapes = tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args)
        return tuple(jax.pure_callback(vjp_host, out_shapes, *args, x, nu, mu, act, g,
                                       vmap_method="broadcast_all"))

    qp.defvjp(fwd, bwd)
    return qp


def _pos(present: tuple[bool, ...], i: int) -> int:
    return sum(present[:i])


def _batch_shape(args: tuple, present: tuple[bool, ...]) -> tuple[int, ...]:
    base = [2, 1, 2, 1, 2, 1]
    dims = [nd for nd, p in zip(base, present) if p]
    batch = 1
    batched = False
    for a, nd in zip(args, dims):
        if a.ndim == nd + 1:
            batched = True
            batch = max(batch, a.shape[0])
    return (batch,) if batched else ()


def qp_solve(
    Q: Any, q: Any, G: Any = None, h: Any = None, A: Any = None, b: Any = None, *,
    solver: str = "auto", mode: str = "penalty", beta: float = 1e-4, c: float = 10.0,
    refine: int = 10, tol: float | None = None, active_tol: float = 1e-7, check_psd: bool = True,
) -> jax.Array:
    """Differentiable ``x*`` of ``min ½xᵀQx + qᵀx s.t. Gx ≤ h, Ax = b`` (``jax.custom_vjp``).

    Args:
        Q, q, G, h, A, b: dense JAX arrays (``G``/``h`` and ``A``/``b`` optional); any may have
            a leading batch axis.
        solver, mode, beta, c, refine, tol, active_tol, check_psd: as in :class:`dxpp.torch.QPLayer`.

    Returns:
        ``x*`` with ``q``'s dtype (and the batch axis if any input had one).
    """
    check_choice(mode, "mode", ("penalty", "exact"))
    opts = (("active_tol", float(active_tol)), ("beta", check_positive(beta, "beta")),
            ("c", check_positive(c, "c")), ("check_psd", bool(check_psd)), ("mode", mode),
            ("refine", check_positive_int(refine, "refine", minimum=0)),
            ("solver", solver), ("tol", None if tol is None else float(tol)))
    present = (True, True, G is not None, h is not None, A is not None, b is not None)
    args = tuple(jnp.asarray(a) for a in (Q, q, G, h, A, b) if a is not None)
    dt = jnp.result_type(*args)
    if not jnp.issubdtype(dt, jnp.floating):
        dt = jnp.result_type(float)
    args = tuple(a.astype(dt) for a in args)
    return _build(present, opts)(*args)
