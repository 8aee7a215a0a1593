"""Progress of long calls: a bar on a terminal, a start and an end line when piped."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TypeVar

from icml26_shared.experiment import progress as _bar

T = TypeVar("T")


def bar(
    iterable: Iterable[T], *, enabled: bool | None, total: int | None = None, desc: str = ""
) -> Iterator[T]:
    """A tqdm bar on stderr when ``enabled``; ``None``: a bar when stderr is a terminal, else one
    line when the loop starts and one when it ends (so piped output still shows the stage)."""
    return _bar(
        iterable, enabled=None if enabled is None else bool(enabled), total=total, desc=desc
    )
