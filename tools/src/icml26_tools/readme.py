"""Write the repository README's package table and first line from the saved result files.

The README holds two generated parts, rewritten by ``icml26 report --readme`` and never edited
by hand:

* its first line, ``# icml26: <N> ICML 2026 methods, ...``, where N counts the method packages
  present today (folders ``packages/<name>/`` with a ``pyproject.toml``);
* the table between ``<!-- packages-table:start -->`` and ``<!-- packages-table:end -->``: one
  row per package, its description from its ``pyproject.toml``, and its status and headline
  from ``reports/<name>/result.json`` (what ``icml26 reproduce`` saved; "not run here" when
  there is none).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from icml26_shared.experiment import ExperimentResult, escape_cell

__all__ = [
    "END",
    "START",
    "MethodPackage",
    "first_line",
    "method_packages",
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


def _status(result: ExperimentResult | None, error: bool) -> tuple[str, str]:
    if error:
        return "reproduce raised (see reports/REPORT.md)", "–"
    if result is None:
        return "not run here", "–"
    mode = "quick" if result.quick else "full"
    if not result.checks:
        status = f"{mode} run: no checks recorded"
    else:
        failed = [k for k, v in result.checks.items() if not v]
        n_ok = len(result.checks) - len(failed)
        status = f"{mode} run: {n_ok}/{len(result.checks)} checks pass"
    return status, result.headline or "–"


def render_table(root: Path, reports: Path) -> str:
    """The markdown table (header included) for every method package under ``root``."""
    lines = [
        "| package | import | what it is | status (`icml26 reproduce`) | headline (measured here) |",
        "|---|---|---|---|---|",
    ]
    for pkg in method_packages(root):
        path = Path(reports) / pkg.name / "result.json"
        result = ExperimentResult.from_json(path.read_text()) if path.is_file() else None
        error = (Path(reports) / pkg.name / "error.txt").is_file() and result is None
        status, headline = _status(result, error)
        link = pkg.folder.relative_to(root).as_posix() + "/README.md"
        lines.append(
            f"| [{pkg.name}]({link}) | `{pkg.module}` | {escape_cell(pkg.description)} | "
            f"{escape_cell(status)} | {escape_cell(headline)} |"
        )
    return "\n".join(lines)


def update_readme(readme: Path, root: Path, reports: Path) -> str:
    """Rewrite ``readme``'s first line and the table between the markers; return the new text.

    Raises:
        ValueError: when the markers are missing or out of order.
    """
    text = Path(readme).read_text()
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{readme} must contain the markers {START} and {END} (in that order)")
    body = text[: start + len(START)] + "\n" + render_table(root, reports) + "\n" + text[end:]
    head, _, rest = body.partition("\n")
    new = first_line(len(method_packages(root))) + "\n" + rest if head.startswith("# ") else body
    Path(readme).write_text(new)
    return new
