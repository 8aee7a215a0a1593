"""First-use training: a one-line message, then a progress bar (by default on a terminal)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from icml26_shared.experiment import progress_enabled

#: ``None``: a bar when stderr is a terminal; ``True`` / ``False``: always / never (no message
#: either); a callable is called with the number of steps done since its last call.
Progress = bool | None | Callable[[int], None]


@contextmanager
def training_progress(
    progress: Progress, *, total: int, desc: str, message: str
) -> Iterator[Callable[[int], None] | None]:
    """Print ``shnap: <message>`` on stderr (unless ``progress`` is False) and yield the
    per-step callback: a tqdm bar's ``update``, the user's callable, or None."""
    if progress is not None and not isinstance(progress, bool) and not callable(progress):
        raise TypeError(
            f"progress must be None, a bool or a callable(int), got {type(progress).__name__}"
        )
    if progress is False:
        yield None
        return
    print(f"shnap: {message}", file=sys.stderr, flush=True)
    if callable(progress):
        yield progress
        return
    if not progress_enabled(progress):  # None: a bar only on a terminal
        yield None
        return
    from tqdm.auto import tqdm  # a dependency of icml26-shared

    with tqdm(total=total, desc=desc, leave=False, file=sys.stderr) as bar:
        yield bar.update
