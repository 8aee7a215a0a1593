"""What a new user meets first: the README's first example runs verbatim; a light import."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

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
    code = (
        "import dxpp, dxpp.torch, sys; "
        "print(*(m in sys.modules for m in ('scipy.stats', 'sklearn', 'matplotlib')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"] * 3
