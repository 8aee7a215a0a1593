"""Risk models under audit: a protocol, a callable wrapper and a subprocess bridge.

A risk model maps a batch of windowed volumes ``(B, 1, D, H, W)`` float32 to ``(B,)`` risk
logits. :class:`SubprocessRiskModel` runs a command in another Python (e.g. the user's Sybil
environment, see ``adapters/sybil_adapter.py``): it writes the batch to ``input.npy``, runs
``cmd input.npy output.npy`` and reads ``(B,)`` logits back.
"""

from __future__ import annotations

import shlex
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["CallableRiskModel", "RiskModel", "SubprocessRiskModel", "evaluate_model"]


@runtime_checkable
class RiskModel(Protocol):
    """``model(batch)`` with ``batch`` float32 ``(B, 1, D, H, W)`` returns ``(B,)`` logits."""

    def __call__(self, batch: np.ndarray) -> np.ndarray: ...


def _model_name(model: Any) -> str:
    return str(getattr(model, "name", type(model).__name__))


def evaluate_model(model: Any, volumes: np.ndarray) -> np.ndarray:
    """Run ``model`` on ``volumes`` ``(B, D, H, W)`` and return checked ``(B,)`` float64 logits.

    Raises ``ValueError`` naming the model when the output is not finite or not ``(B,)``.
    """
    batch = np.ascontiguousarray(np.asarray(volumes, np.float32)[:, None])
    out = model(batch)
    if hasattr(out, "detach"):
        out = out.detach().cpu().numpy()
    arr = np.asarray(out, dtype=np.float64)
    if arr.shape == (len(batch), 1):
        arr = arr[:, 0]
    if arr.shape != (len(batch),):
        raise ValueError(
            f"model {_model_name(model)!r} must return shape ({len(batch)},) logits for a batch "
            f"of {len(batch)}, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"model {_model_name(model)!r} returned non-finite logits (NaN/inf) for "
            f"{int((~np.isfinite(arr)).sum())} of {len(batch)} volumes"
        )
    return arr


class CallableRiskModel:
    """Wrap ``fn(batch) -> logits`` (numpy or torch in, numpy/torch/list out) as a RiskModel.

    >>> m = CallableRiskModel(lambda b: b.mean(axis=(1, 2, 3, 4)), name="mean")
    >>> m(np.zeros((2, 1, 4, 4, 4), np.float32)).tolist()
    [0.0, 0.0]
    """

    def __init__(self, fn: Callable[[np.ndarray], Any], name: str = "callable") -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        self.fn = fn
        self.name = name

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return evaluate_model(self.fn, np.asarray(batch, np.float32)[:, 0]).astype(np.float64)


class SubprocessRiskModel:
    """A model living in another environment, reached through ``.npy`` files.

    Each call writes ``batch`` (float32 ``(B, 1, D, H, W)``) to a temporary ``input.npy`` and runs
    ``cmd + [input.npy, output.npy]``; the command must write ``(B,)`` logits to ``output.npy``.
    A nonzero exit, a missing output, NaN or a wrong shape raise ``RuntimeError`` /
    ``ValueError`` with the command's stderr tail.

    Args:
        cmd: the command, as a list or a shell-like string (split with :func:`shlex.split`).
        timeout: seconds per call.
    """

    def __init__(self, cmd: Sequence[str] | str, *, timeout: float = 600.0, name: str = "") -> None:
        parts = shlex.split(cmd) if isinstance(cmd, str) else [str(c) for c in cmd]
        if not parts:
            raise ValueError("cmd must name a command, got an empty command")
        self.cmd = parts
        self.timeout = float(timeout)
        self.name = name or Path(parts[-1]).name

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        batch = np.ascontiguousarray(np.asarray(batch, np.float32))
        if batch.ndim != 5 or batch.shape[1] != 1:
            raise ValueError(f"batch must have shape (B, 1, D, H, W), got {batch.shape}")
        with tempfile.TemporaryDirectory(prefix="shnap-") as tmp:
            inp, outp = Path(tmp) / "input.npy", Path(tmp) / "output.npy"
            np.save(inp, batch)
            try:
                proc = subprocess.run(
                    [*self.cmd, str(inp), str(outp)],
                    capture_output=True,
                    text=True,
                    timeout=self.timeout,
                    check=False,
                )
            except FileNotFoundError as exc:
                raise RuntimeError(f"cmd {self.cmd!r} could not be started: {exc}") from exc
            if proc.returncode != 0:
                raise RuntimeError(
                    f"cmd {self.cmd!r} exited with status {proc.returncode}; stderr tail: "
                    f"{proc.stderr[-800:]!r}"
                )
            if not outp.is_file():
                raise RuntimeError(f"cmd {self.cmd!r} exited 0 but wrote no {outp.name}")
            out = np.load(outp, allow_pickle=False)
        arr = np.asarray(out, np.float64).reshape(-1) if np.ndim(out) == 2 else np.asarray(out)
        if arr.shape != (len(batch),):
            raise ValueError(
                f"cmd {self.cmd!r} must write ({len(batch)},) logits, got shape {np.shape(out)}"
            )
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"cmd {self.cmd!r} returned non-finite logits (NaN/inf)")
        return arr.astype(np.float64)
