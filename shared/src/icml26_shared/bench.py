"""One timing helper and one JSON layout for every package's ``benchmarks/run.py``.

A benchmark times our method and its peers on the same inputs in one run and reports ratios::

    from icml26_shared.bench import BenchReport, time_call

    report = BenchReport("mypkg", quick=args.quick)
    ours = time_call(lambda: ours_fn(x), repeats=5)
    peer = time_call(lambda: peer_fn(x), repeats=5)
    report.add("n=500", "ours", ours, max_err=1e-9)
    report.add("n=500", "peer", peer)
    report.ratio("n=500", "ours", "peer")        # peer time / our time (> 1: we are faster)
    print(report.to_text())
    report.write(args.out)

The JSON file (``reports/bench/<package>.json``) holds ``package``, ``quick``, ``machine``
(platform, CPU count, load average at the start and the end: a figure measured under load says
so), ``rows`` (case, method, median/min seconds, repeats, extra fields) and ``ratios``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, is_dataclass
from pathlib import Path
from typing import Any

__all__ = ["BenchReport", "Timing", "load_average", "time_call"]


@dataclass(frozen=True)
class Timing:
    """Wall-clock seconds of repeated calls: ``median`` is the reported figure."""

    median: float
    min: float
    times: tuple[float, ...]

    @property
    def repeats(self) -> int:
        return len(self.times)


def time_call(fn: Callable[[], Any], *, repeats: int = 5, warmup: int = 1) -> Timing:
    """Time ``fn()`` ``repeats`` times after ``warmup`` untimed calls (``time.perf_counter``).

    Args:
        fn: a zero-argument callable; its result is discarded (block on asynchronous results,
            e.g. ``jax.block_until_ready``, inside ``fn``).
        repeats: timed calls, at least 1.
        warmup: untimed calls first (compilation, caches), at least 0.
    """
    if int(repeats) != repeats or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1, got {repeats!r}")
    if int(warmup) != warmup or warmup < 0:
        raise ValueError(f"warmup must be an integer >= 0, got {warmup!r}")
    for _ in range(int(warmup)):
        fn()
    times = []
    for _ in range(int(repeats)):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return Timing(statistics.median(times), min(times), tuple(times))


def load_average() -> float | None:
    """One-minute load average (``None`` where the platform has none)."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


@dataclass
class BenchReport:
    """Rows of timings (and quality figures) of several methods per case, and their ratios."""

    package: str
    quick: bool = False
    rows: list[dict[str, Any]] = field(default_factory=list)
    ratios: list[dict[str, Any]] = field(default_factory=list)
    machine: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.machine = {
            "platform": platform.platform(),
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_start": load_average(),
        }

    def add(self, case: str, method: str, timing: Timing | float | None, **extra: Any) -> None:
        """Record ``method`` on ``case``: a :class:`Timing`, plain seconds, or ``None`` (quality
        only); ``extra`` holds any other figure (errors, coverage, widths)."""
        if isinstance(timing, Timing):
            row = {"seconds": timing.median, "min_seconds": timing.min, "repeats": timing.repeats}
        elif timing is None:
            row = {"seconds": None}
        else:
            row = {"seconds": float(timing), "min_seconds": float(timing), "repeats": 1}
        self.rows.append({"case": case, "method": method, **row, **extra})

    def seconds(self, case: str, method: str) -> float:
        for r in self.rows:
            if r["case"] == case and r["method"] == method and r["seconds"] is not None:
                return float(r["seconds"])
        raise KeyError(f"no timing recorded for case={case!r}, method={method!r}")

    def ratio(self, case: str, ours: str, peer: str) -> float:
        """Record and return ``seconds(peer) / seconds(ours)`` (> 1 means ours is faster)."""
        value = self.seconds(case, peer) / self.seconds(case, ours)
        self.ratios.append({"case": case, "ours": ours, "peer": peer, "speedup": value})
        return value

    def to_dict(self) -> dict[str, Any]:
        machine = {**self.machine, "load_end": load_average()}
        return {
            "package": self.package,
            "quick": self.quick,
            "machine": machine,
            "rows": self.rows,
            "ratios": self.ratios,
        }

    def to_text(self) -> str:
        lines = [f"{self.package} benchmark ({'quick' if self.quick else 'full'})"]
        for r in self.rows:
            extra = {
                k: v
                for k, v in r.items()
                if k not in {"case", "method", "seconds", "min_seconds", "repeats"}
            }
            sec = "–" if r["seconds"] is None else f"{r['seconds'] * 1e3:.3f} ms"
            tail = "  ".join(f"{k}={_short(v)}" for k, v in extra.items())
            lines.append(f"  {r['case']:<24} {r['method']:<24} {sec:>14}  {tail}".rstrip())
        for q in self.ratios:
            lines.append(f"  {q['case']}: {q['ours']} is {q['speedup']:.2f}x {q['peer']}'s speed")
        la = self.machine.get("load_start")
        if la is not None:
            lines.append(f"  load average at start {la:.2f} on {self.machine['cpu_count']} cores")
        return "\n".join(lines)

    def write(self, path: Path | str) -> Path:
        """Write the report as JSON (non-finite numbers as strings, never bare NaN)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(_finite(self.to_dict()), indent=2, allow_nan=False))
        return path


def _short(v: Any) -> str:
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def _finite(obj: Any) -> Any:
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    if is_dataclass(obj) and not isinstance(obj, type):
        return _finite(asdict(obj))
    return obj
