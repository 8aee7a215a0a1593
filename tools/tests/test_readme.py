"""`icml26 report --readme`: the README's first line and package table come from files."""

import re
import textwrap
from pathlib import Path

from icml26_shared import experiment as ex
from icml26_tools import cli
from icml26_tools.readme import (
    END,
    START,
    first_line,
    method_packages,
    render_table,
    update_readme,
)

ROOT = Path(__file__).resolve().parents[2]


def _fake_repo(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.uv.workspace]\nmembers = []\n")
    for name, desc in [("alpha-cp", "first method"), ("beta-net", "second | method")]:
        folder = tmp_path / "packages" / name
        folder.mkdir(parents=True)
        (folder / "pyproject.toml").write_text(
            textwrap.dedent(f"""
            [project]
            name = "{name}"
            description = "{desc}"
            [tool.uv.build-backend]
            module-name = "{name.replace("-", "_")}"
            """)
        )
    (tmp_path / "README.md").write_text(
        "# icml26: 99 stale methods\n\nintro stays\n\n"
        + START
        + "\n| old | table |\n"
        + END
        + "\n\ntail stays\n"
    )
    return tmp_path


def test_report_readme_rewrites_first_line_and_table_from_the_records(tmp_path, monkeypatch):
    repo = _fake_repo(tmp_path)
    docs = repo / "packages" / "alpha-cp" / "docs"
    docs.mkdir()
    quick = ex.ExperimentResult(
        "alpha-cp",
        "t",
        checks={"a": True, "b": False},
        headline="coverage 0.9 | width 2",
        quick=True,
        date="2026-12-07 10:00 UTC",
    )
    full = ex.ExperimentResult(
        "alpha-cp", "t", checks={"a": True}, headline="older", date="2026-12-01 09:00 UTC"
    )
    (docs / "quick_result.json").write_text(quick.to_json())
    (docs / "full_result.json").write_text(full.to_json())
    monkeypatch.chdir(repo)
    assert cli.main(["report", "--out", "reports", "--readme"]) == 0
    text = (repo / "README.md").read_text()
    assert (
        text.splitlines()[0] == "# icml26: 2 ICML 2026 methods, each an installable Python library"
    )
    assert "intro stays" in text and "tail stays" in text and "| old | table |" not in text
    assert (
        "| [alpha-cp](packages/alpha-cp/README.md) | `alpha_cp` | first method | "
        "1/2 checks, 2026-12-07 | 1/1 checks, 2026-12-01 | coverage 0.9 \\| width 2 (quick run) |"
        in text
    )
    assert (
        "| [beta-net](packages/beta-net/README.md) | `beta_net` | second \\| method | – | – | – |"
        in text
    )
    # a new package folder changes the count on the next run: nothing is hard-coded
    (repo / "packages" / "gamma").mkdir()
    (repo / "packages" / "gamma" / "pyproject.toml").write_text('[project]\nname = "gamma"\n')
    update_readme(repo / "README.md", repo)
    assert (repo / "README.md").read_text().startswith("# icml26: 3 ICML 2026 methods")


def test_missing_markers_raise(tmp_path):
    import pytest

    repo = _fake_repo(tmp_path)
    (repo / "README.md").write_text("# icml26\n")
    with pytest.raises(ValueError, match="must contain the markers"):
        update_readme(repo / "README.md", repo)


def test_the_repository_readme_is_generated():
    """The committed README carries the markers and its first line counts today's packages.

    When a package lands, `uv run icml26 report --readme` brings this back in line.
    """
    text = (ROOT / "README.md").read_text()
    assert START in text and END in text
    n = len(method_packages(ROOT))
    assert text.splitlines()[0] == first_line(n), "run `uv run icml26 report --readme`"
    table = text[text.index(START) : text.index(END)]
    rows = [line for line in table.splitlines() if re.match(r"^\| \[", line)]
    assert len(rows) == n


def test_the_committed_table_is_what_the_generator_writes_from_the_records():
    """No hand-written row: `uv run icml26 report --readme` (or `reproduce --record`) writes it."""
    text = (ROOT / "README.md").read_text()
    committed = text[text.index(START) + len(START) : text.index(END)].strip()
    assert committed == render_table(ROOT), "run `uv run icml26 report --readme`"
