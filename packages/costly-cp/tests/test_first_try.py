"""What a new user meets first: the README's first example runs verbatim; a light import."""

from __future__ import annotations

import re
from pathlib import Path

from icml26_shared.testing import assert_import_is_light

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_first_example_runs_verbatim(capsys):
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    exec(compile(code, str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "259 0.86196" in out


def test_import_loads_no_scipy_stats_sklearn_or_matplotlib():
    assert_import_is_light("costly_cp", ["scipy.stats", "sklearn", "matplotlib"])
