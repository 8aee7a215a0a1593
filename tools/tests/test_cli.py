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


def _failing(quick, out_dir, progress):
    return ex.ExperimentResult(
        "failing", "misses a bar", checks={"bar met": False, "runs": True}, headline="missed"
    )


def _unchecked(quick, out_dir, progress):
    return ex.ExperimentResult("unchecked", "checks nothing", headline="?")


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
    code = cli.main(["reproduce", "--quick", "--out", str(tmp_path), "--no-progress", "-j", "1"])
    assert code == 1  # the broken experiment raised
    report = (tmp_path / "REPORT.md").read_text()
    assert "## good: works" in report and "score 1.5" in report
    assert "## bad: ERROR" in report and "RuntimeError: boom" in report
    assert json.loads((tmp_path / "good" / "result.json").read_text())["passed"] is True
    assert "experiments that raised or timed out: bad" in capsys.readouterr().out


def test_reproduce_selected_package_and_list(fake_packages, tmp_path, capsys):
    assert cli.main(["reproduce", "good", "--out", str(tmp_path), "--no-progress"]) == 0
    assert cli.main(["list", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "good" in out and "pass" in out and "bad" in out and "not run" in out
    with pytest.raises(SystemExit, match="unknown package"):
        cli.main(["reproduce", "nope", "--out", str(tmp_path)])


def test_reproduce_exits_1_on_a_failing_check_and_names_it(monkeypatch, tmp_path, capsys):
    eps = {
        "good": _entry("good", ex.Experiment("good", "works", _ok)),
        "failing": _entry("failing", ex.Experiment("failing", "misses", _failing)),
        "unchecked": _entry("unchecked", ex.Experiment("unchecked", "nothing", _unchecked)),
    }
    monkeypatch.setattr(cli, "discover", lambda: dict(sorted(eps.items())))
    assert cli.main(["reproduce", "good", "--out", str(tmp_path), "--no-progress"]) == 0
    code = cli.main(["reproduce", "--out", str(tmp_path), "--no-progress", "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 1
    assert (
        "failing: checks failing: bar met" in out
        and "runs" not in out.split("failing:")[1].split("\n")[0]
    )
    assert "unchecked: checks failing: no check was recorded" in out
    assert "checks failing in: failing, unchecked" in out
    saved = json.loads((tmp_path / "unchecked" / "result.json").read_text())
    assert saved["passed"] is False  # no check recorded: nothing was shown


def test_list_imports_neither_torch_nor_jax(tmp_path):
    """With the real installed packages (bittokens, gse-flow, dxpp pull torch/jax when imported)."""
    import subprocess
    import sys

    code = (
        "import sys; from icml26_tools.cli import main; "
        f"assert main(['list', '--out', {str(tmp_path)!r}]) == 0; "
        "heavy = {'torch', 'jax', 'jaxlib', 'matplotlib', 'transformers'} & "
        "{m.split('.')[0] for m in sys.modules}; "
        "assert not heavy, heavy"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for name in cli.discover():
        assert name in done.stdout


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


def test_reproduce_set_overrides_one_packages_config(monkeypatch, tmp_path, capsys):
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Cfg:
        n: int = 5

    def run(config, out_dir, progress):
        r = ex.ExperimentResult("cfg", "configured")
        r.check("n", config.n, ">=", 3)
        return r

    eps = {
        "cfg": _entry("cfg", ex.Experiment("cfg", "configured", run, Cfg(3), Cfg())),
        "good": _entry("good", ex.Experiment("good", "works", _ok)),
    }
    monkeypatch.setattr(cli, "discover", lambda: dict(sorted(eps.items())))
    base = ["reproduce", "cfg", "--out", str(tmp_path), "--no-progress"]
    assert cli.main([*base, "--set", "n=1"]) == 1
    assert json.loads((tmp_path / "cfg" / "result.json").read_text())["config"] == {"n": 1}
    with pytest.raises(SystemExit, match="unknown config key 'm'"):
        cli.main([*base, "--set", "m=1"])
    with pytest.raises(SystemExit, match="name that package"):
        cli.main(["reproduce", "--out", str(tmp_path), "--set", "n=1"])
    with pytest.raises(SystemExit, match="presets only"):
        cli.main([*base, "--set", "n=1", "--record"])
