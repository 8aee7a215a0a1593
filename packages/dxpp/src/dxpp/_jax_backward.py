"""The dense penalty backward in ``jax.numpy``/``jax.scipy``: jit-able, vmap-able, on the
arrays' device (the forward solve stays a host callback).

Same maths as :mod:`dxpp._backward` and :mod:`dxpp._torch_backward`, written for static
shapes: the active set is a mask, so ``C = [G; A]`` keeps every row and the inactive ones get
weight 0 (and, in ``mode="exact"``, an identity row in the KKT matrix). The multiplier
refinement and the weight boosting are ``lax.while_loop``\\ s, so under ``vmap`` each problem
stops on its own test. If the penalty matrix fails to factor, a ridge ``δ``, then ``10³δ``
and ``10⁶δ`` are tried (there is no LU fallback under jit; ``Q`` must be PSD).

References:
    Linghu, Liu, Deng. "A Penalty Approach for Differentiation Through Black-Box Quadratic
    Programming Solvers" (dXPP), ICML 2026, arXiv 2602.14154.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
from jax import lax

from ._types import POWER_ITERATIONS, RETRY_RESIDUAL, power_start

__all__ = ["jax_vjp"]

_BASE_NDIM = (2, 1, 2, 1, 2, 1)


def _spectral_norm(Q: jax.Array) -> jax.Array:
    v = jnp.asarray(power_start(Q.shape[0]), dtype=Q.dtype)
    lam = jnp.zeros((), Q.dtype)
    for _ in range(POWER_ITERATIONS):
        u = Q @ v
        lam = jnp.linalg.norm(u)
        v = u / jnp.where(lam > 0, lam, 1.0)
    return lam


def _masked_median(vals: jax.Array, valid: jax.Array) -> jax.Array:
    k = vals.shape[0]
    cnt = valid.sum()
    s = jnp.sort(jnp.where(valid, vals, jnp.inf))
    lo = jnp.maximum(cnt - 1, 0) // 2
    hi = jnp.minimum(cnt // 2, k - 1)
    return jnp.where(cnt > 0, 0.5 * (s[lo] + s[hi]), 1.0)


def _weights(
    C: jax.Array,
    d: jax.Array,
    x: jax.Array,
    valid: jax.Array,
    q_norm: jax.Array,
    beta: float,
    c: float,
) -> tuple[jax.Array, jax.Array]:
    """Penalty weights (zero on padding rows) and their scale, ``‖Q‖₂`` or the median squared
    active-row norm when ``Q = 0``."""
    r2 = jnp.sum(C * C, axis=-1)
    r2 = jnp.where(r2 > 0, r2, 1.0)
    med = _masked_median(r2, valid)
    scale = jnp.where(q_norm > 0, q_norm, med)
    z = (C @ x - d) / (beta * (1.0 + jnp.abs(d) + jnp.sqrt(r2) * jnp.linalg.norm(x)))
    s = jax.nn.sigmoid(z)
    w = (c / beta) * scale / jnp.minimum(r2, med) * 4.0 * s * (1.0 - s)
    return jnp.where(valid, w, 0.0), scale


def _cholesky(H: jax.Array, ridge: jax.Array) -> jax.Array:
    eye = jnp.eye(H.shape[0], dtype=H.dtype)

    def cond(s: tuple) -> jax.Array:
        return (s[0] < 3) & ~jnp.all(jnp.isfinite(s[1]))

    def body(s: tuple) -> tuple:
        k, _ = s
        return k + 1, jnp.linalg.cholesky(H + ridge * jnp.power(1e3, k) * eye)

    return lax.while_loop(cond, body, (0, jnp.linalg.cholesky(H)))[1]


def _attempt(
    Q: jax.Array,
    C: jax.Array,
    w: jax.Array,
    g: jax.Array,
    ridge: jax.Array,
    refine: int,
    v_scale: jax.Array,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    X = C * jnp.sqrt(w)[:, None]
    L = _cholesky(Q + X.T @ X, ridge)

    def solve(r: jax.Array) -> jax.Array:
        return jsl.cho_solve((L, True), r)

    v = solve(g)
    Cv = C @ v
    t = w * Cv
    if not refine:
        return v, t, jnp.zeros((), bool)

    def cond(s: tuple) -> jax.Array:
        return (s[0] < refine) & ~s[5]

    def body(s: tuple) -> tuple:
        i, v, t, Cv, prev, _, _ = s
        dv = solve(g - Q @ v - C.T @ (t + w * Cv))
        v = v + dv
        Cv = C @ v
        t = t + w * Cv
        # on the problem's scale (see dxpp._backward._refine): v → 0 at a vertex
        rel = jnp.linalg.norm(dv) / jnp.maximum(jnp.linalg.norm(v) + v_scale, 1e-300)
        conv = rel <= 1e-9
        done = conv | (rel > 0.5 * prev)
        return i + 1, v, t, Cv, rel, done, conv

    init = (0, v, t, Cv, jnp.asarray(jnp.inf, g.dtype), jnp.zeros((), bool), jnp.zeros((), bool))
    _, v, t, _, _, _, conv = lax.while_loop(cond, body, init)
    return v, t, conv


def _residual(
    Q: jax.Array,
    C: jax.Array,
    g: jax.Array,
    v: jax.Array,
    t: jax.Array,
    q_norm: jax.Array,
    v_scale: jax.Array,
) -> jax.Array:
    c_norm = jnp.sqrt(jnp.max(jnp.sum(C * C, axis=-1), initial=0.0))
    nv, nt = jnp.linalg.norm(v), jnp.linalg.norm(t)
    stat = jnp.linalg.norm(g - Q @ v - C.T @ t) / jnp.maximum(
        jnp.linalg.norm(g) + q_norm * nv + c_norm * nt, 1e-300
    )
    feas = jnp.linalg.norm(C @ v) / jnp.maximum(c_norm * (nv + v_scale), 1e-300)
    return jnp.maximum(stat, feas)


def _penalty(
    Q: jax.Array,
    C: jax.Array,
    d: jax.Array,
    valid: jax.Array,
    x: jax.Array,
    g: jax.Array,
    beta: float,
    c: float,
    refine: int,
) -> tuple[jax.Array, jax.Array]:
    q_norm = _spectral_norm(Q)
    w, scale = _weights(C, d, x, valid, q_norm, beta, c)
    ridge = 1e-13 * jnp.maximum(q_norm, 1.0) * Q.shape[0]
    v_scale = jnp.linalg.norm(g) / scale  # ‖g‖/‖Q‖ (see dxpp._backward._refine)

    def cond(s: tuple) -> jax.Array:
        return (s[0] <= (2 if refine else 0)) & ~s[4]

    def body(s: tuple) -> tuple:
        # attempt k with the weights ×10³ᵏ; later attempts only when the refinement did not
        # converge and the reduced-KKT backward error is above RETRY_RESIDUAL (numpy core's rule)
        k, v, t, res, _ = s
        v2, t2, conv2 = _attempt(Q, C, w * jnp.power(1e3, k), g, ridge, refine, v_scale)
        res2 = _residual(Q, C, g, v2, t2, q_norm, v_scale)
        take = (k == 0) | conv2 | (res2 < res)
        return (
            k + 1,
            jnp.where(take, v2, v),
            jnp.where(take, t2, t),
            jnp.where(take, res2, res),
            conv2 | (res2 <= RETRY_RESIDUAL),
        )

    init = (
        0,
        jnp.zeros_like(g),
        jnp.zeros(C.shape[0], g.dtype),
        jnp.asarray(jnp.inf, g.dtype),
        jnp.zeros((), bool),
    )
    _, v, t, _, _ = lax.while_loop(cond, body, init)
    return v, t


def _exact(Q: jax.Array, C: jax.Array, valid: jax.Array, g: jax.Array) -> tuple:
    n, k = Q.shape[0], C.shape[0]
    K = jnp.block([[Q, C.T], [C, jnp.diag(jnp.where(valid, 0.0, 1.0)).astype(Q.dtype)]])
    sol = jnp.linalg.solve(K, jnp.concatenate([g, jnp.zeros(k, g.dtype)]))
    return sol[:n], jnp.where(valid, sol[n:], 0.0)


def _single(
    Q: jax.Array,
    q: jax.Array,
    G: jax.Array,
    h: jax.Array,
    A: jax.Array,
    b: jax.Array,
    x: jax.Array,
    nu: jax.Array,
    mu: jax.Array,
    act: jax.Array,
    g: jax.Array,
    *,
    mode: str,
    beta: float,
    c: float,
    refine: int,
) -> tuple[jax.Array, ...]:
    m = G.shape[0]
    Q = 0.5 * (Q + Q.T)
    active = act > 0.5
    valid = jnp.concatenate([active, jnp.ones(A.shape[0], bool)])
    C = jnp.concatenate([G, A]) * valid[:, None]
    d = jnp.concatenate([h, b])
    if C.shape[0] == 0:
        v = jnp.linalg.solve(Q, g)  # no constraints: one SPD solve
        t = jnp.zeros(0, g.dtype)
    elif mode == "penalty":
        v, t = _penalty(Q, C, d, valid, x, g, beta, c, refine)
    else:
        v, t = _exact(Q, C, valid, g)
    t_I, t_E = t[:m], t[m:]
    nu_I = jnp.where(active, nu, 0.0)
    gQ = -0.5 * (jnp.outer(v, x) + jnp.outer(x, v))
    gG = -(jnp.outer(nu_I, v) + jnp.outer(t_I, x))
    gA = -(jnp.outer(mu, v) + jnp.outer(t_E, x))
    return gQ, -v, gG, t_I, gA, t_E


@functools.partial(jax.jit, static_argnames=("mode", "beta", "c", "refine"))
def jax_vjp(
    arrays: list[Any],
    x: jax.Array,
    nu: jax.Array,
    mu: jax.Array,
    act: jax.Array,
    g: jax.Array,
    *,
    mode: str,
    beta: float,
    c: float,
    refine: int,
) -> list[Any]:
    """Gradients w.r.t. the six ``arrays`` (``None`` for absent ``G, h`` / ``A, b``), each
    shaped like its input; ``x, nu, mu, act, g`` carry a batch axis iff any input did."""
    batched = x.ndim == 2
    n = x.shape[-1]
    full = list(arrays)
    for i, j in ((2, 3), (4, 5)):
        if full[i] is None:
            full[i], full[j] = jnp.zeros((0, n), x.dtype), jnp.zeros((0,), x.dtype)
    f = jax.tree_util.Partial(_single, mode=mode, beta=beta, c=c, refine=refine)
    if not batched:
        out = f(*full, x, nu, mu, act, g)
    else:
        B = x.shape[0]
        axes, squeezed = [], []
        for a, base in zip(full, _BASE_NDIM):
            own = a.ndim == base + 1 and a.shape[0] == B and B != 1
            axes.append(0 if own else None)
            squeezed.append(a if own or a.ndim == base else a[0])
        out = jax.vmap(f, in_axes=(*axes, 0, 0, 0, 0, 0))(*squeezed, x, nu, mu, act, g)
        out = [o if ax == 0 else o.sum(0).reshape(a.shape) for o, ax, a in zip(out, axes, full)]
    return [None if a is None else o.astype(a.dtype) for o, a in zip(out, arrays)]
