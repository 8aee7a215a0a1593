import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from icml26_shared import experiment as ex
from icml26_shared.config import config_dict, override


@dataclass(frozen=True)
class Cfg:
    n_seeds: int = 200
    alpha: float = 0.1
    plot: bool = True
    mode: Literal["penalty", "exact"] = "penalty"
    sizes: tuple[int, ...] = (50, 100)
    pair: tuple[int, float] = (1, 0.5)
    budget: float | None = None
    out: Path = Path("x")

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must lie in (0, 1), got {self.alpha}")


def test_override_parses_each_field_by_its_annotation():
    c = override(
        Cfg(),
        [
            "n_seeds=7",
            "alpha=0.05",
            "plot=false",
            "mode=exact",
            "sizes=1,2,3",
            "pair=2,0.25",
            "budget=3.5",
            "out=a/b",
        ],
    )
    assert c == Cfg(7, 0.05, False, "exact", (1, 2, 3), (2, 0.25), 3.5, Path("a/b"))
    assert override(c, ["budget=none"]).budget is None
    assert override(Cfg(), {"n_seeds": 3}).n_seeds == 3


@pytest.mark.parametrize(
    ("assignment", "message"),
    [
        ("n_sead=3", "unknown config key 'n_sead'.*known keys: n_seeds, alpha"),
        ("n_seeds=3.5", "n_seeds must be an integer"),
        ("plot=maybe", "plot must be true or false"),
        ("mode=fast", "mode must be one of penalty, exact"),
        ("pair=1", "pair needs 2 comma-separated values"),
        ("alpha=2", r"alpha must lie in \(0, 1\)"),
        ("novalue", "--set expects key=value"),
    ],
)
def test_override_refuses_unknown_keys_and_bad_values(assignment, message):
    with pytest.raises(ValueError, match=message):
        override(Cfg(), [assignment])


def test_config_dict_is_json_ready():
    d = config_dict(Cfg())
    assert d["sizes"] == [50, 100] and d["out"] == "x"
    assert json.loads(json.dumps(d)) == d
    with pytest.raises(TypeError, match="dataclass instance"):
        config_dict(Cfg)


def _reproduce(config: Cfg, out_dir, progress):
    result = ex.ExperimentResult("cfg", "a configured toy")
    table = ex.ResultTable("t", ["seeds"])
    table.add_row("ours", {"seeds": config.n_seeds}, label="Ours (a label)")
    result.tables.append(table)
    result.check("seeds", config.n_seeds, ">=", 5)
    return result


CONFIGURED = ex.Experiment("cfg", "a configured toy", _reproduce, Cfg(n_seeds=10), Cfg())


def test_experiment_runs_its_preset_with_overrides_and_records_the_config(tmp_path):
    r = CONFIGURED.run(quick=True, out_dir=tmp_path, overrides=["n_seeds=3"], progress=False)
    assert not r.passed and r.details[0].value == 3
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["config"]["n_seeds"] == 3 and saved["overrides"] == ["n_seeds=3"]
    back = ex.ExperimentResult.from_json((tmp_path / "result.json").read_text())
    assert back.config == saved["config"] and "--set n_seeds=3" in back.to_markdown()
    assert "Ours (a label)" in back.to_markdown() and back.tables[0].rows["ours"]["seeds"] == 3
    assert CONFIGURED.run(out_dir=tmp_path, progress=False).config["n_seeds"] == 200


def test_main_takes_set_and_shows_the_config(tmp_path, capsys):
    argv = ["reproduce", "--quick", "--set", "n_seeds=12", "--show-config"]
    assert ex.main(CONFIGURED, argv) == 0
    assert json.loads(capsys.readouterr().out)["n_seeds"] == 12
    with pytest.raises(SystemExit):
        ex.main(CONFIGURED, ["reproduce", "--set", "nope=1", "--out", str(tmp_path)])
    assert "unknown config key 'nope'" in capsys.readouterr().err


def test_an_experiment_without_presets_refuses_set(tmp_path):
    legacy = ex.Experiment("old", "no presets", lambda quick, out, progress: None)
    with pytest.raises(ValueError, match="no config fields to --set"):
        legacy.config(quick=True, overrides=["a=1"])
    assert legacy.config(quick=True) is True
