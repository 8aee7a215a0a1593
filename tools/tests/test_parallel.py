"""``icml26 reproduce --jobs N``: worker processes, longest first, crashes and timeouts."""

import json
import os
import subprocess
import sys
import textwrap

from icml26_tools import parallel

FAKE = """
import time
from icml26_shared import experiment as ex

def _ok(quick, out_dir, progress):
    t = ex.ResultTable("toy table", ["score"])
    t.add_row("ours", score=[1.0])
    import os
    return ex.ExperimentResult("good", "works", tables=[t], checks={"runs": True},
                               headline="threads " + os.environ.get("OMP_NUM_THREADS", "?"))

def _crash(quick, out_dir, progress):
    raise RuntimeError("boom")

def _hang(quick, out_dir, progress):
    time.sleep(60)

def _abort(quick, out_dir, progress):
    import os
    os._exit(9)

GOOD = ex.Experiment("good", "a working experiment", _ok)
CRASH = ex.Experiment("crash", "raises", _crash)
HANG = ex.Experiment("hang", "never ends", _hang)
ABORT = ex.Experiment("abort", "the process dies", _abort)
"""


def _site(tmp_path):
    site = tmp_path / "site"
    dist = site / "fake_icml26-0.0.dist-info"
    dist.mkdir(parents=True)
    (site / "fake_icml26_exp.py").write_text(textwrap.dedent(FAKE))
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-icml26\nVersion: 0.0\n")
    (dist / "entry_points.txt").write_text(
        "[icml26.experiments]\n"
        "good = fake_icml26_exp:GOOD\ncrash = fake_icml26_exp:CRASH\n"
        "hang = fake_icml26_exp:HANG\nabort = fake_icml26_exp:ABORT\n"
    )
    return site


def test_parallel_run_reports_crashes_and_timeouts_and_keeps_going(tmp_path):
    site = _site(tmp_path)
    out = tmp_path / "reports"
    env = dict(os.environ, PYTHONPATH=f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "icml26_tools",
            "reproduce",
            "good",
            "crash",
            "hang",
            "abort",
            "--jobs",
            "2",
            "--timeout",
            "4",
            "--out",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    text = proc.stdout
    assert "toy table" in text  # the package's own table, as in a serial run
    assert "[good] done in" in text and "1/1 checks pass" in text
    assert "[crash] ERROR" in text and "[hang] ERROR" in text and "[abort] ERROR" in text
    assert "timed out after 4 s" in (out / "hang" / "error.txt").read_text()
    assert "RuntimeError: boom" in (out / "crash" / "error.txt").read_text()
    assert "total" in text.strip().splitlines()[-1]
    report = (out / "REPORT.md").read_text()
    assert "## good: works" in report and "## hang: ERROR" in report
    result = json.loads((out / "good" / "result.json").read_text())
    assert result["passed"] is True and result["headline"] == "threads 1"  # 2 cores / 2 jobs
    # REPORT.md has the same package sections as a serial run of the working package
    serial = tmp_path / "serial"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "icml26_tools",
            "reproduce",
            "good",
            "--jobs",
            "1",
            "--out",
            str(serial),
            "--no-progress",
        ],
        env={**env, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    def section(text: str) -> str:
        return text.split("## good")[1].split("\n## ")[0].strip()

    assert section((serial / "REPORT.md").read_text()) == section(report)


def test_longest_first_uses_the_last_run_then_typical_times(tmp_path):
    (tmp_path / "dxpp").mkdir()
    (tmp_path / "dxpp" / "result.json").write_text(json.dumps({"quick": True, "seconds": 999}))
    order = parallel.order_longest_first(["collab-cp", "dxpp", "bittokens", "new"], tmp_path, True)
    assert order == ["dxpp", "bittokens", "new", "collab-cp"]


def test_thread_env_limits_every_pool():
    env = parallel.thread_env(1, base={"XLA_FLAGS": "--foo"})
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1"
    assert (
        env["XLA_FLAGS"].startswith("--foo")
        and "intra_op_parallelism_threads=1" in env["XLA_FLAGS"]
    )
    assert "XLA_FLAGS" not in parallel.thread_env(2, base={})
