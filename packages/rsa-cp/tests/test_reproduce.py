import dataclasses

import numpy as np
import pytest

from icml26_shared.config import override
from rsa_cp import _reproduce as rep


def test_simulate_small():
    sim = rep.simulate("lognormal", "shock", 12, n_rep=40, n_ref=200)
    expected = {f"rsa b={b}" for b in rep.SLACK_BETAS} | {
        "spi",
        "split",
        "reference only",
        "rsa marginal",
        "randomized split",
    }
    assert set(sim.coverages) == expected
    for cov in sim.coverages.values():
        assert np.all((cov >= 0) & (cov <= 1))
    # the certified bound of every repetition is below 1 - alpha here (m = 12: by design)
    assert np.all(sim.certified["rsa b=0.4"] <= 1.0)
    w_lo = rep.matched_randomized_width(sim, 0.85)
    w_hi = rep.matched_randomized_width(sim, 0.9)
    assert np.all(w_lo <= w_hi)


def test_randomized_split_expected_coverage_is_exact():
    sim = rep.simulate("gamma", "same", 15, n_rep=400, n_ref=100, betas=(0.4,))
    c = sim.coverages["randomized split"]
    # E[F(S_(j))] = j/(m+1) exactly, so the average is 1 - alpha up to Monte Carlo error
    assert abs(c.mean() - 0.95) < 4 * c.std(ddof=1) / np.sqrt(c.size)


def test_diabetes_small():
    table = rep.diabetes_experiment(3)
    assert list(table.rows) == ["rsa", "spi", "split", "reference"]
    assert [table.label(r) for r in table.rows] == [
        "RSA-CP beta=0.4",
        "SPI beta=0.4",
        "split CP",
        "reference only",
    ]


def test_config_presets_and_validation():
    assert rep.EXPERIMENT.quick_config is rep.QUICK and rep.EXPERIMENT.full_config is rep.FULL
    assert override(rep.FULL, ["n_rep=50"]).n_rep == 50
    with pytest.raises(ValueError, match="n_rep must be >= 2"):
        dataclasses.replace(rep.QUICK, n_rep=1)


def test_reproduce_quick_with_tiny_sizes(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    result = rep.EXPERIMENT.run(
        quick=True,
        out_dir=tmp_path,
        progress=False,
        overrides=["n_rep=12", "diabetes_splits=2", "digits_splits=2", "real_splits=2"],
    )
    assert result.package == "rsa-cp" and result.quick
    assert result.config == {
        "n_rep": 12,
        "diabetes_splits": 2,
        "digits_splits": 2,
        "real_splits": 2,
    }
    ids = {c.id for c in result.details}
    assert {"cov-bound", "no-loss", "misaligned-cov", "misaligned-width", "marginal-cov"} <= ids
    assert (tmp_path / "width_vs_m.png").exists() and (tmp_path / "result.json").exists()
    assert result.headline.startswith("lognormal, m=20")
    assert "4: mean width <= reference-only mean width (same settings)" in result.checks
    assert not any("coverage >= reference-only" in k for k in result.checks)
    misaligned = next(t for t in result.tables if t.title.startswith("Misaligned"))
    for row in misaligned.rows.values():
        assert row["width / reference-only"] > 0
    assert len(result.tables) == 11
    assert result.tables[-2].title.startswith("Digits")
    assert result.tables[-1].title.startswith("Real classification sets")


def test_real_classification_table_small():
    pytest.importorskip("sklearn")
    table = rep.real_classification_table(3)
    assert "iris-rsa" in table.rows and "wine-mapie" in table.rows
    row = table.rows["breast_cancer-rsa"]
    assert 0.0 < row["proven lower m=20"] < 0.9
