import os
import pickle

import pytest

from icml26_shared.jobs import Job, JobRunner, RunPaused, _lanes


def square(x: int) -> dict:
    return {"x": x, "sq": x * x, "threads": os.environ.get("OMP_NUM_THREADS"), "pid": os.getpid()}


def boom(x: int) -> int:
    raise RuntimeError(f"job {x} failed")


def _jobs(n: int, groups: int = 1) -> list[Job]:
    return [Job(f"sq-{i}", square, (i,), group=f"g{i % groups}") for i in range(n)]


def test_results_by_name_are_cached_and_reused(tmp_path):
    runner = JobRunner(tmp_path, {"config": {"n": 3}, "code": 1}, workers=1, progress=False)
    out = runner.run(_jobs(3))
    assert [out[f"sq-{i}"]["sq"] for i in range(3)] == [0, 1, 4]
    assert sorted(runner.cached(_jobs(3))) == ["sq-0", "sq-1", "sq-2"]
    # a cached result is read back, not recomputed: tamper with one and see it returned
    path = runner.path(_jobs(3)[1])
    path.write_bytes(pickle.dumps({"sq": -1}))
    assert runner.run(_jobs(3))["sq-1"] == {"sq": -1}


def test_another_config_or_code_version_never_reuses_results(tmp_path):
    a = JobRunner(tmp_path, {"config": {"n": 3}, "code": 1}, workers=1, progress=False)
    b = JobRunner(tmp_path, {"config": {"n": 4}, "code": 1}, workers=1, progress=False)
    c = JobRunner(tmp_path, {"config": {"n": 3}, "code": 2}, workers=1, progress=False)
    a.run(_jobs(2))
    assert b.cached(_jobs(2)) == [] and c.cached(_jobs(2)) == []
    # the same name with other arguments is another job
    assert a.cached([Job("sq-0", square, (7,))]) == []


def test_max_new_jobs_pauses_and_a_rerun_resumes(tmp_path):
    runner = JobRunner(tmp_path, "k", workers=1, progress=False, max_new_jobs=2)
    with pytest.raises(RunPaused) as info:
        runner.run(_jobs(5))
    assert info.value.code == 3 and (info.value.done, info.value.remaining) == (2, 3)
    assert "rerun to resume" in str(info.value)
    with pytest.raises(RunPaused):
        runner.run(_jobs(5))
    out = runner.run(_jobs(5))
    assert [out[f"sq-{i}"]["sq"] for i in range(5)] == [0, 1, 4, 9, 16]


def test_workers_run_groups_in_one_process_with_their_thread_share(tmp_path):
    # the jobs are os functions: spawned workers import them whatever this test module's name
    jobs = []
    for g in (0, 1):
        jobs += [Job(f"pid-{g}-{i}", os.getpid, (), group=f"g{g}") for i in range(2)]
        jobs += [
            Job(f"{v}-{g}", os.getenv, (v,), group=f"g{g}") for v in ("OMP_NUM_THREADS", "EXTRA")
        ]
    runner = JobRunner(tmp_path, "k", workers=2, progress=False, env={"EXTRA": "1"})
    out = runner.run(jobs)
    pids = [{out[f"pid-{g}-{i}"] for i in range(2)} for g in (0, 1)]
    assert all(len(p) == 1 for p in pids) and pids[0] != pids[1]
    assert os.getpid() not in pids[0] | pids[1]
    assert all(out[f"OMP_NUM_THREADS-{g}"] == "1" and out[f"EXTRA-{g}"] == "1" for g in (0, 1))
    assert "EXTRA" not in os.environ


def test_a_failing_job_raises_here_and_keeps_the_finished_ones(tmp_path):
    runner = JobRunner(tmp_path, "k", workers=1, progress=False)
    jobs = [*_jobs(2), Job("bad", boom, (9,))]
    with pytest.raises(RuntimeError, match="job 9 failed"):
        runner.run(jobs)
    assert sorted(runner.cached(jobs)) == ["sq-0", "sq-1"]
    assert not list(tmp_path.glob(".*.tmp"))  # no half-written files


def test_lanes_balance_whole_groups_costliest_first():
    jobs = [Job(f"a{i}", square, group="a", cost=10) for i in range(3)]
    jobs += [Job(f"b{i}", square, group="b", cost=1) for i in range(4)]
    jobs += [Job("c0", square, group="c", cost=25)]
    lanes = _lanes(jobs, 2)
    assert [sorted({j.group for j in lane}) for lane in lanes] == [["a"], ["b", "c"]]
    assert len(_lanes(_jobs(4), 2)) == 2  # one group split to fill two workers


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"workers": 0}, "workers must be"), ({"max_new_jobs": 0}, "max_new_jobs must be")],
)
def test_bad_arguments_are_refused(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=message):
        JobRunner(tmp_path, "k", **kwargs)
    with pytest.raises(ValueError, match="job name must be"):
        Job("a b", square)
    with pytest.raises(ValueError, match="job names must be unique"):
        JobRunner(tmp_path, "k").run([Job("x", square, (1,)), Job("x", square, (2,))])


def grow(items: list) -> int:
    items.append(1)  # changes its own argument while it runs (in this process)
    return len(items)


def test_a_job_that_changes_its_arguments_still_finds_its_result(tmp_path):
    runner = JobRunner(tmp_path, "k", workers=1, progress=False)
    items: list = []
    assert runner.run([Job("grow", grow, (items,))]) == {"grow": 1}
