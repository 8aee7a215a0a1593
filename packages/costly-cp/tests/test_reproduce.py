"""Pieces of ``reproduce`` at tiny sizes (the quick run itself takes minutes)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from costly_cp._reproduce import (
    EXPERIMENT,
    FULL,
    QUICK,
    _figure,
    _small_m_checks,
    _work_table,
)
from costly_cp._simulate import ratio_estimate, run_rule
from icml26_shared.config import override
from icml26_shared.experiment import ExperimentResult


def test_experiment_object():
    assert EXPERIMENT.package == "costly-cp"
    assert callable(EXPERIMENT.reproduce)
    assert EXPERIMENT.quick_config is QUICK and EXPERIMENT.full_config is FULL


def test_config_reps_overrides_and_validation():
    assert QUICK.reps == {1_000: 300, 10_000: 300, 100_000: 100}
    cfg = override(QUICK, ["reps_n1e5=50", "more_populations=yes"])
    assert cfg.reps[100_000] == 50 and cfg.more_populations is True
    with pytest.raises(ValueError, match="pac_pools must be >= 2"):
        dataclasses.replace(QUICK, pac_pools=1)
    with pytest.raises(ValueError, match="work_max_m"):
        dataclasses.replace(QUICK, work_max_m=999)


def test_small_m_and_work_checks():
    result = ExperimentResult("costly-cp", "t")
    _small_m_checks(result)
    table = _work_table(result, 20_000)
    assert result.checks and all(result.checks.values())
    (refits,) = result.details
    assert refits.id == "refits" and refits.value <= refits.bound
    assert "m=10000" in table.rows


def test_figure_is_written(population, tmp_path):
    path = _figure(population, tmp_path)
    assert path.exists() and path.stat().st_size > 10_000


def test_ratio_estimate_and_run_rule(population):
    st = run_rule(population, alpha=0.1, n_future=1e3, rule="plugin", reps=5, fixed=(100,), seed=1)
    cut, se = ratio_estimate(st.excess, st.fixed_excess[100])
    assert math.isfinite(cut) and se >= 0
    assert st.labels.min() >= 40


def test_real_sets_load_and_make_a_population():
    pytest.importorskip("sklearn")
    from costly_cp._simulate import real_population
    from costly_cp.data import REAL_SETS, load_real

    X, y = load_real("wine")
    assert X.shape == (178, 13) and set(y) == {0, 1, 2}
    with pytest.raises(ValueError, match="name must be one of"):
        load_real("iris2")
    assert set(REAL_SETS) == {"breast_cancer", "wine", "digits"}
    pop = real_population("wine")
    assert pop.cal_scores.size == 178 and pop.full_size == 3.0
    assert 0.0 <= pop.cal_scores.min() and pop.cal_scores.max() <= 1.0


def test_real_table_rows():
    pytest.importorskip("sklearn")
    from costly_cp._reproduce import _real_table

    result = ExperimentResult("costly-cp", "t")
    table = _real_table(5, False, result)
    assert "wine-N=1e3-split" in table.rows and "breast_cancer-N=1e4-fixed-40" in table.rows
