"""Experiment configs: frozen dataclasses with named fields, ``QUICK`` / ``FULL`` presets, and
``key=value`` overrides from the command line.

A package's reproduce takes one config object instead of a ``quick`` flag::

    @dataclass(frozen=True)
    class Config:
        n_seeds: int = 200
        alphas: tuple[float, ...] = (0.05, 0.1)

    QUICK = Config(n_seeds=20)
    FULL = Config()

``python -m pkg reproduce --quick --set n_seeds=50`` runs ``override(QUICK, ["n_seeds=50"])``:
each value is parsed by its field's annotation (``int``, ``float``, ``bool``, ``str``, ``Path``,
``Literal[...]``, ``X | None``, ``tuple[T, ...]`` as ``a,b,c``), unknown keys are refused with
the known ones listed, and the dataclass's own ``__post_init__`` validates the result.
:func:`config_dict` is what ``result.json`` records.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["config_dict", "override", "parse_assignment"]

C = TypeVar("C")

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _require_config(config: object) -> None:
    if not (dataclasses.is_dataclass(config) and not isinstance(config, type)):
        raise TypeError(f"config must be a dataclass instance, got {type(config).__name__}")


def config_dict(config: object) -> dict[str, Any]:
    """The config's fields as JSON-ready values (tuples become lists, paths strings).

    >>> @dataclasses.dataclass(frozen=True)
    ... class C:
    ...     n: int = 3
    ...     xs: tuple[float, ...] = (0.1, 0.2)
    >>> config_dict(C())
    {'n': 3, 'xs': [0.1, 0.2]}
    """
    _require_config(config)

    def enc(v: Any) -> Any:
        if isinstance(v, Path):
            return str(v)
        if isinstance(v, tuple | list):
            return [enc(x) for x in v]
        if isinstance(v, Mapping):
            return {str(k): enc(x) for k, x in v.items()}
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return config_dict(v)
        return v

    return {f.name: enc(getattr(config, f.name)) for f in dataclasses.fields(config)}  # type: ignore[arg-type]


def parse_assignment(text: str) -> tuple[str, str]:
    """Split ``"key=value"`` (the value may contain ``=``); refuse anything else."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--set expects key=value, got {text!r}")
    return key.strip(), value.strip()


def _parse(value: str, hint: Any, key: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if type(None) in args and value.lower() in ("none", "null", ""):
            return None
        errors = []
        for arm in (a for a in args if a is not type(None)):
            try:
                return _parse(value, arm, key)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError("; ".join(errors))
    if origin is typing.Literal:
        for choice in args:
            if str(choice) == value:
                return choice
        raise ValueError(f"{key} must be one of {', '.join(map(str, args))}, got {value!r}")
    if origin is tuple:
        parts = [p for p in (s.strip() for s in value.split(",")) if p] if value else []
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_parse(p, args[0], key) for p in parts)
        if len(parts) != len(args):
            raise ValueError(f"{key} needs {len(args)} comma-separated values, got {value!r}")
        return tuple(_parse(p, a, key) for p, a in zip(parts, args))
    if hint is bool:
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
        raise ValueError(f"{key} must be true or false, got {value!r}")
    if hint is int:
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"{key} must be an integer, got {value!r}") from None
    if hint is float:
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"{key} must be a number, got {value!r}") from None
    if hint is str:
        return value
    if hint is Path:
        return Path(value)
    raise ValueError(f"{key} has type {hint!r}, which --set cannot parse")


def override(config: C, assignments: Sequence[str] | Mapping[str, Any]) -> C:
    """A copy of the frozen dataclass ``config`` with fields replaced.

    ``assignments`` is a list of ``"key=value"`` strings (parsed by each field's annotation) or
    a mapping of already-typed values. Unknown keys raise ``ValueError`` listing the known
    fields; the copy goes through the dataclass's ``__post_init__`` (its own validation).

    >>> @dataclasses.dataclass(frozen=True)
    ... class C:
    ...     n: int = 3
    ...     xs: tuple[float, ...] = (0.1, 0.2)
    >>> override(C(), ["n=5", "xs=0.5,1"])
    C(n=5, xs=(0.5, 1.0))
    """
    _require_config(config)
    fields = {f.name: f for f in dataclasses.fields(config)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(type(config))
    if isinstance(assignments, Mapping):
        pairs: list[tuple[str, Any]] = list(assignments.items())
        parse = False
    else:
        pairs = [parse_assignment(a) for a in assignments]
        parse = True
    changes: dict[str, Any] = {}
    for key, value in pairs:
        if key not in fields:
            raise ValueError(
                f"unknown config key {key!r} for {type(config).__name__}; "
                f"known keys: {', '.join(fields)}"
            )
        changes[key] = _parse(value, hints[key], key) if parse else value
    return dataclasses.replace(config, **changes)  # type: ignore[type-var]
