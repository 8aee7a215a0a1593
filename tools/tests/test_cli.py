import json
import textwrap
from types import SimpleNamespace

import pytest

from icml26_shared import experiment as ex
from icml26_tools import cli


def _ok(quick, out_dir, progress):
    t = ex.ResultTable("toy table", ["score"])
    t.add_row("ours", score=[1.0, 2.0])
    return ex.ExperimentResult(
        "good", "works", tables=[t], checks={"score > 0": True}, headline="score 1.5"
    )


def _broken(quick, out_dir, progress):
    raise RuntimeError("boom")


def _entry(name, experiment):
    return SimpleNamespace(name=name, dist=None, load=lambda: experiment)


@pytest.fixture
def fake_packages(monkeypatch):
    eps = {
        "good": _entry("good", ex.Experiment("good", "a working experiment", _ok)),
        "bad": _entry("bad", ex.Experiment("bad", "a broken experiment", _broken)),
    }
    monkeypatch.setattr(cli, "discover", lambda: dict(sorted(eps.items())))
    return eps


def test_reproduce_writes_report_and_flags_errors(fake_packages, tmp_path, capsys):
    code = cli.main(["reproduce", "--quick", "--out", str(tmp_path), "--no-progress"])
    assert code == 1  # the broken experiment raised
    report = (tmp_path / "REPORT.md").read_text()
    assert "## good: works" in report and "score 1.5" in report
    assert "## bad: ERROR" in report and "RuntimeError: boom" in report
    assert json.loads((tmp_path / "good" / "result.json").read_text())["passed"] is True
    assert "experiments that raised: bad" in capsys.readouterr().out


def test_reproduce_selected_package_and_list(fake_packages, tmp_path, capsys):
    assert cli.main(["reproduce", "good", "--out", str(tmp_path), "--no-progress"]) == 0
    assert cli.main(["list", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "good" in out and "pass" in out and "a broken experiment" in out
    with pytest.raises(SystemExit, match="unknown package"):
        cli.main(["reproduce", "nope", "--out", str(tmp_path)])


def test_report_rebuilds_from_saved_results(fake_packages, tmp_path):
    cli.main(["reproduce", "good", "--out", str(tmp_path), "--no-progress"])
    (tmp_path / "REPORT.md").unlink()
    assert cli.main(["report", "--out", str(tmp_path)]) == 0
    assert "| good | full | 1/1 pass |" in (tmp_path / "REPORT.md").read_text()


def test_bench_runs_package_scripts(fake_packages, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text("[tool.uv.workspace]\nmembers = []\n")
    script = tmp_path / "packages" / "good" / "benchmarks" / "run.py"
    script.parent.mkdir(parents=True)
    script.write_text(
        textwrap.dedent("""
        import json, sys
        out = sys.argv[sys.argv.index("--out") + 1]
        json.dump({"ratio": 2.0, "quick": "--quick" in sys.argv}, open(out, "w"))
    """)
    )
    monkeypatch.chdir(tmp_path)
    assert cli.main(["bench", "--quick", "--out", "reports"]) == 0
    data = json.loads((tmp_path / "reports" / "bench" / "good.json").read_text())
    assert data == {"ratio": 2.0, "quick": True}


def test_installed_method_packages_are_discovered():
    from importlib import metadata
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    installed = set()
    for folder in (root / "packages").iterdir():
        try:
            metadata.version(folder.name)
        except metadata.PackageNotFoundError:
            continue  # an isolated run of tools/ installs no method package
        installed.add(folder.name)
    assert installed <= set(cli.discover())
