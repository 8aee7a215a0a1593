"""The documentation site's generated pages (``mkdocs build`` runs :func:`generate` from the
hook ``docs/hooks.py``, and ``icml26 report --docs`` writes the same pages).

For every package under ``packages/``: ``docs/packages/<name>.md`` holds the package's README
(its manual: what it does, install, quickstart, the method with its citation, limitations),
then the results of its latest recorded run, rendered from the ``result.json`` it was saved
to (``packages/<name>/docs/result.json``, else ``full_result.json``, else
``quick_result.json``) with the run's date, mode and machine stated once, then an API
reference generated from the docstrings (mkdocstrings). ``docs/index.md`` is the landing page
with the package table. Nothing in a results table is written by hand.

Each package README holds the same run's headline table between :data:`README_START` and
:data:`README_END`; :func:`update_package_readmes` (``icml26 report --docs``) rewrites that
block, and the test suite checks it against the ``result.json`` it names.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from icml26_shared.experiment import ExperimentResult

__all__ = [
    "RAW_URL",
    "README_END",
    "README_START",
    "REPO_URL",
    "SITE_URL",
    "PackageDoc",
    "find_result",
    "generate",
    "package_docs",
    "readme_results",
    "record_results",
    "results_markdown",
    "update_package_readmes",
]

#: Where the repository, its raw files and the documentation site live. Package READMEs link
#: with these absolute addresses, so their links also work on PyPI; the site's pages map them
#: back to the site's own copies.
REPO_URL = "https://github.com/icml26/icml26"
RAW_URL = "https://raw.githubusercontent.com/icml26/icml26/main"
SITE_URL = "https://icml26.github.io/icml26"

RESULT_FILES = ("result.json", "full_result.json", "quick_result.json")
README_START = "<!-- results:start (written by icml26 report --docs; do not edit) -->"
README_END = "<!-- results:end -->"


@dataclass(frozen=True)
class PackageDoc:
    """What the site knows of one package."""

    name: str
    module: str
    summary: str
    readme: Path
    result: Path | None


def find_result(pkg_dir: Path) -> Path | None:
    """The recorded run a package's pages show: ``docs/result.json``, ``docs/full_result.json``
    or ``docs/quick_result.json``, or None.

    A dated run beats an undated one (a file without a date predates the field); among dated
    runs a full run beats a quick one (it is the package's headline at the spec's sizes), and
    the later date breaks the rest.
    """
    found = []
    for fname in RESULT_FILES:
        path = pkg_dir / "docs" / fname
        if path.is_file():
            r = ExperimentResult.from_json(path.read_text())
            found.append((bool(r.date), not r.quick, r.date, path))
    return max(found)[3] if found else None


def package_docs(root: Path) -> list[PackageDoc]:
    """Every package under ``root/packages``, sorted by name."""
    out = []
    for pkg in sorted((root / "packages").iterdir()):
        meta = pkg / "pyproject.toml"
        if not meta.is_file():
            continue
        project = tomllib.loads(meta.read_text())["project"]
        modules = [
            p.name
            for p in sorted((pkg / "src").iterdir())
            if p.is_dir() and (p / "__init__.py").is_file()
        ]
        out.append(
            PackageDoc(
                project["name"],
                modules[0],
                project.get("description", ""),
                pkg / "README.md",
                find_result(pkg),
            )
        )
    return out


def results_markdown(result: ExperimentResult) -> str:
    """The tables and checks of a run, with its date, mode and machine stated once."""
    mode = "quick" if result.quick else "full"
    when = f", {result.date}" if result.date else ""
    where = f", on {result.machine}" if result.machine else ""
    lines = [
        f"_Latest recorded {mode} run of `python -m <module> reproduce`{when}{where}; "
        f"{result.seconds:.0f} s._",
        "",
    ]
    if result.headline:
        lines += [f"Headline: {result.headline}", ""]
    for t in result.tables:
        lines += [t.to_markdown(), ""]
    if result.checks:
        lines += ["| acceptance check | measured | result |", "|---|---|---|"]
        lines += [
            f"| {k.replace('|', '/')} | {result.measured(k).replace('|', '/') or '–'} | "
            f"{'pass' if v else 'FAIL'} |"
            for k, v in result.checks.items()
        ]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def readme_results(doc: PackageDoc) -> str:
    """The README's generated results block (markers included) for one package.

    It names the run (command, mode, date, machine, seconds), its headline, its first table
    (the headline table) and how many acceptance checks pass; the docs page holds the rest.
    """
    lines = [README_START]
    if doc.result is None:
        lines += [
            "",
            f"No run is recorded yet: `python -m {doc.module} reproduce` prints the table and "
            "saves its `result.json`.",
        ]
    else:
        r = ExperimentResult.from_json(doc.result.read_text())
        cmd = f"python -m {doc.module} reproduce" + (" --quick" if r.quick else "")
        when = r.date or "date not recorded"
        where = f", {r.machine}" if r.machine else ""
        n_ok = sum(r.checks.values())
        source = f"{REPO_URL}/blob/main/packages/{doc.name}/docs/{doc.result.name}"
        lines += [
            "",
            f"_Latest recorded run: `{cmd}` ({'quick' if r.quick else 'full'} mode), {when}"
            f"{where}; {r.seconds:.0f} s; {n_ok} of {len(r.checks)} acceptance checks pass. "
            f"Source: [`docs/{doc.result.name}`]({source})._",
        ]
        if r.headline:
            lines += ["", f"Headline: {r.headline}"]
        if r.tables:
            lines += ["", r.tables[0].to_markdown()]
        more = len(r.tables) - 1
        lines += [
            "",
            f"The package's [page on the documentation site]({SITE_URL}/packages/{doc.name}/) "
            "shows "
            + (f"the other {more} table(s) and " if more > 0 else "")
            + "every acceptance check of this run.",
        ]
    lines += ["", README_END]
    return "\n".join(lines)


def record_results(root: Path, reports: Path) -> list[Path]:
    """Copy each ``reports/<name>/result.json`` into ``packages/<name>/docs/<mode>_result.json``.

    A report replaces the recorded file of its mode only when it is dated and newer (or the
    package has none), so an older report never overwrites a newer record. Figures are recorded
    by file name (the PNGs sit beside the result, not at this machine's paths). Returns the
    files written.
    """
    written = []
    for doc in package_docs(root):
        src = reports / doc.name / "result.json"
        if not src.is_file():
            continue
        new = ExperimentResult.from_json(src.read_text())
        if not new.date:
            continue
        dst = doc.readme.parent / "docs" / f"{'quick' if new.quick else 'full'}_result.json"
        if dst.is_file():
            old = ExperimentResult.from_json(dst.read_text())
            if old.date and old.date >= new.date:
                continue
        dst.parent.mkdir(exist_ok=True)
        mode = "quick" if new.quick else "full"
        kept = []
        for fig in new.figures:  # copied beside the record, named by the run's mode
            # where the run saved it, else beside the report (a report copied from elsewhere)
            fig = Path(fig)
            src_fig = fig if fig.is_absolute() and fig.is_file() else src.parent / fig.name
            if not src_fig.is_file():
                continue
            name = fig.name
            name = name if name.startswith(f"{mode}_") else f"{mode}_{name}"
            shutil.copy2(src_fig, dst.parent / name)
            kept.append(Path(name))
        new.figures = kept  # beside it, not this machine's paths
        dst.write_text(new.to_json())
        written.append(dst)
    return written


def _block_span(text: str, path: Path) -> tuple[int, int]:
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"{path}: no results block ({README_START!r} ... {README_END!r})")
    return start, end + len(README_END)


def update_package_readmes(root: Path) -> list[Path]:
    """Rewrite every package README's results block; returns the READMEs that changed."""
    changed = []
    for doc in package_docs(root):
        text = doc.readme.read_text()
        a, b = _block_span(text, doc.readme)
        new = text[:a] + readme_results(doc) + text[b:]
        if new != text:
            doc.readme.write_text(new)
            changed.append(doc.readme)
    return changed


def _readme_body(path: Path, name: str) -> str:
    text = path.read_text() if path.is_file() else ""
    # the README's results block repeats what the page's Results section shows in full
    if README_START in text and README_END in text:
        a, b = _block_span(text, path)
        text = text[:a] + "The results of the latest recorded run are below." + text[b:]
    # images next to the README (docs/x.png, linked by their raw repository address so the
    # README also shows them on PyPI) are copied beside the page, under <name>/
    raw = re.escape(f"{RAW_URL}/packages/{name}/docs/")
    text = re.sub(rf"\]\((?:{raw}|docs/)([^)\s]+\.(?:png|svg|jpg))\)", rf"]({name}/\1)", text)
    # method notes beside the README (docs/x.md) are pages of the site
    blob = re.escape(f"{REPO_URL}/blob/main/packages/{name}/docs/")
    text = re.sub(rf"\]\((?:{blob}|docs/)([^)\s/]+)\.md\)", rf"]({name}-\1.md)", text)
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    # headings one level down (the page title is the package name), code blocks untouched
    out, fenced = [], False
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,5} ", line):
            line = "#" + line
        out.append(line)
    return "\n".join(out).strip()


def package_page(doc: PackageDoc) -> str:
    """The Markdown page of one package."""
    parts = [f"# {doc.name}", "", f"*{doc.summary}* Install: `pip install {doc.name}`.", ""]
    parts += ["## Manual", "", _readme_body(doc.readme, doc.name), ""]
    parts += ["## Results", ""]
    if doc.result is None:
        parts += [
            f"No run is recorded in the repository yet: `python -m {doc.module} reproduce` "
            "prints the table and saves its `result.json`.",
            "",
        ]
    else:
        result = ExperimentResult.from_json(doc.result.read_text())
        parts += [results_markdown(result).replace("<module>", doc.module), ""]
        for fig in result.figures:
            if (doc.readme.parent / "docs" / fig.name).is_file():
                parts += [f"![{fig.stem.replace('_', ' ')}]({doc.name}/{fig.name})", ""]
    notes = method_notes(doc)
    if notes:
        parts += ["## Method notes", ""]
        parts += [f"- [{_title(n)}]({doc.name}-{n.stem}.md)" for n in notes] + [""]
    parts += ["## API reference", "", f"::: {doc.module}", ""]
    changelog = doc.readme.parent / "CHANGELOG.md"
    if changelog.is_file():
        text = _drop_title(changelog.read_text())
        text = re.sub(r"\]\(docs/([^)\s]+\.(?:png|svg|jpg))\)", rf"]({doc.name}/\1)", text)
        parts += ["## Changelog", "", _demote(text, 2), ""]
    return "\n".join(parts)


def method_notes(doc: PackageDoc) -> list[Path]:
    """The Markdown notes a package keeps beside its README (``docs/*.md``)."""
    return sorted((doc.readme.parent / "docs").glob("*.md"))


def _title(note: Path) -> str:
    first = note.read_text().splitlines()[:1]
    return first[0].lstrip("# ").strip() if first and first[0].startswith("#") else note.stem


def _drop_title(text: str) -> str:
    lines = text.splitlines()
    return "\n".join(lines[1:] if lines and lines[0].startswith("# ") else lines).strip()


def _demote(text: str, levels: int) -> str:
    """Headings ``levels`` deeper (at most ``######``), code blocks untouched."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            hashes = len(line) - len(line.lstrip("#"))
            line = "#" * min(6, hashes + levels) + line[hashes:]
        out.append(line)
    return "\n".join(out)


def index_page(root: Path) -> str:
    """The site's home page: the same package table as the repository README
    (:func:`icml26_tools.readme.render_table`), linked to the site's package pages."""
    from .readme import render_table

    table = render_table(root, link=lambda pkg: f"packages/{pkg.name}.md")
    lines = [
        "# icml26",
        "",
        "Sixteen ICML 2026 methods as independently installable Python libraries, each with "
        "its peers measured side by side. Every package page holds the package's manual, the "
        "results of its latest recorded run and an API reference generated from its "
        "docstrings. New here? Start with [Getting started](getting-started.md).",
        "",
        "Each row shows the package's recorded quick and full runs of `python -m <import> "
        "reproduce` (checks passed and the date) and the headline of the newer one.",
        "",
        table,
        "",
    ]
    return "\n".join(lines) + "\n"


def getting_started_page(root: Path) -> str:
    """Install, the extras of every package (from its ``pyproject.toml``), the two commands."""
    lines = [
        "# Getting started",
        "",
        "## Use one method",
        "",
        "Each method is its own wheel: install the one you need with pip (Python 3.11 or newer). "
        "Its page here is its manual; its README's first example runs as it stands.",
        "",
        "| package | install | extras (what each adds) |",
        "|---|---|---|",
    ]
    for pkg in sorted((root / "packages").glob("*/pyproject.toml")):
        project = tomllib.loads(pkg.read_text())["project"]
        extras = project.get("optional-dependencies", {})
        shown = "; ".join(
            f"`{k}`: " + ", ".join(d.split(">")[0].split("=")[0].split("<")[0] for d in v)
            for k, v in extras.items()
        )
        name = project["name"]
        lines.append(f"| [{name}](packages/{name}.md) | `pip install {name}` | {shown or '–'} |")
    lines += [
        "",
        'With an extra: `pip install "dxpp[torch]"`. Until a package is published on PyPI, '
        "install it from the repository: "
        f'`pip install "dxpp @ git+{REPO_URL}#subdirectory=packages/dxpp"` '
        "(its dependency `icml26-shared` the same way, `#subdirectory=shared`, first).",
        "",
        "## Reproduce every method",
        "",
        "Clone the repository, install [uv](https://docs.astral.sh/uv/) (`pip install uv`), "
        "then the two commands:",
        "",
        "```",
        "uv run icml26 reproduce --quick     # every package's headline comparison",
        "uv run pytest                       # the whole default test suite",
        "```",
        "",
        "`uv` builds `.venv` from the committed lock on first use (CPU-only torch and jax "
        "from PyPI). One package alone: `uv run python -m <import> reproduce [--quick]`; "
        "its benchmarks against its peers: `uv run icml26 bench <name>`.",
        "",
        "## Notebooks",
        "",
        "Cross-package notebooks, executed by the test suite: see [Notebooks](notebooks/index.md).",
    ]
    return "\n".join(lines) + "\n"


def _notebook_markdown(path: Path) -> str:
    """A notebook as a page: its Markdown cells as they are, its code cells as code blocks."""
    import json

    nb = json.loads(path.read_text())
    parts = []
    for cell in nb.get("cells", []):
        source = "".join(cell.get("source", []))
        if cell.get("cell_type") == "markdown":
            parts.append(source)
        elif cell.get("cell_type") == "code" and source.strip():
            parts.append(f"```python\n{source}\n```")
    text = "\n\n".join(parts)
    if not text.lstrip().startswith("# "):
        text = f"# {path.stem.replace('_', ' ')}\n\n{text}"
    note = (
        f"\n\n---\n_Source: [`notebooks/{path.name}`]({REPO_URL}/blob/main/notebooks/"
        f"{path.name}); the test suite runs it (`uv run pytest notebooks`)._\n"
    )
    return text + note


def notebook_pages(root: Path, docs_dir: Path) -> list[Path]:
    """``docs/notebooks/<name>.md`` for every notebook, and an index from the folder's README."""
    folder = root / "notebooks"
    out_dir = docs_dir / "notebooks"
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    books = sorted(folder.glob("*.ipynb"))
    for nb in books:
        page = out_dir / f"{nb.stem}.md"
        page.write_text(_notebook_markdown(nb))
        written.append(page)
    intro = folder / "README.md"
    text = _drop_title(intro.read_text()) if intro.is_file() else ""
    text = re.sub(r"\]\(([^)\s/]+)\.ipynb\)", r"](\1.md)", text)
    listed = "\n".join(f"- [{nb.stem.replace('_', ' ')}]({nb.stem}.md)" for nb in books)
    index = out_dir / "index.md"
    index.write_text(f"# Notebooks\n\n{text}\n\n{listed}\n")
    written.append(index)
    return written


def generate(root: Path, docs_dir: Path | None = None) -> list[Path]:
    """Write ``docs/index.md`` and ``docs/packages/<name>.md``; returns the paths written."""
    docs_dir = docs_dir or root / "docs"
    (docs_dir / "packages").mkdir(parents=True, exist_ok=True)
    docs = package_docs(root)
    written = []
    index = docs_dir / "index.md"
    index.write_text(index_page(root))
    written.append(index)
    start = docs_dir / "getting-started.md"
    start.write_text(getting_started_page(root))
    written.append(start)
    written += notebook_pages(root, docs_dir)
    for d in docs:
        path = docs_dir / "packages" / f"{d.name}.md"
        path.write_text(package_page(d))
        written.append(path)
        for note in method_notes(d):
            page = docs_dir / "packages" / f"{d.name}-{note.stem}.md"
            text = note.read_text()
            # images beside the note are copied under <name>/ like the README's
            text = re.sub(r"\]\(([^)\s/]+\.(?:png|svg|jpg))\)", rf"]({d.name}/\1)", text)
            page.write_text(text)
            written.append(page)
        images = sorted((d.readme.parent / "docs").glob("*.png"))
        if images:
            (docs_dir / "packages" / d.name).mkdir(exist_ok=True)
        for img in images:
            target = docs_dir / "packages" / d.name / img.name
            if not target.exists() or target.stat().st_mtime < img.stat().st_mtime:
                shutil.copy2(img, target)
    return written
