"""Every docstring example in the package runs (doctest over each module)."""

import doctest
import importlib
import pkgutil

import pytest

import up_ocp

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(up_ocp.__path__, prefix="up_ocp.")
    if m.name != "up_ocp.__main__"
)


@pytest.mark.parametrize("name", ["up_ocp", *MODULES])
def test_docstring_examples_run(name):
    if name.endswith("_jax"):
        pytest.importorskip("jax")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, name
