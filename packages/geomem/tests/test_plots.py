"""The four reproduce figures render (matplotlib optional)."""

from __future__ import annotations

import numpy as np
import pytest

from geomem.graphs import path_star


def test_figures(tmp_path):
    pytest.importorskip("matplotlib")
    from geomem import plots as _plots

    g = path_star(5, 3, 0)
    rng = np.random.default_rng(0)
    embs = {"a": rng.normal(size=(g.n_nodes, 4)), "b": rng.normal(size=(g.n_nodes, 4))}
    hist = {"a": [{"step": 0.0, "navigation": 0.2}, {"step": 10.0, "navigation": 0.6}]}
    paths = [
        _plots.plot_history(hist, ("navigation",), tmp_path / "h.png"),
        _plots.plot_energy(embs, g, tmp_path / "e.png"),
        _plots.plot_pca(embs, g, tmp_path / "p.png"),
        _plots.plot_heatmap(embs, g, tmp_path / "c.png"),
    ]
    assert all(p.exists() and p.stat().st_size > 1000 for p in paths)
