"""Thread pools as a context: run a block on a fixed number of threads, then restore.

Small models train fastest on one thread each on a shared 2-core machine (two one-thread jobs side
by side beat one job on two threads whose pools wait on each other), and a benchmark compares
peers on one thread in lock-step. :func:`threads` sets torch's intra-op pool (where torch is
imported) and the BLAS/OpenMP pools that ``threadpoolctl`` reaches for the block, and restores the caller's settings after it, even when the block raises.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any

__all__ = ["single_thread", "threads"]


_CONTROLLER: tuple[int, Any] | None = None


def _controller() -> Any:
    """threadpoolctl's view of the loaded native thread pools, kept between calls (building it
    scans every loaded library, about 0.6 ms) and built again when modules were imported since
    (a new extension may have brought its own pool)."""
    global _CONTROLLER
    from threadpoolctl import ThreadpoolController

    n_modules = len(sys.modules)
    if _CONTROLLER is None or _CONTROLLER[0] != n_modules:
        _CONTROLLER = (n_modules, ThreadpoolController())
    return _CONTROLLER[1]


@contextmanager
def threads(n: int) -> Iterator[None]:
    """Run the block with ``n`` intra-op threads in torch and in the native BLAS/OpenMP pools.

    torch is touched only when the calling code already imported it (this module never imports
    torch itself); ``threadpoolctl`` limits numpy's BLAS and the OpenMP runtimes.

    >>> with threads(1):
    ...     pass
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an int >= 1 (a thread count), got {n!r}")
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    with ExitStack() as stack:
        stack.enter_context(_controller().limit(limits=n))
        if torch is not None:
            torch.set_num_threads(n)
        try:
            yield
        finally:
            if torch is not None and before is not None:
                torch.set_num_threads(before)


def single_thread() -> AbstractContextManager[None]:
    """``threads(1)``: the block runs on one thread (torch's pool and the BLAS pools), the
    caller's settings restored after it."""
    return threads(1)
