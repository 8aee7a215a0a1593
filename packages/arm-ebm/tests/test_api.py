import doctest
import importlib

import pytest

import arm_ebm

MODULES = [
    "arm_ebm",
    "arm_ebm._space",
    "arm_ebm._maps",
    "arm_ebm._sampling",
    "arm_ebm._kl",
    "arm_ebm._distill",
    "arm_ebm.baselines",
    "arm_ebm.data",
    "arm_ebm._acceptance",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert res.failed == 0


def test_public_names_and_version():
    for name in arm_ebm.__all__:
        assert hasattr(arm_ebm, name)
    for required in (
        "SequenceSpace",
        "reward_to_steps",
        "ebm_to_arm",
        "arm_to_ebm",
        "log_partition",
        "log_prob_arm",
    ):
        assert required in arm_ebm.__all__
    assert arm_ebm.__version__ == importlib.metadata.version("arm-ebm")
    space = arm_ebm.SequenceSpace(3, 3, eos=None)
    assert isinstance(space.sequences(), list) and space.sequences()[0] == (0, 0, 0)


def test_readme_example_runs(capsys):
    from pathlib import Path

    text = (Path(__file__).parents[1] / "README.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "README.md", "exec"), {})
    assert "<=" in capsys.readouterr().out
