"""``reproduce`` end to end on a tiny configuration: every acceptance check is computed from
the run (nothing hard-coded), the table, figure and result file are written."""

from __future__ import annotations

import json

import pytest

import brain_attrib._reproduce as rep


@pytest.mark.slow
def test_reproduce_tiny(tmp_path, monkeypatch, small_lm):
    pytest.importorskip("matplotlib")
    lm, tok, info, _ = small_lm
    monkeypatch.setattr(rep, "tiny_lm", lambda progress=False: (lm, tok, info))
    small = rep.Config(seeds=(0, 1), layers=(1,), n_attr=3, n_erasure=1, n_mask=3, n_oracle=3)
    monkeypatch.setattr(rep, "QUICK", small)
    res = rep.EXPERIMENT.run(quick=True, out_dir=tmp_path, progress=False)
    items = {k.split("_")[0] for k in res.checks}
    assert items == {"1", "2", "a", "b", "c", "d", "e", "f"}  # 3, 5 and 7 are tests
    assert res.checks["1_lm_ce_le_0.7_unigram"] == (info["heldout_ce"] / info["unigram_ce"] <= 0.7)
    assert len(res.tables) == 3 and len(res.figures) == 1 and res.figures[0].exists()
    summary, per_seed, cats = res.tables
    assert len(summary.rows) == len(rep.SUMMARY)  # the acceptance quantities, mean ± s.e.
    rows = per_seed.rows
    assert set(rows) == {"seed 0 layer 1", "seed 1 layer 1", "layer 1, mean ± s.e. over 2 seeds"}
    mean = rows["layer 1, mean ± s.e. over 2 seeds"]["noun recovery GxI"]
    seeds = [rows[f"seed {s} layer 1"]["noun recovery GxI"].mean for s in (0, 1)]
    assert mean.mean == pytest.approx(sum(seeds) / 2)
    assert res.checks["c_rho_gxi_ig_ge_0.7"] == (
        rows["layer 1, mean ± s.e. over 2 seeds"]["rho GxI-IG"].mean >= 0.7
    )
    rho = rows["layer 1, mean ± s.e. over 2 seeds"]["rho GxI-IG"].format()
    assert summary.rows["c. ρ(GxI, IG), median over TRs: category / zero"]["value"].startswith(rho)
    assert set(cats.rows) == {"layer 1 BA", "layer 1 NWP"}  # category profiles
    assert "p_BH" in cats.note  # paired tests, BH over layers × t
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["checks"] == {k: bool(v) for k, v in res.checks.items()}
