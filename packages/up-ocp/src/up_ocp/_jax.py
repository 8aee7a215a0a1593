"""UP-OCP as one ``jax.lax.scan`` (optional; ``pip install up-ocp[jax]``).

The same update as :func:`up_ocp.update` written with ``jax.numpy``: elementwise over any batch
shape, scanned over time, jit-compiled. Run it under ``jax.enable_x64(True)`` to match the numpy
core to round-off; in float32 the wealth is still kept in log space, so nothing overflows.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_alpha, check_finite_array, check_positive

from ._protocol import read_streams, restore_layout

__all__ = ["run_up_jax"]


def _jax() -> Any:
    try:
        import jax
    except ImportError as exc:
        raise ImportError(
            "run_up_jax needs jax: install it with `pip install up-ocp[jax]`"
        ) from exc
    return jax


@functools.cache
def _compiled() -> Any:
    """The jitted scan, built once (alpha, eps, q0 are traced arguments: no recompilation)."""
    jax = _jax()
    jnp = jax.numpy

    def run(x: Any, alpha: Any, log_eps: Any, q0: Any) -> Any:
        dtype = x.dtype

        def step(carry: Any, s_t: Any) -> tuple[Any, Any]:
            log_w, misses, t = carry
            b = (misses + 0.5) / (t + 1.0)
            beta = (b - alpha) / (alpha * (1.0 - alpha))
            q = q0 + jnp.sign(beta) * jnp.exp(jnp.log(jnp.abs(beta)) + log_w)
            err = (s_t > q).astype(dtype)
            log_w = (
                log_w + err * jnp.log(b / alpha) + (1.0 - err) * jnp.log((1.0 - b) / (1.0 - alpha))
            )
            return (log_w, misses + err, t + 1.0), q

        batch = x.shape[:-1]
        carry = (jnp.full(batch, log_eps, dtype), jnp.zeros(batch, dtype), jnp.zeros((), dtype))
        _, qs = jax.lax.scan(step, carry, jnp.moveaxis(x, -1, 0))
        return jnp.moveaxis(qs, 0, -1)

    return jax.jit(run)


def run_up_jax(
    scores: ArrayLike, alpha: float = 0.1, eps: float = 1.0, q0: float = 0.0
) -> NDArray[np.float64]:
    """UP-OCP thresholds for ``scores`` of shape ``(*batch, T)`` via ``lax.scan`` (KT prior).

    Returns:
        A numpy array of the thresholds (same shape as ``scores``), ``[..., t]`` announced before
        ``scores[..., t]``, identical in meaning to ``OnlineConformal("up").run(scores)``.
    """
    a = check_alpha(alpha)
    e = check_positive(eps, "eps")
    q0_ = float(check_finite_array(q0, "q0", ndim=0))
    s, from_frame = read_streams(scores)
    jax = _jax()
    dtype = np.float64 if jax.config.read("jax_enable_x64") else np.float32
    x = jax.numpy.asarray(s, dtype=dtype)
    out = _compiled()(x, dtype(a), dtype(np.log(e)), dtype(q0_))
    return restore_layout(np.asarray(out, dtype=np.float64), from_frame)
