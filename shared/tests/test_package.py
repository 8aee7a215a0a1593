"""The package's surface: lazy submodules, the version from metadata, runnable docstrings."""

import doctest
import importlib
import subprocess
import sys
from importlib import metadata

import pytest

import icml26_shared

MODULES = sorted(
    "bench checks config conformal datasets experiment jobs metrics state testing threads".split()
)


def test_importing_checks_imports_nothing_heavy():
    code = (
        "import sys, icml26_shared.checks; "
        "heavy = {'scipy', 'matplotlib', 'sklearn', 'torch', 'jax', 'tqdm', 'pandas'} & "
        "{m.split('.')[0] for m in sys.modules}; "
        "assert not heavy, heavy; "
        "assert 'icml26_shared.metrics' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_metrics_and_conformal_import_without_scipy():
    code = (
        "import sys, icml26_shared.metrics, icml26_shared.conformal, icml26_shared.datasets; "
        "assert 'scipy' not in {m.split('.')[0] for m in sys.modules}"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_submodules_load_on_attribute_access_and_version_comes_from_metadata():
    assert sorted(icml26_shared.__all__) == MODULES
    for name in MODULES:
        assert getattr(icml26_shared, name) is importlib.import_module(f"icml26_shared.{name}")
    assert icml26_shared.__version__ == metadata.version("icml26-shared")
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        icml26_shared.nope


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(f"icml26_shared.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
