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

__all__ = ["single_thread", "threads"]


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
        from threadpoolctl import threadpool_limits

        stack.enter_context(threadpool_limits(limits=n))
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
