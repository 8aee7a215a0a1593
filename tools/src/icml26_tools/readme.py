"""Write the repository README's package table and first line from the recorded runs.

The README holds two generated parts, rewritten by ``icml26 report --readme`` (and by
``icml26 reproduce --record``) and never edited by hand:

* its first line, ``# icml26: <N> ICML 2026 methods, ...``, where N counts the method packages
  present today (folders ``packages/<name>/`` with a ``pyproject.toml``);
* the table between ``<!-- packages-table:start -->`` and ``<!-- packages-table:end -->``: one
  row per package, its description from its ``pyproject.toml``, and from the package's records
  ``docs/quick_result.json`` and ``docs/full_result.json`` the checks passed and the date of
  each, with the headline of the newer run. The docs site's home page shows the same table
  (:func:`render_table` with the site's links), so the two never disagree.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from icml26_shared.experiment import ExperimentResult, escape_cell

__all__ = [
    "END",
    "START",
    "MethodPackage",
    "first_line",
    "method_packages",
    "records",
    "render_table",
    "update_readme",
]

START = "<!-- packages-table:start -->"
END = "<!-- packages-table:end -->"


@dataclass(frozen=True)
class MethodPackage:
    """A method package folder as the README lists it."""

    name: str
    module: str
    description: str
    folder: Path


def method_packages(root: Path) -> list[MethodPackage]:
    """Every ``packages/<name>/`` with a ``pyproject.toml``, sorted by name."""
    found = []
    for py in sorted((Path(root) / "packages").glob("*/pyproject.toml")):
        meta = tomllib.loads(py.read_text())
        project = meta.get("project", {})
        module = meta.get("tool", {}).get("uv", {}).get("build-backend", {}).get("module-name")
        name = project.get("name", py.parent.name)
        found.append(
            MethodPackage(
                name, module or name.replace("-", "_"), project.get("description", ""), py.parent
            )
        )
    return found


def first_line(n_methods: int) -> str:
    """The README's first line: how many methods exist today."""
    noun = "method" if n_methods == 1 else "methods"
    return f"# icml26: {n_methods} ICML 2026 {noun}, each an installable Python library"


def records(folder: Path) -> dict[str, ExperimentResult]:
    """A package's recorded runs, ``{"quick": ..., "full": ...}`` (a mode without a record is
    absent): ``docs/quick_result.json`` and ``docs/full_result.json``."""
    out = {}
    for mode in ("quick", "full"):
        path = Path(folder) / "docs" / f"{mode}_result.json"
        if path.is_file():
            out[mode] = ExperimentResult.from_json(path.read_text())
    return out


def _run_cell(result: ExperimentResult | None) -> str:
    if result is None:
        return "–"
    n_ok = sum(result.checks.values())
    day = result.date.split(" ")[0] if result.date else "undated"
    return f"{n_ok}/{len(result.checks)} checks, {day}"


def render_table(root: Path, link: Callable[[MethodPackage], str] | None = None) -> str:
    """The markdown table (header included) of every method package under ``root``, from its
    records. ``link`` gives a row's link target (default: the package's README in the
    repository)."""
    lines = [
        "| package | import | what it is | quick run | full run | headline (newer run) |",
        "|---|---|---|---|---|---|",
    ]
    for pkg in method_packages(root):
        runs = records(pkg.folder)
        newer = max(runs.values(), key=lambda r: (r.date, not r.quick), default=None)
        headline = "–"
        if newer is not None and newer.headline:
            headline = f"{newer.headline} ({'quick' if newer.quick else 'full'} run)"
        target = link(pkg) if link else pkg.folder.relative_to(root).as_posix() + "/README.md"
        lines.append(
            f"| [{pkg.name}]({target}) | `{pkg.module}` | {escape_cell(pkg.description)} | "
            f"{_run_cell(runs.get('quick'))} | {_run_cell(runs.get('full'))} | "
            f"{escape_cell(headline)} |"
        )
    return "\n".join(lines)


def update_readme(readme: Path, root: Path) -> str:
    """Rewrite ``readme``'s first line and the table between the markers; return the new text.

    Raises:
        ValueError: when the markers are missing or out of order.
    """
    text = Path(readme).read_text()
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{readme} must contain the markers {START} and {END} (in that order)")
    body = text[: start + len(START)] + "\n" + render_table(root) + "\n" + text[end:]
    head, _, rest = body.partition("\n")
    new = first_line(len(method_packages(root))) + "\n" + rest if head.startswith("# ") else body
    Path(readme).write_text(new)
    return new
