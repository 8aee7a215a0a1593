"""Benchmark peers: run through our probes when they import, skip with the reason when not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from geomem.graphs import path_star

_RUN = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


def _bench():
    spec = importlib.util.spec_from_file_location("geomem_bench_run", _RUN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_load_peer_reports_any_failure_as_a_reason():
    bench = _bench()
    mod, why = bench.load_peer("geomem_no_such_peer_module")
    assert mod is None and why.startswith("geomem_no_such_peer_module unavailable: ")
    assert "ModuleNotFoundError" in why
    mod, why = bench.load_peer("numpy")
    assert mod is np and why is None


def test_pecanpy_peer_or_clean_skip():
    bench = _bench()
    mod, why = bench.load_peer("pecanpy.pecanpy")
    if mod is None:
        pytest.skip(why)  # e.g. AttributeError np.bool8 (nptyping) under numpy 2
    g = path_star(5, 3, seed=0)
    emb = bench.peer_pecanpy(g, quick=True)
    assert emb.shape == (g.n_nodes, 100) and np.isfinite(emb).all()
    out = bench.probes(emb, g, 5)
    assert 0.0 <= out["navigation"] <= 1.0
