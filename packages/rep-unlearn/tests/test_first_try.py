"""What a new user meets first: a light import (the README example runs in test_reproduce)."""

from __future__ import annotations

from icml26_shared.testing import assert_import_is_light


def test_import_loads_no_scipy_stats_sklearn_or_matplotlib():
    assert_import_is_light("rep_unlearn", ["scipy.stats", "sklearn", "matplotlib"])
