"""The small protocol every package's ``reproduce`` follows.

A package exposes one :class:`Experiment` object, registered under the entry-point group
``icml26.experiments`` (``[project.entry-points."icml26.experiments"]`` in its pyproject), and a
``__main__`` that calls :func:`main`::

    # src/mypkg/_reproduce.py
    @dataclass(frozen=True)
    class Config:
        n_seeds: int = 200

    QUICK, FULL = Config(n_seeds=20), Config()

    def reproduce(config: Config, out_dir: Path, progress: bool | None) -> ExperimentResult: ...
    EXPERIMENT = Experiment("mypkg", "one line on what is compared", reproduce, QUICK, FULL)

    # src/mypkg/__main__.py
    from icml26_shared.experiment import main
    main("mypkg._reproduce:EXPERIMENT")

``reproduce`` builds :class:`ResultTable` objects (rows = methods by id with a display label,
columns = metrics, each cell a number or a mean ± Monte Carlo standard error), saves PNG figures
into ``out_dir`` and records its acceptance checks with :meth:`ExperimentResult.check` (the
measured value, the comparison and the bound). Rendering (terminal text, markdown, JSON) happens here, never inside
the algorithms.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

__all__ = [
    "Check",
    "Estimate",
    "Experiment",
    "ExperimentResult",
    "ResultTable",
    "available_cores",
    "cpu_share",
    "escape_cell",
    "machine_description",
    "main",
    "parallel_map",
    "progress",
    "progress_enabled",
    "require_matplotlib",
    "save_figure",
    "say",
    "thread_env",
]

T = TypeVar("T")


@dataclass(frozen=True)
class Estimate:
    """A mean with its Monte Carlo standard error (``se = 0`` for a single measurement)."""

    mean: float
    se: float = 0.0

    @classmethod
    def of(cls, values: Iterable[float] | float) -> Estimate:
        """Mean ± standard error ``std(ddof=1)/sqrt(n)`` of repeated measurements."""
        v = np.atleast_1d(np.asarray(values, dtype=np.float64))
        se = float(np.std(v, ddof=1) / math.sqrt(v.size)) if v.size > 1 else 0.0
        return cls(float(np.mean(v)), se)

    def format(self, digits: int = 3) -> str:
        if not math.isfinite(self.mean):
            return str(self.mean)
        body = _fmt_number(self.mean, digits)
        return body if self.se == 0 else f"{body} ± {_fmt_number(self.se, digits)}"


def escape_cell(text: str) -> str:
    """Make ``text`` safe inside a markdown table cell (pipes escaped, newlines flattened)."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _fmt_number(x: float, digits: int = 3) -> str:
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int | np.integer):
        return str(int(x))
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x != 0 and (abs(x) >= 1e5 or abs(x) < 10 ** (-digits)):
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}" if abs(x) >= 10**digits else f"{x:.{digits}f}".rstrip("0").rstrip(".")


Cell = Estimate | float | int | str | bool | None


@dataclass
class ResultTable:
    """Rows = methods, columns = metrics. Cells: numbers, :class:`Estimate`, strings or ``None``."""

    title: str
    columns: list[str]
    rows: dict[str, dict[str, Cell]] = field(default_factory=dict)
    note: str = ""
    #: display labels of rows whose id is not what the table should show
    labels: dict[str, str] = field(default_factory=dict)

    def add_row(
        self,
        method: str,
        cells: Mapping[str, Cell | Sequence[float]] | None = None,
        /,
        *,
        label: str | None = None,
        **named: Cell | Sequence[float],
    ) -> None:
        """Add the row of ``method`` (a short stable id; ``label``, default the id, is what the
        table shows). Cells come as a mapping ``{column: value}`` and/or as keywords; a
        sequence of numbers becomes an :class:`Estimate` (mean ± s.e.).

        >>> t = ResultTable("demo", ["coverage", "mean width"])
        >>> t.add_row("ours", {"coverage": 0.9, "mean width": [1.0, 1.2]}, label="UP-OCP (ours)")
        >>> t.rows["ours"]["coverage"], t.label("ours")
        (0.9, 'UP-OCP (ours)')
        """
        merged: dict[str, Cell | Sequence[float]] = dict(cells or {})
        twice = set(merged) & set(named)
        if twice:
            raise ValueError(f"cells given both in the mapping and as keywords: {sorted(twice)}")
        merged.update(named)
        unknown = set(merged) - set(self.columns)
        if unknown:
            raise ValueError(f"cells must be among columns {self.columns}, got {sorted(unknown)}")
        row: dict[str, Cell] = {}
        for k, v in merged.items():
            if isinstance(v, list | tuple | np.ndarray):
                v = Estimate.of(v)
            row[k] = v  # type: ignore[assignment]
        self.rows[method] = row
        if label is not None and label != method:
            self.labels[method] = label

    def label(self, method: str) -> str:
        """What the table shows for the row ``method``."""
        return self.labels.get(method, method)

    def _cell(self, method: str, col: str, digits: int) -> str:
        v = self.rows[method].get(col)
        if v is None:
            return "–"
        if isinstance(v, Estimate):
            return v.format(digits)
        if isinstance(v, str):
            return v
        return _fmt_number(v, digits)

    def to_markdown(self, digits: int = 3) -> str:
        head = "| method | " + " | ".join(escape_cell(c) for c in self.columns) + " |"
        sep = "|---|" + "---|" * len(self.columns)
        body = [
            f"| {escape_cell(self.label(m))} | "
            + " | ".join(escape_cell(self._cell(m, c, digits)) for c in self.columns)
            + " |"
            for m in self.rows
        ]
        out = [f"**{self.title}**", "", head, sep, *body]
        if self.note:
            out += ["", self.note]
        return "\n".join(out)

    def to_text(self, digits: int = 3) -> str:
        cells = [["method", *self.columns]]
        cells += [
            [self.label(m), *(self._cell(m, c, digits) for c in self.columns)] for m in self.rows
        ]
        widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
        lines = ["  ".join(s.ljust(w) for s, w in zip(r, widths)) for r in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        text = "\n".join([self.title, *lines])
        return text + (f"\n{self.note}" if self.note else "")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ResultTable:
        """Inverse of :meth:`to_dict` (``{"mean", "se"}`` cells become :class:`Estimate`)."""

        def dec(v: Any) -> Cell:
            return Estimate(**v) if isinstance(v, dict) else v

        rows = {m: {k: dec(v) for k, v in r.items()} for m, r in data["rows"].items()}
        labels = {str(k): str(v) for k, v in data.get("labels", {}).items()}
        return cls(data["title"], list(data["columns"]), rows, data.get("note", ""), labels)

    def to_dict(self) -> dict[str, Any]:
        def enc(v: Cell) -> Any:
            return asdict(v) if isinstance(v, Estimate) else v

        rows = {m: {k: enc(v) for k, v in r.items()} for m, r in self.rows.items()}
        out = {"title": self.title, "columns": self.columns, "rows": rows, "note": self.note}
        if self.labels:
            out["labels"] = dict(self.labels)
        return out


_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": lambda v, b: v <= b,
    "<": lambda v, b: v < b,
    ">=": lambda v, b: v >= b,
    ">": lambda v, b: v > b,
    "==": lambda v, b: v == b,
}


@dataclass(frozen=True)
class Check:
    """One acceptance check that compares a measured ``value`` with a ``bound``: the record says
    by how much it passed or failed, not only whether."""

    id: str
    label: str
    value: float
    op: str
    bound: float
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "value": self.value,
            "op": self.op,
            "bound": self.bound,
            "passed": self.passed,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Check:
        return cls(
            str(d["id"]),
            str(d["label"]),
            float(d["value"]),
            str(d["op"]),
            float(d["bound"]),
            bool(d["passed"]),
        )


@dataclass
class ExperimentResult:
    """What ``reproduce`` returns: tables, figure paths, named acceptance checks, notes."""

    package: str
    title: str
    tables: list[ResultTable] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    checks: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    headline: str = ""
    seconds: float = 0.0
    quick: bool = False
    #: when and where the run happened (set by :meth:`Experiment.run`)
    date: str = ""
    machine: str = ""
    #: the source commit (``git describe``-style short hash, ``+dirty`` when the tree differed)
    #: and the CPU's vector capability (what :func:`cpu_capability` reads)
    commit: str = ""
    cpu: str = ""
    #: the checks recorded by :meth:`check`, with their values and bounds (also in ``checks``)
    details: list[Check] = field(default_factory=list)
    #: the config the run used (:func:`icml26_shared.config.config_dict`) and the ``--set``
    #: overrides applied to its preset
    config: dict[str, Any] = field(default_factory=dict)
    overrides: list[str] = field(default_factory=list)

    def check(self, id: str, value: float, op: str, bound: float, label: str = "") -> bool:
        """Record the acceptance check ``value <op> bound`` under a short stable ``id``; returns
        whether it passed. ``label`` (default: ``id``) is what tables show; the check also
        lands in :attr:`checks` under it, as a plain pass/fail.

        >>> r = ExperimentResult("pkg", "title")
        >>> r.check("cov", 0.893, ">=", 0.88, "coverage >= 0.88")
        True
        >>> r.details[0].value, r.checks["coverage >= 0.88"]
        (0.893, True)
        """
        if op not in _OPS:
            raise ValueError(f"op must be one of {', '.join(_OPS)}, got {op!r}")
        if any(c.id == id for c in self.details):
            raise ValueError(f"check id {id!r} is already recorded")
        v, b = float(value), float(bound)
        passed = bool(_OPS[op](v, b)) and not (math.isnan(v) or math.isnan(b))
        label = label or id
        self.details.append(Check(id, label, v, op, b, passed))
        self.checks[label] = passed
        return passed

    def measured(self, label: str) -> str:
        """``"value op bound"`` of the check shown as ``label`` (empty for a plain pass/fail)."""
        for c in self.details:
            if c.label == label:
                return f"{_fmt_number(c.value, 4)} {c.op} {_fmt_number(c.bound, 4)}"
        return ""

    def stamp(self, seconds: float, quick: bool) -> None:
        """Record how the run went: its ``seconds``, its mode, the UTC date and this machine
        (what :meth:`Experiment.run` does after ``reproduce``; staged runs call it with the
        sum of their stages' seconds)."""
        self.seconds = float(seconds)
        self.quick = bool(quick)
        self.date = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        self.machine = machine_description()
        self.commit = source_commit()
        self.cpu = cpu_capability()

    @property
    def passed(self) -> bool:
        """True when at least one check was recorded and every recorded check passed (a run
        that checked nothing has shown nothing)."""
        return bool(self.checks) and all(bool(v) for v in self.checks.values())

    def to_markdown(self, relative_to: Path | None = None) -> str:
        mode = "quick" if self.quick else "full"
        run = f"_{mode} run, {self.seconds:.1f} s_"
        if self.overrides:
            run += f" with `--set {' '.join(self.overrides)}`"
        out = [f"## {self.package}: {self.title}", "", run, ""]
        if self.headline:
            out += [f"Headline: {self.headline}", ""]
        for t in self.tables:
            out += [t.to_markdown(), ""]
        for fig in self.figures:
            path = Path(fig).resolve()
            base = relative_to.resolve() if relative_to else None
            shown = path.relative_to(base) if base and path.is_relative_to(base) else path
            out += [f"![{path.stem}]({shown.as_posix()})", ""]
        if self.checks:
            out += ["| check | measured | result |", "|---|---|---|"]
            out += [
                f"| {escape_cell(k)} | {escape_cell(self.measured(k) or '–')} | "
                f"{'pass' if v else 'FAIL'} |"
                for k, v in self.checks.items()
            ]
            out.append("")
        out += [f"- {n}" for n in self.notes]
        return "\n".join(out).rstrip() + "\n"

    def to_text(self) -> str:
        parts = [f"{self.package}: {self.title} ({self.seconds:.1f} s)"]
        parts += [t.to_text() for t in self.tables]
        parts += [
            f"check {k}: {'pass' if v else 'FAIL'}"
            + (f" ({self.measured(k)})" if self.measured(k) else "")
            for k, v in self.checks.items()
        ]
        parts += [f"figure: {f}" for f in self.figures]
        parts += [f"note: {n}" for n in self.notes]
        return "\n\n".join(parts)

    def to_json(self) -> str:
        data = {
            "package": self.package,
            "title": self.title,
            "headline": self.headline,
            "seconds": self.seconds,
            "quick": self.quick,
            "date": self.date,
            "machine": self.machine,
            "commit": self.commit,
            "cpu": self.cpu,
            "passed": self.passed,
            "checks": {k: bool(v) for k, v in self.checks.items()},
            "check_values": [c.to_dict() for c in self.details],
            "config": self.config,
            "overrides": self.overrides,
            "notes": self.notes,
            "figures": [str(f) for f in self.figures],
            "tables": [t.to_dict() for t in self.tables],
        }
        return json.dumps(data, indent=2, default=float)

    @classmethod
    def from_json(cls, text: str) -> ExperimentResult:
        """Inverse of :meth:`to_json` (used by ``icml26 report``)."""
        data = json.loads(text)
        return cls(
            package=data["package"],
            title=data["title"],
            tables=[ResultTable.from_dict(t) for t in data["tables"]],
            figures=[Path(f) for f in data["figures"]],
            checks={k: bool(v) for k, v in data["checks"].items()},
            notes=list(data["notes"]),
            headline=data.get("headline", ""),
            seconds=float(data.get("seconds", 0.0)),
            quick=bool(data.get("quick", False)),
            date=str(data.get("date") or ""),
            machine=str(data.get("machine") or ""),
            commit=str(data.get("commit") or ""),
            cpu=str(data.get("cpu") or ""),
            details=[Check.from_dict(c) for c in data.get("check_values", [])],
            config=dict(data.get("config") or {}),
            overrides=[str(o) for o in data.get("overrides") or []],
        )


#: ``reproduce(config, out_dir, progress)``; an experiment without presets takes ``quick: bool``
ReproduceFn = Callable[[Any, Path, "bool | None"], ExperimentResult]


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity; the CPU count elsewhere)."""
    import os

    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # pragma: no cover - not on Linux
        return max(os.cpu_count() or 1, 1)


#: the environment variables that size the thread pools of OpenMP (torch), MKL, OpenBLAS,
#: numexpr and Accelerate
THREAD_VARS = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)


def thread_env(threads: int, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with every thread pool set to
    ``threads`` (XLA's through ``XLA_FLAGS`` when ``threads == 1``)."""
    import os

    env = dict(os.environ if base is None else base)
    for var in THREAD_VARS:
        env[var] = str(threads)
    xla = env.get("XLA_FLAGS", "")
    if threads == 1 and "intra_op_parallelism_threads" not in xla:
        env["XLA_FLAGS"] = (
            xla + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        ).strip()
    env["PYTHONUNBUFFERED"] = "1"
    return env


def cpu_share() -> int:
    """How many cores an experiment may keep busy: the thread share ``OMP_NUM_THREADS`` that a
    runner such as ``icml26 reproduce --jobs`` gave it, else the cores this process may run on."""
    import os

    try:
        share = int(os.environ.get("OMP_NUM_THREADS", ""))
    except ValueError:
        share = 0
    return max(1, min(share, available_cores())) if share > 0 else available_cores()


def parallel_map(
    fn: Callable[[T], Any],
    items: Sequence[T],
    *,
    workers: int | None = None,
    progress_bar: bool = False,
    desc: str = "",
) -> list[Any]:
    """``[fn(x) for x in items]``, in up to ``workers`` (default :func:`cpu_share`) worker
    processes of one thread each, results in the order of ``items``.

    For independent runs of an experiment (seeds, arms of an ablation): on a 2-core machine
    two single-threaded runs side by side beat one run on two threads, whose thread pools
    wait on each other. ``fn`` and the items must be picklable (a module-level function, or a
    :func:`functools.partial` of one); workers are spawned with every thread pool set to one
    thread (:func:`thread_env`), so they do not oversubscribe the cores. With one worker, or
    one item, it runs here, in order. An exception in ``fn`` is raised here.
    """
    import os
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from multiprocessing import get_context

    items = list(items)
    n = min(cpu_share() if workers is None else int(workers), len(items))
    if n <= 1:
        return [fn(x) for x in progress(items, enabled=progress_bar, desc=desc)]
    saved = dict(os.environ)
    os.environ.update(thread_env(1))  # inherited by the spawned workers, then restored
    try:
        with ProcessPoolExecutor(n, mp_context=get_context("spawn")) as pool:
            futures = {pool.submit(fn, x): i for i, x in enumerate(items)}
            out: list[Any] = [None] * len(items)
            done = as_completed(futures)
            for fut in progress(done, enabled=progress_bar, total=len(items), desc=desc):
                out[futures[fut]] = fut.result()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return out


def _cpuinfo(*keys: str) -> str | None:
    """The value of the first ``/proc/cpuinfo`` line starting with one of ``keys`` (None when
    there is none, or no such file)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(keys):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine_description() -> str:
    """``"<cores> cores, <CPU model> (<SIMD capability>), <OS>"``: the SIMD level is torch's
    CPU capability where torch is already imported (AVX2, AVX512, ...)."""
    import platform

    n = available_cores()
    proc = _cpuinfo("model name") or platform.machine() or "unknown CPU"
    torch = sys.modules.get("torch")
    cap = ""
    if torch is not None:
        try:
            cap = f" ({torch.backends.cpu.get_cpu_capability()})"
        except Exception:  # pragma: no cover - very old torch
            cap = ""
    return f"{n} cores, {proc}{cap}, {platform.system()}"


def cpu_capability() -> str:
    """The vector instructions this CPU offers (``"AVX512 + native bf16"``, ``"AVX2"``, ...),
    capped by ``ATEN_CPU_CAPABILITY`` where it is set (how runs emulate an AVX2 machine)."""
    flags = set((_cpuinfo("flags", "Features") or "").split())
    level = "AVX512" if "avx512f" in flags else "AVX2" if "avx2" in flags else ""
    if not level and flags:
        level = "NEON" if {"asimd", "neon"} & flags else "baseline"
    forced = os.environ.get("ATEN_CPU_CAPABILITY", "").upper()
    if forced in ("AVX2", "DEFAULT") and level == "AVX512":
        return f"{forced} (forced on AVX512)"
    bf16 = {"avx512_bf16", "amx_bf16", "bf16"} & flags
    return f"{level} + native bf16" if bf16 else level


def source_commit() -> str:
    """The short hash of the git commit the packages run from, ``+dirty`` when the working
    tree differs from it; empty outside a git checkout (an installed wheel)."""
    import subprocess

    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=10,
        )
        if head.returncode != 0:
            return ""
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


@dataclass(frozen=True)
class Experiment:
    """A package's headline experiment, as registered under ``icml26.experiments``.

    Attributes:
        package: distribution name, e.g. ``"up-ocp"``.
        description: one line on what is compared.
        reproduce: ``reproduce(config, out_dir, progress) -> ExperimentResult``.
        quick_config, full_config: the two presets (frozen dataclasses, see
            :mod:`icml26_shared.config`); ``--quick`` picks the first, ``--set key=value``
            overrides fields of the one picked.
    """

    package: str
    description: str
    reproduce: ReproduceFn
    quick_config: Any = None
    full_config: Any = None

    def config(self, *, quick: bool = False, overrides: Sequence[str] = ()) -> Any:
        """The preset ``--quick`` picks (``quick``), with ``overrides`` applied."""
        from icml26_shared.config import override

        if self.full_config is None or self.quick_config is None:
            # an experiment without presets: reproduce takes the quick flag itself
            if overrides:
                raise ValueError(f"{self.package}'s reproduce has no config fields to --set")
            return quick
        base = self.quick_config if quick else self.full_config
        return override(base, list(overrides)) if overrides else base

    def run(
        self,
        *,
        quick: bool = False,
        out_dir: Path | str = "reports",
        progress: bool | None = None,
        overrides: Sequence[str] = (),
    ) -> ExperimentResult:
        """Run ``reproduce`` on the preset (and ``overrides``) into ``out_dir``, timing it, and
        save ``result.json`` (with the config) there. ``progress=None``: bars on a terminal,
        a line per stage when piped."""
        from icml26_shared.config import config_dict

        config = self.config(quick=quick, overrides=overrides)
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        result = self.reproduce(config, out, progress)
        result.stamp(time.perf_counter() - start, quick)
        if self.full_config is not None:
            result.config = config_dict(config)
        result.overrides = list(overrides)
        (out / "result.json").write_text(result.to_json())
        return result


def progress_enabled(enabled: bool | None) -> bool:
    """The one reading of a ``progress`` argument: ``None`` means "on when stderr is a terminal"."""
    if enabled is None:
        return sys.stderr.isatty()
    return bool(enabled)


def say(message: str, *, enabled: bool | None = None) -> None:
    """Write one line about a long stage to stderr (also when piped) unless ``enabled`` is
    False; long functions call it once per stage so a user sees what is running and for how
    long."""
    if enabled is not False:
        print(message, file=sys.stderr, flush=True)


def progress(
    iterable: Iterable[T],
    *,
    enabled: bool | None = False,
    total: int | None = None,
    desc: str = "",
) -> Iterator[T]:
    """Wrap ``iterable`` in a tqdm progress bar when ``enabled`` (silent by default).

    ``enabled=None``: a bar when stderr is a terminal, else one line when the loop starts and
    one when it ends (with its seconds), so piped output still shows the stage.
    """
    if enabled is False:
        yield from iterable
        return
    if enabled is None and not sys.stderr.isatty():
        n = total
        if n is None and isinstance(iterable, Sized):
            n = len(iterable)
        label = desc or "working"
        say(f"{label}: {n} steps..." if n is not None else f"{label}...")
        start = time.perf_counter()
        yield from iterable
        say(f"{label}: done in {time.perf_counter() - start:.1f} s")
        return
    from tqdm.auto import tqdm

    yield from tqdm(iterable, total=total, desc=desc, leave=False, file=sys.stderr)


def require_matplotlib(extra: str = "plot", package: str = "icml26-shared") -> Any:
    """Import matplotlib with the non-interactive Agg backend, or raise naming the extra."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(
            f"plotting needs matplotlib: install it with `pip install {package}[{extra}]`"
        ) from exc
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path | str, *, dpi: int = 120) -> Path:
    """Save a matplotlib figure as PNG at ``path`` and close it (frees its memory)."""
    import matplotlib.pyplot as plt

    path = Path(path)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _load(target: str | Experiment) -> Experiment:
    if isinstance(target, Experiment):
        return target
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def main(target: str | Experiment, argv: Sequence[str] | None = None) -> int:
    """Command line ``python -m <pkg> reproduce [--quick] [--set KEY=VALUE ...] [--out DIR]
    [--no-progress] [--show-config]``.

    ``target`` is the :class:`Experiment` or its ``"module:attribute"`` path (loaded lazily so
    ``python -m pkg --help`` stays fast).
    """
    parser = argparse.ArgumentParser(prog=f"python -m {str(target).split('.')[0]}")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("reproduce", help="run the headline comparison, print a table, save plots")
    rep.add_argument("--quick", action="store_true", help="reduced sizes (minutes on 2 cores)")
    rep.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a field of the config (repeatable; --show-config lists the fields)",
    )
    rep.add_argument("--out", default=None, help="output folder (default reports/<package>)")
    rep.add_argument("--no-progress", action="store_true", help="hide progress bars")
    rep.add_argument("--show-config", action="store_true", help="print the config and exit")
    args = parser.parse_args(argv)
    experiment = _load(target)
    try:
        config = experiment.config(quick=args.quick, overrides=args.set)
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
    if args.show_config:
        from icml26_shared.config import config_dict

        shown = config_dict(config) if experiment.full_config is not None else {"quick": config}
        print(json.dumps(shown, indent=2))
        return 0
    out = Path(args.out) if args.out else Path("reports") / experiment.package
    result = experiment.run(
        quick=args.quick,
        out_dir=out,
        progress=False if args.no_progress else None,
        overrides=args.set,
    )
    print(result.to_text())
    print(f"\nresults written to {out}/result.json")
    return 0 if result.passed else 1
