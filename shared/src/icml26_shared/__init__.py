"""Shared pieces of the icml26 packages: argument checks, the split-conformal core, datasets,
metrics, the ``reproduce`` protocol (configs, checks, a resumable job runner, thread contexts)
and the benchmark layout.

Import the submodules (``from icml26_shared.checks import check_alpha``,
``from icml26_shared import metrics``). Importing the package itself imports nothing: each
submodule is loaded on first access, so ``import icml26_shared.checks`` costs numpy and nothing
else (no scipy, no matplotlib).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the lazily loaded submodules, for type checkers
    from . import (
        bench,
        checks,
        config,
        conformal,
        datasets,
        experiment,
        jobs,
        metrics,
        state,
        testing,
        threads,
    )

__all__ = [
    "bench",
    "checks",
    "config",
    "conformal",
    "datasets",
    "experiment",
    "jobs",
    "metrics",
    "state",
    "testing",
    "threads",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "__version__":
        from importlib.metadata import version

        return version("icml26-shared")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return [*__all__, "__version__"]
