"""What a new user meets first: the README's first example runs verbatim; a light import."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from icml26_shared.testing import assert_import_is_light

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_first_example_runs_verbatim(capsys):
    pytest.importorskip("torch")
    pytest.importorskip("jax")
    first, jax_block = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[:2]
    scope: dict = {}
    exec(compile(first, str(README), "exec"), scope)
    assert "torch.Size([100])" in capsys.readouterr().out
    assert scope["z"].shape == (1, 100)
    assert scope["grads"].q.shape == (100,)
    exec(compile(jax_block, str(README), "exec"), scope)  # the JAX block, right after it
    assert scope["g"].shape == (100,)


def test_import_loads_no_scipy_stats_sklearn_or_matplotlib():
    assert_import_is_light("dxpp", ["scipy.stats", "sklearn", "matplotlib"])
    assert_import_is_light("dxpp.torch", ["scipy.stats", "sklearn", "matplotlib"])
