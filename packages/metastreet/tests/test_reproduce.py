import pytest


def test_readme_example_runs():
    from metastreet import HashingEncoder, MetaStreet, make_city

    city = make_city(n_side=6, seed=0, images_per_street=(1, 2))
    model = MetaStreet(4, n_categories=12, text_encoder=HashingEncoder(16), epochs=5,
                       hidden=8, d=8, heads=2, head_dim=4)  # fmt: skip
    res = model.fit(city, seed=0).evaluate(city, "test")
    assert set(res) == {"accuracy", "weighted_f1", "macro_f1", "mrr"}


def test_reproduce_rows_tiny(tmp_path, monkeypatch):
    """Every spec row, on the normal and the shuffled city, at toy sizes (fast)."""
    from metastreet import _reproduce as rep

    tiny = {
        "city": {"n_side": 6, "images_per_street": (1, 2), "split": (0.2, 0.2)},
        "model": {"hidden": 8, "d": 8, "heads": 2, "head_dim": 4, "epochs": 3, "w": "auto",
                  "n_categories": 12},
        "seeds": [0, 1],
    }  # fmt: skip
    monkeypatch.setattr(rep, "_settings", lambda quick: tiny)
    monkeypatch.setattr(rep, "_plot", lambda *a: tmp_path / "none.png")
    result = rep.reproduce(True, tmp_path, False)
    rows = result.tables[0].rows
    for r in (*rep.VARIANTS, *rep.BASELINES):
        assert r in rows and f"{r} [shuffled]" in rows
    assert "proportion-only [adjacency_only]" in rows
    assert len(result.checks) == 5
    gaps = result.tables[1].rows["full − no-contrast (≥ 3)"]["points"]
    assert gaps.se >= 0  # paired over two seeds


@pytest.mark.slow
def test_reproduce_quick(tmp_path):
    pytest.importorskip("matplotlib")
    from metastreet._reproduce import EXPERIMENT

    result = EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    assert (tmp_path / "metastreet_map.png").exists()
    assert len(result.checks) == 5 and "full" in result.tables[0].rows
