"""Progress bars of long calls: on by default when stderr is a terminal, as tqdm does."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from icml26_shared.experiment import progress as _bar

T = TypeVar("T")


def bar(
    iterable: Iterable[T], *, enabled: bool | None, total: int | None = None, desc: str = ""
) -> Iterator[T]:
    """A tqdm bar on stderr when ``enabled``; ``None`` shows it only if stderr is a terminal."""
    on = sys.stderr.isatty() if enabled is None else bool(enabled)
    return _bar(iterable, enabled=on, total=total, desc=desc)
