"""reproduce runs end to end on a tiny configuration and records every acceptance item."""

from __future__ import annotations

import pytest

import geomem._reproduce as rep


def test_generator_checks_pass():
    assert all(rep.generator_checks().values())


@pytest.mark.slow
def test_reproduce_tiny(tmp_path):
    pytest.importorskip("matplotlib")
    tiny = rep.Config(
        d=20,
        l=5,
        seeds=(0, 1),
        n2v_steps=200,
        gpt_steps=10,
        gpt_seeds=(0,),
        cycle_steps=200,
        incontext_steps=10,
    )
    res = rep.reproduce(tiny, tmp_path, False)
    items = {k.split()[0] for k in res.checks}
    assert items == {str(i) for i in range(1, 9)} | {"connectome:"}
    assert any(t.title.startswith("Drosophila") for t in res.tables)
    assert len(res.figures) == 4 and all(f.exists() for f in res.figures)
    # every check that compares numbers records its value and bound
    assert {c.label for c in res.details} == set(res.checks) - {
        k for k in res.checks if k.startswith(("1 ", "8 "))
    }
