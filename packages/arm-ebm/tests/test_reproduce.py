"""The reproduce pieces at small sizes; the whole quick run is marked slow."""

import numpy as np
import pytest

from arm_ebm import _acceptance as acc
from arm_ebm import _reproduce as rep
from arm_ebm.data import planning_task
from icml26_shared.experiment import ResultTable


def test_rows_and_figures(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    task = planning_task(0)
    from arm_ebm import ebm_to_arm

    q_star = ebm_to_arm(task.r, task.space)
    t = ResultTable("t", rep.COLUMNS)
    ex = rep._row(t, "exact", task, q_star, q_star, 0.0, 2000, 0)
    p0 = rep._row(t, "p0", task, q_star, task.q0, 0.0, 2000, 1)
    assert ex["satisfaction"] == 1.0 and ex["kl"] <= 1e-10
    assert p0["kl"] > 1 and p0["satisfaction"] < 0.2 and p0["bound"] >= p0["kl"]
    X = rep.key_features(task)
    assert X.shape == (task.space.n_states, 11 + 23 + 4)
    path = rep._lookahead_figure(plt, task, q_star, tmp_path)
    assert path.exists() and path.stat().st_size > 1000
    curves = {"trie states": ([10, 100], [1.0, 0.5], [2.0, 1.0])}
    path = rep._curve_figure(plt, curves, [4, 16], [{"kl": 0.1, "bound": 0.3}] * 2, tmp_path)
    assert path.exists()


def test_cheap_acceptance_items():
    r1 = acc.item1(seeds=1)
    assert r1["pass"] and r1["cases"] == 18
    r5 = acc.item5(n=20_000)
    assert r5["pass"]


@pytest.mark.slow
def test_all_acceptance_items_pass():
    for fn in (acc.item1, acc.item2, acc.item3, acc.item4, acc.item5, acc.item6):
        res = fn()
        assert res["pass"], (fn.__name__, res)


@pytest.mark.slow
def test_quick_reproduce(tmp_path):
    res = rep.EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    assert res.passed, res.checks
    assert (tmp_path / "result.json").exists() and len(res.figures) == 2
    assert np.isfinite(res.seconds)
