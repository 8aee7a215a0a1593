"""The shared benchmark helper: timing, ratios and the JSON layout."""

from __future__ import annotations

import json
import time

import pytest

from icml26_shared.bench import BenchReport, Timing, time_call


def test_time_call_counts_and_orders() -> None:
    calls = []
    t = time_call(lambda: calls.append(1), repeats=4, warmup=2)
    assert len(calls) == 6
    assert t.repeats == 4 and t.min <= t.median


def test_time_call_measures_sleep() -> None:
    t = time_call(lambda: time.sleep(0.02), repeats=3, warmup=0)
    assert 0.015 < t.median < 0.5


@pytest.mark.parametrize("kw", [{"repeats": 0}, {"repeats": 1.5}, {"warmup": -1}])
def test_time_call_rejects_bad_counts(kw) -> None:
    with pytest.raises(ValueError, match=r"repeats|warmup"):
        time_call(lambda: None, **kw)


def test_report_ratio_and_json(tmp_path) -> None:
    r = BenchReport("pkg", quick=True)
    r.add("n=10", "ours", Timing(0.5, 0.4, (0.4, 0.5, 0.6)), err=float("inf"))
    r.add("n=10", "peer", 2.0)
    r.add("n=10", "quality-only", None, coverage=0.9)
    assert r.ratio("n=10", "ours", "peer") == pytest.approx(4.0)
    with pytest.raises(KeyError, match="quality-only"):
        r.ratio("n=10", "ours", "quality-only")
    data = json.loads(r.write(tmp_path / "b" / "pkg.json").read_text())
    assert data["package"] == "pkg" and data["quick"] is True
    assert data["rows"][0]["err"] == "inf" and data["ratios"][0]["speedup"] == pytest.approx(4.0)
    assert {"cpu_count", "load_start", "load_end"} <= set(data["machine"])
    assert "4.00x" in r.to_text()
