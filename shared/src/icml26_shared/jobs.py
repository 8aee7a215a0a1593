"""A resumable job runner for experiments made of many independent runs (seeds, arms, sizes).

Each :class:`Job` is a picklable call ``fn(*args)``; :class:`JobRunner` runs the jobs whose
result is not yet in its cache folder and returns every job's result by name. A result is written
atomically (a temporary file, then ``os.replace``) the moment its job ends, so a run stopped by
Ctrl-C, a timeout or :class:`RunPaused` keeps every finished job, and running the same experiment
again resumes where it stopped. The cache key is the experiment's config and a code version the
package bumps when a job's result would change: results of another config or code are never
reused (they sit under other file names).

Jobs of one ``group`` run one after another in the same worker process (they share what the
process compiled or loaded: a JIT-compiled train loop, a dataset); groups are spread over
``workers`` spawned processes, the costliest first to the least loaded worker, each worker with
its share of the cores' threads (:func:`icml26_shared.experiment.thread_env`). A progress bar
counts finished jobs and shows an ETA.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icml26_shared.experiment import cpu_share, progress_enabled, say, thread_env

__all__ = ["Job", "JobRunner", "RunPaused"]


@dataclass(frozen=True)
class Job:
    """One independent run: ``fn(*args)``.

    Attributes:
        name: stable and unique within a run (letters, digits, ``-_.``); the cache file's stem.
        fn: a module-level function (workers import it by name).
        args: picklable arguments.
        group: jobs of one group run in one worker, in order (shared compiled code).
        cost: rough relative cost (seconds), used to balance the workers.
    """

    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()
    group: str = ""
    cost: float = 1.0

    def __post_init__(self) -> None:
        ok = self.name and all(c.isalnum() or c in "-_." for c in self.name)
        if not ok:
            raise ValueError(
                f"job name must be letters, digits, '-', '_' or '.', got {self.name!r}"
            )
        if not (self.cost >= 0):
            raise ValueError(f"job cost must be >= 0, got {self.cost!r}")


class RunPaused(SystemExit):
    """Raised (exit code 3) when ``max_new_jobs`` jobs have run and others remain: run the same
    command again to resume."""

    def __init__(self, done: int, remaining: int) -> None:
        super().__init__(3)
        self.done, self.remaining = done, remaining

    def __str__(self) -> str:
        return f"paused after {self.done} new job(s), {self.remaining} to go: rerun to resume"


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _run_lane(lane: list[tuple[Callable[..., Any], tuple[Any, ...], str]]) -> None:
    """A worker's jobs, one after the other: each result is cached the moment it exists."""
    for fn, args, path in lane:
        _write_atomic(Path(path), pickle.dumps(fn(*args)))


def _lanes(jobs: Sequence[Job], n: int) -> list[list[Job]]:
    """Whole groups to ``n`` lanes, costliest group first to the least loaded lane (with fewer
    groups than lanes, the largest groups are split in halves)."""
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        groups.setdefault(job.group or job.name, []).append(job)
    parts = list(groups.values())
    while len(parts) < n:
        big = max(parts, key=len)
        if len(big) < 2:
            break
        parts.remove(big)
        half = (len(big) + 1) // 2
        parts += [big[:half], big[half:]]
    lanes: list[list[Job]] = [[] for _ in range(min(n, len(parts)))]
    load = [0.0] * len(lanes)
    for part in sorted(parts, key=lambda p: -sum(j.cost for j in p)):
        i = load.index(min(load))
        lanes[i] += part
        load[i] += sum(j.cost for j in part)
    return lanes


class JobRunner:
    """Run jobs once each, cached under ``cache_dir`` by config and code version.

    Args:
        cache_dir: folder of the cached results (created).
        key: what the results depend on besides the job's own name and arguments: the config
            (:func:`icml26_shared.config.config_dict`) and a code version, JSON-serialisable.
        workers: worker processes (default :func:`icml26_shared.experiment.cpu_share`); with
            one, jobs run in this process, in order.
        progress: a bar with an ETA (``None``: on a terminal; a line per stage when piped).
        max_new_jobs: run at most this many uncached jobs, then raise :class:`RunPaused`.
        env: extra environment variables for the workers (e.g. a shared compilation cache).
        desc: the progress bar's label.
    """

    def __init__(
        self,
        cache_dir: Path | str,
        key: Mapping[str, Any] | str,
        *,
        workers: int | None = None,
        progress: bool | None = None,
        max_new_jobs: int | None = None,
        env: Mapping[str, str] | None = None,
        desc: str = "jobs",
    ) -> None:
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be an int >= 1, got {workers!r}")
        if max_new_jobs is not None and (not isinstance(max_new_jobs, int) or max_new_jobs < 1):
            raise ValueError(f"max_new_jobs must be an int >= 1, got {max_new_jobs!r}")
        self.cache_dir = Path(cache_dir)
        blob = json.dumps(key, sort_keys=True, default=str)
        self.tag = hashlib.sha256(blob.encode()).hexdigest()[:12]
        self.workers = workers
        self.progress = progress
        self.max_new_jobs = max_new_jobs
        self.env = dict(env or {})
        self.desc = desc

    def path(self, job: Job) -> Path:
        """Where ``job``'s result is cached: its name, the run's tag and a digest of its args."""
        args = hashlib.sha256(pickle.dumps(job.args)).hexdigest()[:8]
        return self.cache_dir / f"{job.name}-{self.tag}-{args}.pkl"

    def cached(self, jobs: Sequence[Job]) -> list[str]:
        """Names of the jobs whose result is already cached."""
        return [j.name for j in jobs if self.path(j).exists()]

    def run(self, jobs: Sequence[Job]) -> dict[str, Any]:
        """Each job's result by name (cached ones read back, the others run now)."""
        names = [j.name for j in jobs]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"job names must be unique, repeated: {dup}")
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        # each path once, before anything runs: a job that changes its arguments, or whose
        # arguments pickle differently later, still finds its result
        paths = {j.name: self.path(j) for j in jobs}
        todo = [j for j in jobs if not paths[j.name].exists()]
        now = todo if self.max_new_jobs is None else todo[: self.max_new_jobs]
        if now:
            self._execute(now, paths, n_cached=len(jobs) - len(todo))
        if len(now) < len(todo):
            pause = RunPaused(len(now), len(todo) - len(now))
            say(f"{self.desc}: {pause}", enabled=self.progress)
            raise pause
        return {j.name: pickle.loads(paths[j.name].read_bytes()) for j in jobs}

    def _execute(self, jobs: list[Job], paths: dict[str, Path], n_cached: int) -> None:
        n = min(cpu_share() if self.workers is None else self.workers, len(jobs))
        lanes = _lanes(jobs, n)
        bar = self._bar(len(jobs), n_cached, len(lanes))
        try:
            if len(lanes) <= 1:
                for job in jobs:
                    _run_lane([(job.fn, job.args, str(paths[job.name]))])
                    bar.update(1)
            else:
                self._in_workers(lanes, paths, bar)
        finally:
            bar.close()

    def _bar(self, total: int, n_cached: int, n_lanes: int) -> Any:
        from tqdm.auto import tqdm

        on = progress_enabled(self.progress)
        if self.progress is not False and not on:
            say(f"{self.desc}: {total} job(s) to run ({n_cached} cached), {n_lanes} worker(s)")
        return tqdm(total=total, desc=self.desc, disable=not on, file=sys.stderr, leave=False)

    def _in_workers(self, lanes: list[list[Job]], paths: dict[str, Path], bar: Any) -> None:
        from multiprocessing import get_context

        share = max(1, cpu_share() // len(lanes))
        saved = dict(os.environ)
        os.environ.update(thread_env(share))  # inherited by the spawned workers, then restored
        os.environ.update(self.env)
        start = time.perf_counter()
        try:
            with ProcessPoolExecutor(len(lanes), mp_context=get_context("spawn")) as pool:
                futures = [
                    pool.submit(_run_lane, [(j.fn, j.args, str(paths[j.name])) for j in lane])
                    for lane in lanes
                ]
                pending = set(futures)
                seen = 0
                while pending:
                    done, pending = wait(pending, timeout=1.0, return_when=FIRST_COMPLETED)
                    for fut in done:
                        fut.result()  # a job's exception is raised here
                    finished = sum(paths[j.name].exists() for lane in lanes for j in lane)
                    bar.update(finished - seen)
                    seen = finished
        finally:
            os.environ.clear()
            os.environ.update(saved)
        if self.progress is not False and not progress_enabled(self.progress):
            say(f"{self.desc}: done in {time.perf_counter() - start:.1f} s")
