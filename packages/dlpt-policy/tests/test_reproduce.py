import dataclasses
import json

import pytest

from dlpt import _reproduce as rep
from dlpt._reproduce import EXPERIMENT
from icml26_shared.config import override
from icml26_shared.experiment import ExperimentResult


def test_experiment_is_registered():
    from importlib.metadata import entry_points

    eps = {ep.name: ep for ep in entry_points(group="icml26.experiments")}
    assert eps["dlpt-policy"].load() is EXPERIMENT


def test_config_presets_overrides_and_validation():
    assert EXPERIMENT.quick_config is rep.QUICK and EXPERIMENT.full_config is rep.FULL
    assert rep.FULL.spec_bars and not rep.QUICK.spec_bars
    cfg = override(rep.QUICK, ["regret_ns=1000,2000", "spec_bars=true"])
    assert cfg.regret_ns == (1000, 2000) and cfg.spec_bars
    with pytest.raises(ValueError, match="two different sizes"):
        dataclasses.replace(rep.QUICK, regret_ns=(2000,))
    with pytest.raises(ValueError, match="eval_reps must be >= 1"):
        dataclasses.replace(rep.QUICK, eval_reps=0)


def test_unit_identities_record_their_checks():
    result = ExperimentResult("dlpt-policy", "t")
    rep._unit_identities(result)
    assert len(result.checks) == 4 and all(result.checks.values())
    (basis,) = result.details
    assert basis.id == "psi-basis" and basis.value <= basis.bound == 1e-10


@pytest.mark.slow
def test_quick_reproduce_runs_and_records_every_item(tmp_path):
    result = EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    for item in "1234567":
        assert any(k.startswith(item) for k in result.checks), item
    assert (tmp_path / "regret_vs_n.png").exists()
    assert json.loads((tmp_path / "result.json").read_text())["package"] == "dlpt-policy"
