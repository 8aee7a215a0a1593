"""JSON checkpoints with one layout for every streaming estimator.

A checkpoint is strict JSON (``json.dumps(..., allow_nan=False)``): non-finite floats are
encoded explicitly as ``{"__float__": "inf"}`` (or ``"-inf"``, ``"nan"``), numpy arrays as
``{"__ndarray__": [...], "dtype": "float64", "shape": [...]}``, so a state survives any JSON
reader bit for bit. Loading compares the hyperparameters stored with the state against the
object's own and refuses a mismatch, naming the field (a state saved with ``gamma=0.5`` must not
silently continue under ``gamma=0.001``).

>>> import numpy as np
>>> text = dumps_state({"q": np.array([1.0, np.inf]), "t": 3})
>>> loads_state(text)["q"]
array([ 1., inf])
>>> check_same_config({"gamma": 0.5}, {"gamma": 0.001}, owner="OnlineConformal")
Traceback (most recent call last):
...
ValueError: state was saved with gamma=0.5, but this OnlineConformal has gamma=0.001: build it with the saved hyperparameters
"""

from __future__ import annotations

import json
import math
import os
import pickle
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "StateFileError",
    "check_same_config",
    "check_state_keys",
    "decode_state",
    "dumps_state",
    "encode_state",
    "load_state_file",
    "loads_state",
    "loads_state_text",
    "read_json",
    "reading",
    "save_state_file",
]


class StateFileError(ValueError):
    """A saved file (checkpoint, weights, arrays) that is truncated, corrupt or of another kind.

    The message names the file and says what it was read as and what went wrong.
    """


# What the readers beneath us raise on a truncated or foreign file: json (ValueError),
# numpy's npz (BadZipFile, ValueError, OSError, KeyError for a missing array), torch.load
# (RuntimeError "PytorchStreamReader failed", UnpicklingError, EOFError), safetensors
# (its own error, a subclass of Exception, caught by the owner where it is used).
_READ_ERRORS = (
    ValueError,
    OSError,
    EOFError,
    KeyError,
    IndexError,
    TypeError,
    RuntimeError,
    zipfile.BadZipFile,
    pickle.UnpicklingError,
)


@contextmanager
def reading(path: str | os.PathLike[str], what: str) -> Iterator[None]:
    """Turn any error a reader raises inside the block into :class:`StateFileError` naming
    ``path`` and ``what`` it was read as (a missing file stays ``FileNotFoundError``).

    >>> with reading("model.json", "a geomem checkpoint"):
    ...     json.loads('{"weights": [1, 2')
    Traceback (most recent call last):
    ...
    icml26_shared.state.StateFileError: model.json: cannot read it as a geomem checkpoint: the file is truncated, corrupt or of another kind (JSONDecodeError: Expecting ',' delimiter: line 1 column 18 (char 17))
    """
    try:
        yield
    except (StateFileError, FileNotFoundError, IsADirectoryError):
        raise
    except _READ_ERRORS as exc:
        raise StateFileError(
            f"{os.fspath(path)}: cannot read it as {what}: the file is truncated, corrupt or of "
            f"another kind ({type(exc).__name__}: {exc})"
        ) from exc


def read_json(path: str | os.PathLike[str], what: str = "a JSON state file") -> Any:
    """Read a JSON file written by :func:`dumps_state` (or plain JSON), naming the file when it
    is truncated or not JSON."""
    with reading(path, what):
        return loads_state(Path(path).read_text(encoding="utf-8"))


def _enc_float(x: float) -> Any:
    if math.isfinite(x):
        return x
    return {"__float__": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}


def encode_state(obj: Any) -> Any:
    """``obj`` as plain JSON values: dicts, lists, strings, ints, finite floats (see module doc)."""
    if isinstance(obj, np.ndarray):
        return {
            "__ndarray__": encode_state(obj.tolist()),
            "dtype": str(obj.dtype),
            "shape": list(obj.shape),
        }
    if isinstance(obj, bool | np.bool_):
        return bool(obj)
    if isinstance(obj, int | np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        return _enc_float(float(obj))
    if isinstance(obj, Mapping):
        return {str(k): encode_state(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [encode_state(v) for v in obj]
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(
        f"state must hold numbers, strings, lists, dicts or arrays, got {type(obj).__name__}"
    )


def decode_state(obj: Any) -> Any:
    """Inverse of :func:`encode_state`."""
    if isinstance(obj, dict):
        if set(obj) == {"__float__"}:
            return float(obj["__float__"])
        if "__ndarray__" in obj:
            data = decode_state(obj["__ndarray__"])
            return np.array(data, dtype=obj["dtype"]).reshape(obj["shape"])
        return {k: decode_state(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [decode_state(v) for v in obj]
    return obj


def dumps_state(obj: Any) -> str:
    """Strict JSON text of a state (``allow_nan=False``; non-finite floats encoded)."""
    return json.dumps(encode_state(obj), allow_nan=False, sort_keys=True)


def loads_state(text: str) -> Any:
    """Inverse of :func:`dumps_state`."""
    return decode_state(json.loads(text))


def check_same_config(saved: Mapping[str, Any], current: Mapping[str, Any], *, owner: str) -> None:
    """Raise ``ValueError`` naming the first hyperparameter where ``saved`` and ``current`` differ.

    A key present on one side only counts as a difference (``<unset>`` on the other).
    """
    for key in sorted(set(saved) | set(current)):
        a = decode_state(saved.get(key, "<unset>"))
        b = current.get(key, "<unset>")
        same = a == b
        if isinstance(same, np.ndarray) or not isinstance(same, bool):
            same = bool(np.array_equal(np.asarray(a), np.asarray(b)))
        if not same:
            raise ValueError(
                f"state was saved with {key}={a!r}, but this {owner} has {key}={b!r}: "
                "build it with the saved hyperparameters"
            )


def loads_state_text(text: Any, what: str, *, caller: str = "from_json") -> Any:
    """:func:`loads_state` of the text a user passed to ``caller`` (an estimator's
    ``from_json``), refusing a non-string and naming ``what`` when the text is truncated."""
    if not isinstance(text, str | bytes):
        raise TypeError(f"text must be the str of to_json(), got {type(text).__name__}")
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    with reading(f"the JSON text given to {caller}", what):
        return loads_state(text)


def save_state_file(path: str | os.PathLike[str], text: str) -> Path:
    """Write a state's JSON ``text`` to ``path`` (UTF-8); returns the path."""
    out = Path(path)
    out.write_text(text, encoding="utf-8")
    return out


def load_state_file(path: str | os.PathLike[str], what: str, build: Any) -> Any:
    """``build(state)`` of the JSON state in ``path``; a truncated, non-JSON or foreign file
    (``build`` raising ``ValueError``, ``KeyError`` or ``TypeError``) raises
    :class:`StateFileError` naming the file. A state saved with other hyperparameters keeps the
    error of :func:`check_same_config`, which names the field."""
    state = read_json(path, what)
    try:
        return build(state)
    except (ValueError, KeyError, TypeError) as exc:
        if "state was saved with" in str(exc):
            raise
        raise StateFileError(f"{os.fspath(path)}: cannot read it as {what}: {exc}") from None


def check_state_keys(state: Any, keys: frozenset[str] | set[str], what: str) -> None:
    """Refuse a state that is not a dict or lacks one of ``keys`` (the state of something
    else), naming ``what`` it should be and the missing keys."""
    if not isinstance(state, dict):
        raise StateFileError(f"state must be the dict of state_dict(), got {type(state).__name__}")
    missing = sorted(set(keys) - set(state))
    if missing:
        raise StateFileError(
            f"state is not {what} (no {', '.join(missing)}): it was saved by something else"
        )
