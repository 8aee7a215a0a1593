"""The docs site's generated pages: one per package, results rendered from result.json."""

from pathlib import Path

from icml26_shared.experiment import ExperimentResult
from icml26_tools import docs

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_gets_a_page_whose_results_match_its_result_json(tmp_path):
    written = docs.generate(ROOT, tmp_path)
    pkgs = docs.package_docs(ROOT)
    assert len(pkgs) == 16 and len(written) == 17
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
        assert f"{n_ok}/{len(result.checks)} checks pass" in index


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
