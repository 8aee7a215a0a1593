"""The reproduce pieces at small sizes; the whole quick run is marked slow."""

import dataclasses

import numpy as np
import pytest

from arm_ebm import _acceptance as acc
from arm_ebm import _reproduce as rep
from arm_ebm.data import planning_task
from icml26_shared.config import override
from icml26_shared.experiment import ExperimentResult, ResultTable


def test_rows_and_figures(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    task = planning_task(0)
    from arm_ebm import ebm_to_arm

    q_star = ebm_to_arm(task.r, task.space)
    t = ResultTable("t", rep.COLUMNS)
    ex = rep._row(t, "exact", "distilled: exact backup", task, q_star, q_star, 0.0, 2000, 0)
    p0 = rep._row(t, "p0", "p0 (bigram)", task, q_star, task.q0, 0.0, 2000, 1)
    assert list(t.rows) == ["exact", "p0"] and t.label("p0") == "p0 (bigram)"
    assert ex["satisfaction"] == 1.0 and ex["kl"] <= 1e-10
    assert p0["kl"] > 1 and p0["satisfaction"] < 0.2 and p0["bound"] >= p0["kl"]
    X = rep.key_features(task)
    assert X.shape == (task.space.n_states, 11 + 23 + 4)
    path = rep._lookahead_figure(plt, task, q_star, tmp_path)
    assert path.exists() and path.stat().st_size > 1000
    curves = {"trie states": ([10, 100], [1.0, 0.5], [2.0, 1.0])}
    path = rep._curve_figure(plt, curves, [4, 16], [{"kl": 0.1, "bound": 0.3}] * 2, tmp_path)
    assert path.exists()


def test_config_presets_and_validation():
    assert rep.EXPERIMENT.quick_config is rep.QUICK and rep.EXPERIMENT.full_config is rep.FULL
    assert override(rep.QUICK, ["mlp_widths=8,32"]).mlp_widths == (8, 32)
    with pytest.raises(ValueError, match="mle_ns must include"):
        dataclasses.replace(rep.QUICK, mle_ns=(100, 1_000))
    with pytest.raises(ValueError, match="steps must be >= 1"):
        dataclasses.replace(rep.QUICK, steps=0)


def test_item_checks_record_values_and_fail_with_the_item():
    items = {
        "1": {"r_round_trip": 0.0, "q_round_trip": 1e-13, "prob": 0.0, "log_z": 0.0},
        "2": {"tab_value_err": 1e-12, "tab_grad_err": 1e-11},
        "3": {
            "finite": True,
            "no_nan": True,
            "exact_zeros": True,
            "samples_in_support": True,
            "rel_round_trip": 0.0,
            "masked_prob_err": 0.0,
            "jax_vs_numpy": float("nan"),  # jax missing: item 3 fails, as before
        },
        "4": {"factored_vs_trie_T10": 0.0, "brute_err": 0.0, "log_z_T200": 1.0},
        "5": {"p_value_fixed": 0.5, "p_value_eos": 0.2},
        "6": {
            "exact_kl": 0.0,
            "slope": -1.0,
            "mlp_kl": [1e-2, 1e-4],
            "mlp_widths": [4, 64],
            "strictly_decreasing": True,
            "within_2x": True,
            "mlp_monotone": True,
            "bound_holds": True,
        },
    }
    result = ExperimentResult("arm-ebm", "t")
    rep._record_items(result, items)
    failed = [c.id for c in result.details if not c.passed]
    assert failed == ["stability"]
    assert sum(not v for v in result.checks.values()) == 1


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
