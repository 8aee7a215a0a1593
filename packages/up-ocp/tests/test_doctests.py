"""Every docstring example in the package runs (doctest over each module that has one)."""

import pytest

from icml26_shared.doctests import modules_with_examples, run_examples

MODULES = modules_with_examples("up_ocp")


def test_examples_exist():
    assert MODULES


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    result = run_examples(name)
    assert result.attempted > 0 and result.failed == 0, name
