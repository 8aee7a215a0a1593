"""Every docstring example in the package runs (doctest over each module)."""

import doctest
import importlib
import pkgutil

import pytest

import rsa_cp

MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(rsa_cp.__path__, prefix="rsa_cp.")
    if m.name != "rsa_cp.__main__"
)


@pytest.mark.parametrize("name", ["rsa_cp", *MODULES])
def test_docstring_examples_run(name):
    if name.endswith("_jax"):
        pytest.importorskip("jax")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, name
