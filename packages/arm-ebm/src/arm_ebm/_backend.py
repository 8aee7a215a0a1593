"""numpy / jax dispatch by input type (jax is imported only when a jax array comes in)."""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ._space import MASKED, _Layered

__all__ = ["check_table", "get_xp", "is_jax", "lse", "require_jax"]

JAX_HINT = "install the jax extra: `pip install 'arm-ebm[jax]'`"


def require_jax() -> tuple[ModuleType, ModuleType]:
    """Import jax and optax, or raise an ImportError naming the ``arm-ebm[jax]`` extra."""
    try:
        import jax
        import optax
    except ImportError as exc:  # pragma: no cover - exercised only without jax
        raise ImportError(f"this function needs jax and optax: {JAX_HINT}") from exc
    return jax, optax


def is_jax(x: Any) -> bool:
    if "jax" not in sys.modules:
        return False
    import jax

    return isinstance(x, jax.Array)


def get_xp(*arrays: Any) -> ModuleType:
    """``jax.numpy`` if any argument is a jax array (tracers included), else ``numpy``."""
    if any(is_jax(a) for a in arrays):
        import jax.numpy as jnp

        return jnp
    return np


def _concrete(x: Any) -> NDArray | None:
    """A numpy copy of ``x`` when its values are known (not a jax tracer), else None."""
    if is_jax(x):
        import jax

        if isinstance(x, jax.core.Tracer):
            return None
    return np.asarray(x)


def _as_real(x: Any, name: str) -> tuple[Any, Any]:
    """``(xp, array)`` for a real input: float64 numpy, or a real floating jax array as is."""
    xp = get_xp(x)
    if xp is np:
        if np.iscomplexobj(x):
            raise TypeError(f"{name} must be real-valued, got a complex array")
        raw = x if isinstance(x, np.ndarray) else np.asarray(x)
        if raw.dtype.kind in "USO" and not (
            raw.dtype.kind == "O" and all(isinstance(v, int | float | np.number) for v in raw.flat)
        ):
            raise TypeError(
                f"{name} must be a real numeric array, got {type(x).__name__} of dtype {raw.dtype}"
            )
        try:
            arr = np.asarray(x, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"{name} must be a real numeric array, got {type(x).__name__}"
            ) from None
    else:
        arr = x
        if xp.iscomplexobj(arr) or not xp.issubdtype(arr.dtype, xp.floating):
            raise TypeError(f"{name} must be a real floating jax array, got dtype {arr.dtype}")
    return xp, arr


def check_table(x: Any, space: _Layered, name: str) -> Any:
    """Check a q or r table ``(n_states, A)``; return it with masked entries set to −inf.

    Values must be real, finite or −inf (−inf = hard constraint); NaN and +inf are refused.
    """
    xp, arr = _as_real(x, name)
    if tuple(arr.shape) != space.shape:
        raise ValueError(
            f"{name} must have shape (n_states, vocab_size) = {space.shape} for this space, "
            f"got {tuple(arr.shape)}"
        )
    values = _concrete(arr)
    if values is not None:
        bad = np.isnan(values) | (values == np.inf)
        if bad.any():
            i, a = (int(v) for v in np.argwhere(bad)[0])
            raise ValueError(
                f"{name} must be finite or -inf, got {values[i, a]} at state {i}, action {a}"
            )
    return xp.where(xp.asarray(space.children != MASKED), arr, -xp.inf)


def check_vector(x: Any, n: int, name: str, what: str) -> Any:
    """Check a length-``n`` real vector (finite or −inf), e.g. R over ``sequences()``."""
    _, arr = _as_real(x, name)
    if tuple(arr.shape) != (n,):
        raise ValueError(f"{name} must have shape ({n},) ({what}), got {tuple(arr.shape)}")
    values = _concrete(arr)
    if values is not None:
        bad = np.isnan(values) | (values == np.inf)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{name} must be finite or -inf, got {values[i]} at index {i}")
    return arr


def lse(x: Any, xp: ModuleType) -> Any:
    """Row-wise log-sum-exp over the last axis; an all −inf row gives −inf (no NaN, and a zero
    gradient in jax)."""
    if xp is np:
        m = x.max(axis=-1)
        m0 = np.where(np.isfinite(m), m, 0.0)
        with np.errstate(divide="ignore"):
            return np.log(np.exp(x - m0[..., None]).sum(axis=-1)) + m0
    import jax

    dead = xp.all(x == -xp.inf, axis=-1)
    safe = xp.where(dead[..., None], 0.0, x)
    return xp.where(dead, -xp.inf, jax.nn.logsumexp(safe, axis=-1))


def dispatch(space: Any, fn: Any, *args: Any) -> Any:
    """Call ``fn(space, *args)``; with jax arrays through ``jax.jit`` (cached per space and
    function, so each depth's shapes compile once instead of once per eager op)."""
    if get_xp(*args) is np:
        return fn(space, *args)
    import functools

    import jax

    cache = space.__dict__.setdefault("_jit_cache", {})
    f = cache.get(fn)
    if f is None:
        f = cache[fn] = jax.jit(functools.partial(fn, space))
    return f(*args)
