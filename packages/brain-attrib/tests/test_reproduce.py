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
    res = rep.reproduce(small, tmp_path, False)
    (tmp_path / "result.json").write_text(res.to_json())
    checks = {c.id: c for c in res.details}
    items = {c.label.split()[0] for c in res.details}
    assert items == {"1", "2", "a", "b", "c", "d", "e", "f"}  # 3, 5 and 7 are tests
    assert len(checks) == len(res.checks)  # every check records its value and bound
    assert checks["1-ce"].value == pytest.approx(info["heldout_ce"] / info["unigram_ce"])
    assert checks["1-ce"].passed == (checks["1-ce"].value <= 0.7)
    assert len(res.tables) == 3 and len(res.figures) == 1 and res.figures[0].exists()
    summary, per_seed, cats = res.tables
    assert len(summary.rows) == len(rep.SUMMARY)  # the acceptance quantities, mean ± s.e.
    rows = per_seed.rows
    assert set(rows) == {"seed0-L1", "seed1-L1", "L1-mean"}
    assert per_seed.label("L1-mean") == "layer 1, mean ± s.e. over 2 seeds"
    mean = rows["L1-mean"]["noun recovery GxI"]
    seeds = [rows[f"seed{s}-L1"]["noun recovery GxI"].mean for s in (0, 1)]
    assert mean.mean == pytest.approx(sum(seeds) / 2)
    assert checks["c-rho"].value == rows["L1-mean"]["rho GxI-IG"].mean
    assert checks["c-rho"].passed == (checks["c-rho"].value >= 0.7)
    rho = rows["L1-mean"]["rho GxI-IG"].format()
    assert summary.rows["c. ρ(GxI, IG), median over TRs: category / zero"]["value"].startswith(rho)
    assert set(cats.rows) == {"L1-BA", "L1-NWP"}  # category profiles
    assert "p_BH" in cats.note  # paired tests, BH over layers × t
    saved = json.loads((tmp_path / "result.json").read_text())
    assert saved["checks"] == {k: bool(v) for k, v in res.checks.items()}
