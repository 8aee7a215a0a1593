import pytest


def test_readme_example_runs():
    from metastreet import HashingEncoder, MetaStreet, make_city

    city = make_city(n_side=6, seed=0, images_per_street=(1, 2))
    model = MetaStreet(4, n_categories=12, text_encoder=HashingEncoder(16), epochs=5,
                       hidden=8, d=8, heads=2, head_dim=4)  # fmt: skip
    res = model.fit(city, seed=0).evaluate(city, "test")
    assert set(res) == {"accuracy", "weighted_f1", "macro_f1", "mrr"}


@pytest.mark.slow
def test_reproduce_quick(tmp_path):
    pytest.importorskip("matplotlib")
    from metastreet._reproduce import EXPERIMENT

    result = EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    assert (tmp_path / "metastreet_map.png").exists()
    assert len(result.checks) == 5 and "full" in result.tables[0].rows
