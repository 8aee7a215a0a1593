import json

import pytest

from dlpt._reproduce import EXPERIMENT


def test_experiment_is_registered():
    from importlib.metadata import entry_points

    eps = {ep.name: ep for ep in entry_points(group="icml26.experiments")}
    assert eps["dlpt-policy"].load() is EXPERIMENT


@pytest.mark.slow
def test_quick_reproduce_runs_and_records_every_item(tmp_path):
    result = EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    for item in "1234567":
        assert any(k.startswith(item) for k in result.checks), item
    assert (tmp_path / "regret_vs_n.png").exists()
    assert json.loads((tmp_path / "result.json").read_text())["package"] == "dlpt-policy"
