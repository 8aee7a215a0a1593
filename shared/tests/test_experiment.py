import json

import numpy as np
import pytest

from icml26_shared import experiment as ex


def _toy(quick, out_dir, progress):
    table = ex.ResultTable("toy", ["coverage", "width"])
    for method, cov in [("ours", [0.9, 0.91, 0.89]), ("peer", [0.8])]:
        table.add_row(method, coverage=cov, width=1.5)
    plt = ex.require_matplotlib()
    fig, ax = plt.subplots()
    ax.plot(list(ex.progress(range(3), enabled=progress)))
    path = out_dir / "toy.png"
    fig.savefig(path)
    plt.close(fig)
    return ex.ExperimentResult(
        "toy",
        "a toy",
        tables=[table],
        figures=[path],
        checks={"coverage ok": True},
        headline="coverage 0.90",
    )


TOY = ex.Experiment("toy", "a toy experiment", _toy)


def test_estimate_of_values():
    e = ex.Estimate.of([1.0, 2.0, 3.0])
    assert e.mean == 2.0 and e.se == pytest.approx(1 / np.sqrt(3))
    assert e.format() == "2 ± 0.577"
    assert ex.Estimate.of(5.0).format() == "5"


def test_table_rendering_and_validation():
    t = ex.ResultTable("t", ["a"])
    t.add_row("m", a=[0.1, 0.3])
    md = t.to_markdown()
    assert "| method | a |" in md and "| m | 0.2 ± 0.1 |" in md
    assert "m" in t.to_text()
    with pytest.raises(ValueError, match="cells must be among columns"):
        t.add_row("m", b=1.0)
    assert ex.ResultTable.from_dict(t.to_dict()) == t


def test_experiment_run_writes_json_and_roundtrips(tmp_path):
    result = TOY.run(quick=True, out_dir=tmp_path, progress=False)
    assert result.passed and result.quick and result.seconds > 0
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["passed"] is True and saved["tables"][0]["rows"]["ours"]["coverage"]["mean"] == 0.9
    back = ex.ExperimentResult.from_json((tmp_path / "result.json").read_text())
    assert back.tables == result.tables and back.checks == result.checks
    md = back.to_markdown(relative_to=tmp_path)
    assert "![toy](toy.png)" in md and "| coverage ok | – | pass |" in md


def test_main_command_line(tmp_path, capsys):
    code = ex.main(TOY, ["reproduce", "--quick", "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    assert "ours" in capsys.readouterr().out
    assert (tmp_path / "toy.png").is_file()


def test_markdown_cells_escape_pipes():
    t = ex.ResultTable("t", ["|x|"])
    t.add_row("a|b", **{"|x|": "|miss - alpha| = 0.01"})
    row = t.to_markdown().splitlines()[-1]
    assert row == r"| a\|b | \|miss - alpha\| = 0.01 |"


def test_a_result_without_checks_has_not_passed():
    from icml26_shared.experiment import ExperimentResult

    assert not ExperimentResult("p", "t").passed
    assert ExperimentResult("p", "t", checks={"a": True}).passed
    assert not ExperimentResult("p", "t", checks={"a": True, "b": False}).passed


def test_parallel_map_keeps_order_runs_single_threaded_workers_and_restores_the_env(monkeypatch):
    import math
    import os

    from icml26_shared.experiment import parallel_map

    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    before = dict(os.environ)
    assert parallel_map(abs, [-3, 1, -2, 5], workers=2) == [3, 1, 2, 5]
    assert parallel_map(os.getenv, ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"], workers=2) == [
        "1",
        "1",
    ]
    assert dict(os.environ) == before
    with pytest.raises(ValueError):
        parallel_map(math.sqrt, [4.0, -1.0], workers=2)
    assert dict(os.environ) == before
    # one worker: here, in order, with this process's environment
    assert parallel_map(os.getenv, ["OMP_NUM_THREADS"], workers=2) == ["7"]
    assert parallel_map(abs, [-1, -2], workers=1) == [1, 2]


def test_cpu_share_follows_the_runners_thread_share(monkeypatch):
    from icml26_shared.experiment import available_cores, cpu_share

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert cpu_share() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "999")
    assert cpu_share() == available_cores()
    monkeypatch.delenv("OMP_NUM_THREADS")
    assert cpu_share() == available_cores()
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert cpu_share() == available_cores()


def test_progress_none_writes_a_line_per_stage_when_piped(capsys):
    from icml26_shared.experiment import progress, progress_enabled, say

    assert list(progress(range(3), enabled=None, desc="training")) == [0, 1, 2]
    err = capsys.readouterr().err  # pytest's capture is not a terminal
    assert "training: 3 steps..." in err and "training: done in" in err
    assert list(progress(range(3), enabled=False)) == [0, 1, 2]
    say("quiet", enabled=False)
    assert capsys.readouterr().err == ""
    assert progress_enabled(None) is False and progress_enabled(True) is True


def test_a_stamped_result_records_its_commit_and_cpu():
    from icml26_shared.experiment import ExperimentResult

    r = ExperimentResult("p", "t")
    r.stamp(1.5, quick=True)
    assert r.cpu and r.date and r.machine
    assert r.commit == "" or len(r.commit.split("+")[0]) == 12  # a checkout, or an installed wheel
    back = ExperimentResult.from_json(r.to_json())
    assert (back.commit, back.cpu, back.quick) == (r.commit, r.cpu, True)


def test_checks_record_value_op_and_bound():
    import math

    import pytest

    from icml26_shared.experiment import ExperimentResult

    r = ExperimentResult("p", "t")
    assert r.check("cov", 0.893, ">=", 0.88, "coverage >= 0.88") is True
    assert r.check("width", 2.5, "<=", 2.0) is False
    assert r.check("nan", math.nan, "<", 1.0) is False  # a NaN never passes
    with pytest.raises(ValueError, match="op must be one of"):
        r.check("x", 1, "=<", 2)
    with pytest.raises(ValueError, match="already recorded"):
        r.check("cov", 1, "<", 2)
    r.checks["plain"] = True  # a plain pass/fail check still works beside them
    back = ExperimentResult.from_json(r.to_json())
    assert [c.to_dict() for c in back.details][:2] == [
        {
            "id": "cov",
            "label": "coverage >= 0.88",
            "value": 0.893,
            "op": ">=",
            "bound": 0.88,
            "passed": True,
        },
        {"id": "width", "label": "width", "value": 2.5, "op": "<=", "bound": 2.0, "passed": False},
    ]
    assert back.checks == {"coverage >= 0.88": True, "width": False, "nan": False, "plain": True}
    assert back.measured("width") == "2.5 <= 2" and back.measured("plain") == ""
    assert "| width | 2.5 <= 2 | FAIL |" in back.to_markdown()
