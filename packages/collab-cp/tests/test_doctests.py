"""Every docstring example in the package runs (doctest over each module)."""

import doctest
import importlib
import pkgutil

import pytest

import collab_cp

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(collab_cp.__path__, prefix="collab_cp.")
    if m.name != "collab_cp.__main__"
)


@pytest.mark.parametrize("name", ["collab_cp", *MODULES])
def test_docstring_examples_run(name):
    if name.endswith("_jax"):
        pytest.importorskip("jax")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, name
