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

import pytest


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
