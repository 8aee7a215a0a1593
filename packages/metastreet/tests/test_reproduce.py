import pytest


def test_readme_example_runs():
    from metastreet import HashingEncoder, MetaStreet, make_city

    city = make_city(n_side=6, seed=0, images_per_street=(1, 2))
    model = MetaStreet(4, n_categories=12, text_encoder=HashingEncoder(16), epochs=5,
                       hidden=8, d=8, heads=2, head_dim=4)  # fmt: skip
    res = model.fit(city, seed=0).evaluate(city, "test")
    assert set(res) == {"accuracy", "weighted_f1", "macro_f1", "mrr"}


def test_reproduce_rows_tiny(tmp_path, monkeypatch):
    """Every row (ablations, controls, label rates, adjacency-only city) at toy sizes (fast)."""
    from metastreet import _reproduce as rep

    tiny = rep.Config(
        seeds=(0, 1), n_side=6, images_per_street=(1, 2), split=(0.2, 0.2), hidden=8, d=8,
        heads=2, head_dim=4, epochs=3, text="hashing", device=None, ablations=True,
    )  # fmt: skip
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # in-process: no workers to spawn
    monkeypatch.setattr(rep, "_plot", lambda *a: tmp_path / "none.png")
    rep._city.cache_clear()
    result = rep.reproduce(tiny, tmp_path, False)
    rep._city.cache_clear()
    gaps, rows = result.tables[0].rows, result.tables[1].rows
    for r in (*rep.VARIANTS, *rep.ABLATIONS, *rep.BASELINES, *rep.ADJ):
        assert r in rows
    for rate in rep.RATES:
        assert rep._rate_row(rep.FULL, rate) in rows
        assert rep._rate_row(rep.NO_CONTRAST, rate) in rows
    assert len(result.checks) == 6 and len(result.details) == 6  # each with value and bound
    geo = gaps["geography"]
    assert geo["points"].se >= 0 and geo["upper"] is None  # paired over two seeds
    assert not any("[shuffled]" in r for r in rows)
    # one w for the run, chosen on seed 0's validation, named in the notes
    assert any(n.startswith("w = ") and "validation wF1 0.1: " in n for n in result.notes)
    per_seed = len(rep.VARIANTS) + len(rep.ABLATIONS) + len(rep.BASELINES) + len(rep.ADJ)
    fits = 2 * (per_seed + 2 * len(rep.RATES)) - 1 + len(rep.W_GRID)  # seed 0's full: once
    assert any(f" {fits} fits in " in n for n in result.notes)


@pytest.mark.slow
def test_reproduce_quick(tmp_path):
    pytest.importorskip("matplotlib")
    from metastreet._reproduce import EXPERIMENT

    result = EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    assert (tmp_path / "metastreet_map.png").exists()
    assert len(result.checks) == 6 and "full" in result.tables[1].rows


def test_paper_size_benchmark_fits_as_the_reproduce_does():
    """benchmarks/paper_size.py repeats the reproduce's settings with public names only: the
    same settings, rows and w grid, and one quick fit gives the reproduce's figures."""
    import importlib.util
    from pathlib import Path

    from metastreet import _reproduce as rep
    from metastreet._model import W_GRID

    path = Path(__file__).parents[1] / "benchmarks" / "paper_size.py"
    spec = importlib.util.spec_from_file_location("paper_size_bench", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    for quick in (True, False):
        ours = {
            k: rep._settings(rep.QUICK if quick else rep.FULL_CONFIG)[k] for k in ("city", "model")
        }
        assert bench.SETTINGS[quick] == ours
    assert bench.W_GRID == W_GRID and bench.RATES == rep.RATES
    for row in (rep.FULL, rep.NO_CONTRAST, rep.RANDOM):
        assert bench.VARIANTS[row] == rep.VARIANTS[row]
    assert bench._rate_row(rep.FULL, 0.01) == rep._rate_row(rep.FULL, 0.01)
    item = (1, bench._rate_row(bench.NO_CONTRAST, 0.05), 0.05, 0.9)
    a, b = bench._job(True, item), rep._job(rep.QUICK, item)
    assert a["metrics"] == b["metrics"] and a["val_f1"] == b["val_f1"]
