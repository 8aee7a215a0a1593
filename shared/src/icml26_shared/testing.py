"""Test helpers the packages share (no pytest needed at import).

:func:`assert_follows_seed_rule` checks one public entry point against the seed rule of
:func:`icml26_shared.checks.check_seed`: every accepted kind of seed runs, every refused kind
raises the rule's error naming the argument.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["REFUSED_SEEDS", "accepted_seeds", "assert_follows_seed_rule"]

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
