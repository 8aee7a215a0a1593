"""What a new user meets first: the README's first example runs verbatim; a light import."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from icml26_shared.testing import assert_import_is_light

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow  # two 30,000-step full-batch fits
def test_readme_first_example_runs_verbatim(capsys):
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    exec(compile(code, str(README), "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Node2Vec 1.0 1.0") and lines[1].startswith("AssociativeControl")


def test_import_loads_no_scipy_stats_sklearn_or_matplotlib():
    assert_import_is_light("geomem", ["scipy.stats", "sklearn", "matplotlib"])
