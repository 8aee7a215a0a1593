import pytest

from icml26_shared.doctests import modules_with_examples, run_examples


@pytest.mark.parametrize("name", modules_with_examples("shnap"))
def test_docstring_examples_run(name):
    result = run_examples(name)
    assert result.attempted > 0 and result.failed == 0, name
