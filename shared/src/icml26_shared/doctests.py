"""Find and run the docstring examples of a package (each package's ``tests/test_doctests.py``).

Modules are found without importing them (a module that only wraps an optional dependency is
not imported just to find it has no example), then each one with a ``>>>`` is run by
:mod:`doctest` with ``ELLIPSIS | NORMALIZE_WHITESPACE``::

    @pytest.mark.parametrize("name", modules_with_examples("mypkg"))
    def test_docstring_examples_run(name):
        result = run_examples(name)
        assert result.attempted > 0 and result.failed == 0, name
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

__all__ = ["modules_with_examples", "run_examples"]


def _has_examples(name: str) -> bool:
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.origin is not None and ">>>" in Path(spec.origin).read_text()


def modules_with_examples(package: str) -> list[str]:
    """Sorted names of the modules of ``package`` (``__main__`` excluded) holding a ``>>>``."""
    root = importlib.import_module(package)
    return sorted(
        m.name
        for m in pkgutil.walk_packages(root.__path__, prefix=f"{package}.")
        if m.name != f"{package}.__main__" and _has_examples(m.name)
    )


def run_examples(name: str) -> doctest.TestResults:
    """Run the docstring examples of module ``name``; returns doctest's (failed, attempted)."""
    module = importlib.import_module(name)
    return doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
