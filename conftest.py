"""Root pytest hooks shared by the whole workspace.

Notebooks under notebooks/ are executed through nbmake when the plugin is installed (the root
`dev` group has it); a member's isolated test run (`uv run --package X --group test pytest
packages/X`) does not need it.

The whole default suite (`uv run pytest` with no paths) runs on every core through
pytest-xdist, one test file per worker (`--dist loadfile`, so a file's compiled models and
fixtures are built once). With paths, `-n N`, `--pdb`, `--collect-only` or without xdist it
runs in one process as usual; `-n 0` turns the workers off.
"""

import importlib.util
import os

import pytest

# One xdist worker per core: each worker's OpenMP/BLAS pools get the cores divided among the
# workers (the variables before any package imports torch; numpy's BLAS, loaded already,
# through threadpoolctl), else two workers of two threads
# each share two cores and OpenMP's spinning threads slow each other down (shnap's tests:
# 140 s with two threads per worker against 54 s with one, on 2 cores)
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0") or 0)
if _WORKERS > 1:
    from icml26_shared.experiment import THREAD_VARS  # the pools thread_env sets for workers

    _threads = str(max(1, (os.cpu_count() or 1) // _WORKERS))
    for _var in THREAD_VARS:
        os.environ.setdefault(_var, _threads)
    if importlib.util.find_spec("threadpoolctl") is not None:  # numpy's BLAS is loaded by now
        from threadpoolctl import threadpool_limits

        threadpool_limits(int(os.environ["OPENBLAS_NUM_THREADS"]), user_api="blas")


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    if (
        config.pluginmanager.hasplugin("xdist")
        and config.option.numprocesses is None  # no -n given
        and not hasattr(config, "workerinput")  # not inside a worker
        and config.args_source == pytest.Config.ArgsSource.TESTPATHS  # the whole suite
        and not config.getoption("usepdb")
        and not config.getoption("collectonly")
    ):
        config.option.numprocesses = "auto"
        config.option.dist = "loadfile"


def pytest_configure(config):
    if importlib.util.find_spec("nbmake") is not None and hasattr(config.option, "nbmake"):
        config.option.nbmake = True
