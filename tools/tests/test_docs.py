"""The docs site's generated pages: one per package, results rendered from result.json."""

import re
from pathlib import Path

import pytest

from icml26_shared.experiment import ExperimentResult
from icml26_tools import docs

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_gets_a_page_whose_results_match_its_result_json(tmp_path):
    written = docs.generate(ROOT, tmp_path)
    pkgs = docs.package_docs(ROOT)
    assert len(pkgs) == 16
    names = {p.relative_to(tmp_path).as_posix() for p in written}
    assert {"index.md", "getting-started.md", "notebooks/index.md"} <= names
    assert {f"packages/{d.name}.md" for d in pkgs} <= names
    assert {f"notebooks/{nb.stem}.md" for nb in (ROOT / "notebooks").glob("*.ipynb")} <= names
    index = (tmp_path / "index.md").read_text()
    for d in pkgs:
        page = (tmp_path / "packages" / f"{d.name}.md").read_text()
        assert page.startswith(f"# {d.name}\n")
        assert f"::: {d.module}" in page  # the API reference from the docstrings
        assert f"[{d.name}](packages/{d.name}.md)" in index
        if d.result is None:
            assert "No run is recorded" in page
            continue
        result = ExperimentResult.from_json(d.result.read_text())
        rendered = docs.results_markdown(result).replace("<module>", d.module)
        assert rendered in page
        for t in result.tables:  # every table, cell for cell, as the result.json holds it
            assert t.to_markdown() in page
        n_ok = sum(result.checks.values())
        assert f"{n_ok}/{len(result.checks)} checks, {result.date.split()[0]}" in index
    # the home page's table is the README's, with the site's links
    readme = (ROOT / "README.md").read_text()
    rows = [r for r in readme.splitlines() if r.startswith("| [")]
    for row in rows:
        site_row = re.sub(r"\]\(packages/([^/]+)/README\.md\)", r"](packages/\1.md)", row)
        assert site_row in index, site_row


def test_readme_headings_move_down_but_code_comments_stay(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# pkg\n\nintro\n\n## Install\n\n```bash\n# a comment\npip install x\n```\n")
    body = docs._readme_body(readme, "pkg")
    assert "### Install" in body and "\n# a comment\n" in body and "# pkg" not in body


def test_results_state_date_mode_and_machine_once():
    r = ExperimentResult("p", "t", checks={"a": True}, seconds=12.0, quick=True)
    r.date, r.machine = "2026-12-06 06:00 UTC", "2 cores, x86_64 (AVX2), Linux"
    text = docs.results_markdown(r)
    assert text.count("2026-12-06") == 1 and "quick run" in text and "AVX2" in text


def test_every_package_readme_holds_its_generated_results_block():
    """The README's results block is what `icml26 report --docs` writes from the recorded run:
    a hand edit, or a newer result.json without regenerating, fails here."""
    for d in docs.package_docs(ROOT):
        text = d.readme.read_text()
        assert text.count(docs.README_START) == 1, f"{d.readme}: no results block"
        a, b = docs._block_span(text, d.readme)
        assert text[a:b] == docs.readme_results(d), (
            f"{d.readme}: results block out of date; run `icml26 report --docs`"
        )
        if d.result is not None:
            first = ExperimentResult.from_json(d.result.read_text()).tables
            assert not first or first[0].to_markdown() in text[a:b]


def test_package_readmes_are_manuals_of_at_most_200_lines():
    for d in docs.package_docs(ROOT):
        n = len(d.readme.read_text().splitlines())
        assert n <= 200, f"{d.readme}: {n} lines"


def _result(date, quick, title="t"):
    r = ExperimentResult("pkg", title, checks={"a": True}, seconds=1.0, quick=quick)
    r.date = date
    return r


def _package(root, name="pkg"):
    pkg = root / "packages" / name
    (pkg / "src" / name).mkdir(parents=True)
    (pkg / "src" / name / "__init__.py").write_text("")
    (pkg / "pyproject.toml").write_text(f'[project]\nname = "{name}"\ndescription = "d"\n')
    (pkg / "README.md").write_text(f"# {name}\n\n{docs.README_START}\n{docs.README_END}\n")
    (pkg / "docs").mkdir()
    return pkg


def test_a_dated_full_run_beats_a_dated_quick_one_and_any_dated_run_an_undated_one(tmp_path):
    pkg = _package(tmp_path)
    (pkg / "docs" / "full_result.json").write_text(_result("", False).to_json())
    assert docs.find_result(pkg).name == "full_result.json"  # the only one
    (pkg / "docs" / "quick_result.json").write_text(_result("2026-12-06 07:00 UTC", True).to_json())
    assert docs.find_result(pkg).name == "quick_result.json"  # undated counts as older
    (pkg / "docs" / "full_result.json").write_text(_result("2026-12-05 07:00 UTC", False).to_json())
    assert docs.find_result(pkg).name == "full_result.json"
    (pkg / "docs" / "result.json").write_text(_result("2026-12-07 07:00 UTC", False).to_json())
    assert docs.find_result(pkg).name == "result.json"  # the later of two full runs


def test_record_then_update_rewrites_only_the_block(tmp_path):
    pkg = _package(tmp_path)
    readme = pkg / "README.md"
    readme.write_text(readme.read_text() + "\nhand-written limitations\n")
    reports = tmp_path / "reports"
    (reports / "pkg").mkdir(parents=True)
    first = _result("2026-12-06 08:00 UTC", True)
    first.figures = [reports.resolve() / "pkg" / "plot.png", reports.resolve() / "pkg" / "gone.png"]
    (reports / "pkg" / "plot.png").write_bytes(b"\x89PNG fake")
    (reports / "pkg" / "result.json").write_text(first.to_json())
    assert docs.record_results(tmp_path, reports) == [pkg / "docs" / "quick_result.json"]
    recorded = ExperimentResult.from_json((pkg / "docs" / "quick_result.json").read_text())
    # the figure is copied beside the record, named by the mode; a missing one is dropped
    assert [str(f) for f in recorded.figures] == ["quick_plot.png"]
    assert (pkg / "docs" / "quick_plot.png").read_bytes() == b"\x89PNG fake"
    assert docs.record_results(tmp_path, reports) == []  # not newer: nothing to record
    older = _result("2026-12-05 08:00 UTC", True, title="older")
    (reports / "pkg" / "result.json").write_text(older.to_json())
    assert docs.record_results(tmp_path, reports) == []  # an older report never overwrites
    assert docs.update_package_readmes(tmp_path) == [readme]
    text = readme.read_text()
    assert "`python -m pkg reproduce --quick` (quick mode), 2026-12-06 08:00 UTC" in text
    assert "1 of 1 acceptance checks pass" in text and text.endswith("hand-written limitations\n")
    assert docs.update_package_readmes(tmp_path) == []  # idempotent
    readme.write_text("# pkg\n\nno block\n")
    with pytest.raises(ValueError, match="no results block"):
        docs.update_package_readmes(tmp_path)


def test_recorded_files_hold_no_machine_paths():
    for path in sorted(ROOT.glob("packages/*/docs/*.json")):
        text = path.read_text()
        found = re.search(r'"(/[A-Za-z0-9_.-]+)+"', text)  # any absolute path as a JSON string
        assert found is None, f"{path.relative_to(ROOT)} holds a machine path ({found[0]})"
