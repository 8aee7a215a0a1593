"""Every docstring example in the package runs (doctest over each module that has one)."""

import doctest
import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest

import rsa_cp


def _has_examples(name: str) -> bool:
    spec = importlib.util.find_spec(name)
    return spec is not None and ">>>" in Path(spec.origin).read_text()


# found without importing the modules (`_jax` would import jax just to find no example)
MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(rsa_cp.__path__, prefix="rsa_cp.")
    if m.name != "rsa_cp.__main__" and _has_examples(m.name)
)


def test_examples_exist():
    assert MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, name
