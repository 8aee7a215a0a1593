"""Render ``reports/REPORT.md`` from the ``result.json`` each experiment saved."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from icml26_shared.experiment import ExperimentResult, escape_cell

__all__ = ["collect_results", "write_report"]


def collect_results(out: Path) -> dict[str, ExperimentResult]:
    """Every ``<out>/<package>/result.json``, keyed by package, sorted."""
    found = {}
    for path in sorted(Path(out).glob("*/result.json")):
        result = ExperimentResult.from_json(path.read_text())
        found[result.package] = result
    return found


def write_report(
    out: Path,
    *,
    results: dict[str, ExperimentResult] | None = None,
    errors: dict[str, str] | None = None,
) -> Path:
    """Write ``<out>/REPORT.md``: a summary table, then one section per package.

    Args:
        out: the reports folder.
        results: results of this run; saved results under ``out`` fill in the other packages.
        errors: tracebacks of experiments that raised, shown in their own section.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    merged = collect_results(out)
    merged.update(results or {})
    errors = errors or {}
    for name in errors:
        merged.pop(name, None)
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# icml26 — reproduced results",
        "",
        f"Generated {stamp} by `icml26 reproduce`. Every number below was measured by the run that",
        "wrote it (quick runs use reduced sizes; see each package README for full runs).",
        "",
        "| package | mode | checks | seconds | headline |",
        "|---|---|---|---|---|",
    ]
    for name, r in sorted(merged.items()):
        n_ok = sum(r.checks.values())
        checks = f"{n_ok}/{len(r.checks)} pass" if r.checks else "–"
        mode = "quick" if r.quick else "full"
        lines.append(
            f"| {name} | {mode} | {checks} | {r.seconds:.0f} | {escape_cell(r.headline) or '–'} |"
        )
    for name in sorted(errors):
        lines.append(f"| {name} | – | ERROR | – | the experiment raised; see below |")
    lines.append("")
    for _, r in sorted(merged.items()):
        lines += [r.to_markdown(relative_to=out), ""]
    for name, tb in sorted(errors.items()):
        lines += [f"## {name}: ERROR", "", "```", tb.rstrip(), "```", ""]
    path = out / "REPORT.md"
    path.write_text("\n".join(lines).rstrip() + "\n")
    return path
