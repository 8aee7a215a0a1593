"""The reproduce pipeline end to end at toy sizes (the real quick run takes minutes)."""

from __future__ import annotations

import dataclasses

import numpy as np

from bittokens import _reproduce
from bittokens._reproduce import QUICK, make_scheme, noise_exact_rate


def test_reproduce_pipeline_at_toy_size(tmp_path, monkeypatch, torch_threads):
    tiny = dataclasses.replace(
        QUICK,
        tasks=("minmax", "mult"),
        steps=2,
        batch_size=4,
        lrs=(1e-3,),
        seeds=(0, 1),
        n_train=16,
        n_val=3,
        n_test=3,
        curve_points=1,
        workers=1,
        multitask=False,
    )
    monkeypatch.setattr(_reproduce, "QUICK", tiny)
    res = _reproduce.reproduce(True, tmp_path, False)
    assert [t.title.split(",")[0] for t in res.tables] == [
        "Test scores",
        "Bit-exact decode rate under logit noise 2b-1+U(-a",
    ]
    solo = res.tables[0]
    assert list(solo.rows) == list(_reproduce.SCHEME_NAMES)
    assert solo.rows["bittokens"]["tokens/number"] == 1.0
    assert solo.rows["single-digit"]["tokens/number"] > 2
    for fig in res.figures:
        assert fig.exists() and fig.suffix == ".png"
    assert set(res.checks) >= {"bittokens minmax exact >= 0.95", "bittokens mult >= xval + 0.1"}
    assert res.checks["params within 10% (non-embedding)"]
    assert res.headline.startswith("BitTokens test scores")


def test_noise_rate_matches_theory():
    amps = np.array([0.5, 1.0, 1.5])
    rates = noise_exact_rate(amps, n=4000)
    assert rates[0] == 1.0 and rates[1] == 1.0
    theory = (1 - 0.5 / 3.0) ** 64
    assert abs(rates[2] - theory) < 4 * np.sqrt(theory * (1 - theory) / 4000) + 1e-3


def test_make_scheme_names():
    assert make_scheme("bittokens").name == "bittokens"
    import pytest

    with pytest.raises(ValueError, match="name must be one of"):
        make_scheme("bpe")
