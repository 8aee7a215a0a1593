"""Every docstring example in the package runs (doctest over each module)."""

import doctest
import importlib
import pkgutil

import pytest

import costly_cp

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(costly_cp.__path__, prefix="costly_cp.")
    if m.name != "costly_cp.__main__"
)


@pytest.mark.parametrize("name", ["costly_cp", *MODULES])
def test_docstring_examples_run(name):
    if name.endswith("_jax"):
        pytest.importorskip("jax")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, name
