"""``icml26 reproduce --jobs N``: packages in worker processes, longest first.

Each package runs in its own ``python -m icml26_tools.worker`` process whose thread pools
(OpenMP/MKL/OpenBLAS through their environment variables, torch through ``OMP_NUM_THREADS``,
XLA through ``XLA_FLAGS``) are limited to its share of the cores, ``max(1, cores // N)``. The
worker calls the same :meth:`Experiment.run` as a serial run, so ``result.json`` and the
printed tables are the same; the parent prints each package's table and one progress line
as it finishes, kills a package that runs past ``timeout`` seconds and records a crash or a
timeout as an error while the others go on.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from icml26_shared.experiment import available_cores, thread_env

__all__ = ["Outcome", "cores", "order_longest_first", "run_parallel", "thread_env"]

#: quick-mode seconds of each package in a one-thread worker of ``--jobs 2`` on a 2-core AVX2
#: machine, beside the other worker (a scheduling hint only, used when no earlier result.json
#: says better)
TYPICAL_QUICK_SECONDS = {
    "gse-flow": 338,
    "bittokens": 290,
    "perturbedvae": 281,
    "shnap": 243,
    "geomem": 243,
    "metastreet": 240,
    "brain-attrib": 159,
    "r4-rl": 106,
    "costly-cp": 96,
    "up-ocp": 89,
    "rep-unlearn": 54,
    "dlpt-policy": 44,
    "arm-ebm": 41,
    "dxpp": 32,
    "rsa-cp": 19,
    "collab-cp": 12,
}


cores = available_cores  # the cores this process may run on


def _previous_seconds(out: Path, name: str, quick: bool) -> float | None:
    path = out / name / "result.json"
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if bool(data.get("quick")) != quick or not isinstance(data.get("seconds"), int | float):
        return None
    return float(data["seconds"])


def order_longest_first(names: list[str], out: Path, quick: bool) -> list[str]:
    """Longest expected first: the last run's seconds, else :data:`TYPICAL_QUICK_SECONDS`
    (×5 in full mode), else 60 s."""

    def expected(name: str) -> float:
        prev = _previous_seconds(out, name, quick)
        if prev is not None:
            return prev
        return TYPICAL_QUICK_SECONDS.get(name, 60) * (1 if quick else 5)

    return sorted(names, key=lambda n: (-expected(n), n))


@dataclass
class Outcome:
    """One package's run: exit code (None: timed out), seconds, captured output."""

    name: str
    code: int | None
    seconds: float
    stdout: str = ""
    stderr: str = ""
    error: str = field(default="")


def run_parallel(
    names: list[str],
    *,
    jobs: int,
    quick: bool,
    out: Path,
    timeout: float | None,
    on_done: Callable[[Outcome], None],
) -> list[Outcome]:
    """Run every package in a worker process, at most ``jobs`` at once, longest first."""
    threads = max(1, cores() // max(jobs, 1))
    env = thread_env(threads)
    queue = order_longest_first(names, out, quick)
    running: dict[str, tuple[subprocess.Popen, float, Path, Path]] = {}
    done: list[Outcome] = []
    logs = out / ".logs"
    logs.mkdir(parents=True, exist_ok=True)
    while queue or running:
        while queue and len(running) < jobs:
            name = queue.pop(0)
            cmd = [sys.executable, "-m", "icml26_tools.worker", name, "--out", str(out)]
            if quick:
                cmd.append("--quick")
            so, se = logs / f"{name}.out", logs / f"{name}.err"
            with so.open("w") as fo, se.open("w") as fe:
                proc = subprocess.Popen(cmd, env=env, stdout=fo, stderr=fe, start_new_session=True)
            running[name] = (proc, time.perf_counter(), so, se)
        time.sleep(0.2)
        for name, (proc, start, so, se) in list(running.items()):
            elapsed = time.perf_counter() - start
            code = proc.poll()
            if code is None and timeout is not None and elapsed > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                code = None
                outcome = Outcome(name, None, elapsed, error=f"timed out after {timeout:.0f} s")
            elif code is None:
                continue
            else:
                outcome = Outcome(name, code, elapsed)
            outcome.stdout = so.read_text(errors="replace")
            outcome.stderr = se.read_text(errors="replace")
            if outcome.code not in (0, None) and not outcome.error:
                outcome.error = outcome.stderr.strip() or f"exited with code {outcome.code}"
            del running[name]
            done.append(outcome)
            on_done(outcome)
    return done
