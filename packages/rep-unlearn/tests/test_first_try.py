"""What a new user meets first: a light import (the README example runs in test_reproduce)."""

from __future__ import annotations

import subprocess
import sys


def test_import_loads_no_scipy_stats_sklearn_or_matplotlib():
    code = (
        "import rep_unlearn, sys; "
        "print(*(m in sys.modules for m in ('scipy.stats', 'sklearn', 'matplotlib')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False"] * 3
