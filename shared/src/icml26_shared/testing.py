"""Test helpers the packages share (no pytest needed at import).

:func:`assert_follows_seed_rule` checks one public entry point against the seed rule of
:func:`icml26_shared.checks.check_seed`: every accepted kind of seed runs, every refused kind
raises the rule's error naming the argument. :func:`assert_import_is_light` checks in a fresh
interpreter that importing a package loads none of the named heavy modules;
:func:`terminal_stderr` swaps ``sys.stderr`` for an in-memory stream that is, or is not, a
terminal (what ``progress=None`` decides on).
"""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

__all__ = [
    "REFUSED_SEEDS",
    "accepted_seeds",
    "assert_follows_seed_rule",
    "assert_import_is_light",
    "terminal_stderr",
]

#: seeds the rule refuses, with the error each raises
REFUSED_SEEDS: tuple[tuple[Any, type[Exception]], ...] = (
    ("3", TypeError),
    (1.5, TypeError),
    (True, TypeError),
    (-1, ValueError),
)


def accepted_seeds() -> list[Any]:
    """Seeds the rule accepts: ints, numpy integers, ``None`` and a (fresh) Generator."""
    return [0, 3, np.int64(3), np.uint8(7), None, np.random.default_rng(1)]


def assert_follows_seed_rule(call: Callable[[Any], Any], name: str = "seed") -> None:
    """Run ``call(seed)`` with every accepted seed, and check that every refused one raises
    the rule's error, whose message starts with ``"<name> must be"``.

    >>> from icml26_shared.checks import rng_from_seed
    >>> assert_follows_seed_rule(lambda s: rng_from_seed(s).random())
    """
    for seed in accepted_seeds():
        call(seed)
    for seed, error in REFUSED_SEEDS:
        try:
            call(seed)
        except error as exc:
            if not str(exc).startswith(f"{name} must be"):
                raise AssertionError(
                    f"seed={seed!r}: the error does not name {name}: {exc}"
                ) from exc
        else:
            raise AssertionError(f"seed={seed!r} was accepted; the seed rule refuses it")


def assert_import_is_light(module: str, heavy: Sequence[str]) -> None:
    """Import ``module`` in a fresh interpreter and fail if any of ``heavy`` got loaded.

    >>> assert_import_is_light("icml26_shared.checks", ["matplotlib"])
    """
    code = f"import sys, {module}; print(*(m for m in {tuple(heavy)!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout.split()
    if loaded:
        raise AssertionError(f"importing {module} loaded {', '.join(loaded)}")


class _Patcher(Protocol):
    def setattr(self, target: object, name: str, value: object) -> None: ...


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def terminal_stderr(monkeypatch: _Patcher, *, tty: bool) -> io.StringIO:
    """Replace ``sys.stderr`` (through pytest's ``monkeypatch``) by a fresh in-memory stream
    whose ``isatty()`` is ``tty``, and return it to read what was written."""
    err = _Terminal() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    return err
