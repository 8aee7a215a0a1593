"""The reproduce pieces at tiny sizes (the full quick run takes ~25 s here and is run by CI's
`icml26 reproduce --quick`, not by the default tests)."""

import dataclasses

import numpy as np
import pytest

from collab_cp import _reproduce as rep
from collab_cp.data import synthetic_collaboration
from collab_cp.experiments import frontier, split_evaluation
from icml26_shared.config import override


def test_empty_reduction_checks_pass():
    assert rep._empty_reduction_checks(seed=1) == (True, True)


def test_method_table_and_regression_pieces():
    d = synthetic_collaboration(1200, "top_k", k=2, seed=0)
    r = split_evaluation(
        1 - d.probs,
        d.human,
        d.y,
        n_cal=500,
        n_splits=3,
        epsilon=0.05,
        delta=0.7,
        human_scores=1 - d.human_probs,
    )
    t = rep._method_table("t", r, note="n")
    assert list(t.rows)[-1] == "collab" and t.label("collab") == "collaborative (ours)"
    assert "±" in t.to_text()
    table, acc = rep._regression(3, seed=0)
    assert list(table.rows) == ["human", "ai-matched", "collab"]
    assert table.label("human") == "human interval"
    assert acc["harm"].shape == (3,)


def test_frontier_figure_is_written(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    d = synthetic_collaboration(900, "top_k", k=2, seed=1)
    path = rep._frontier_figure(plt, tmp_path, [("a", d)], n_splits=2, grid=2)
    assert path.exists() and path.stat().st_size > 1000
    res = frontier(
        1 - d.probs, d.human, d.y, np.array([0.05]), np.array([0.7]), n_cal=500, n_splits=2
    )
    assert res.shape == (1, 1, 2) and np.all(np.isfinite(res))


def test_config_presets_overrides_and_validation():
    assert rep.EXPERIMENT.quick_config is rep.QUICK and rep.EXPERIMENT.full_config is rep.FULL
    assert rep.QUICK.n_splits < rep.FULL.n_splits
    assert override(rep.QUICK, ["frontier_grid=3"]).frontier_grid == 3
    with pytest.raises(ValueError, match="n_splits must be >= 1"):
        dataclasses.replace(rep.QUICK, n_splits=0)
    with pytest.raises(ValueError, match="unknown config key"):
        override(rep.QUICK, ["splits=3"])


def test_size_checks_record_value_and_bound():
    from icml26_shared.experiment import ExperimentResult

    d = synthetic_collaboration(1200, "top_k", k=2, seed=0)
    r = split_evaluation(
        1 - d.probs,
        d.human,
        d.y,
        n_cal=500,
        n_splits=3,
        epsilon=0.05,
        delta=0.7,
        human_scores=1 - d.human_probs,
    )
    result = ExperimentResult("collab-cp", "t")
    rep._check_sizes(result, "synthetic top-2", "top2", r)
    ids = [c.id for c in result.details]
    assert ids == ["top2-size-vs-ai", "top2-size-vs-human-cp"]
    assert result.details[0].value == pytest.approx(float(np.mean(r.size)))
    assert result.details[0].bound == pytest.approx(float(np.mean(r.ai_size)))


def test_real_collaboration_sets():
    pytest.importorskip("sklearn")
    from collab_cp.data import REAL_SETS, real_collaboration

    d = real_collaboration("wine", seed=0)
    assert d.probs.shape == (107, 3) and d.human.shape == (107, 3)
    np.testing.assert_allclose(d.probs.sum(1), 1.0)
    assert (d.human.sum(1) == 1).all()  # top-1 human
    assert set(REAL_SETS) == {"breast_cancer", "wine"}
    with pytest.raises(ValueError, match="name must be one of"):
        real_collaboration("iris2")


def test_mapie_on_the_lookup_matches_our_split_cp():
    """MAPIE's split CP through the index lookup sees our probabilities: same sets as ours."""
    pytest.importorskip("mapie")
    from mapie.classification import SplitConformalClassifier as MapieSplit

    from collab_cp.baselines import SplitConformalClassifier

    d = synthetic_collaboration(600, "top_k", k=2, seed=3)
    cal, test = np.arange(300), np.arange(300, 600)
    idx = np.arange(600)[:, None]
    mp = MapieSplit(
        rep._ProbaLookup(d.probs), confidence_level=0.9, conformity_score="lac", prefit=True
    )
    mp.conformalize(idx[cal], d.y[cal])
    theirs = mp.predict_set(idx[test])[1][:, :, 0]
    ours = SplitConformalClassifier(0.9).conformalize(d.probs[cal], d.y[cal])
    np.testing.assert_array_equal(theirs, ours.predict_set(d.probs[test]))


def test_real_tables_rows():
    pytest.importorskip("sklearn")
    from icml26_shared.experiment import ExperimentResult

    result = ExperimentResult("collab-cp", "t")
    tables = rep._real_tables(3, result)
    assert len(tables) == 2 and "collab" in tables[0].rows
