"""One seed rule (numpy integers included) and bad input refused."""

from __future__ import annotations

import numpy as np
import pytest

from metastreet import HashingEncoder, MetaStreet, make_city, with_label_rate

ACCEPTED = [0, 3, np.int64(3), np.uint8(7), None, "generator"]
REFUSED = [("3", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)]


def _seed(s):
    return np.random.default_rng(0) if s == "generator" else s


@pytest.fixture(scope="module")
def city():
    return make_city(n_side=4, seed=0, images_per_street=(1, 2))


def _model():
    return MetaStreet(
        4,
        n_categories=6,
        text_encoder=HashingEncoder(16),
        epochs=2,
        hidden=8,
        d=8,
        heads=2,
        head_dim=4,
        w=0.1,
        progress=False,
    )


ENTRY_POINTS = {
    "make_city": lambda s, c: make_city(n_side=3, seed=s, images_per_street=(1, 1)),
    "with_label_rate": lambda s, c: with_label_rate(c, 0.1, seed=s),
    "HashingEncoder": lambda s, c: HashingEncoder(8, seed=s),
    "MetaStreet.fit": lambda s, c: _model().fit(c, seed=s),
}


@pytest.mark.parametrize("fn", ENTRY_POINTS, ids=str)
@pytest.mark.parametrize("seed", ACCEPTED, ids=repr)
def test_seed_kinds_accepted(city, fn, seed):
    ENTRY_POINTS[fn](_seed(seed), city)


@pytest.mark.parametrize("fn", ENTRY_POINTS, ids=str)
@pytest.mark.parametrize(("seed", "err"), REFUSED, ids=repr)
def test_bad_seeds_refused(city, fn, seed, err):
    with pytest.raises(err, match="seed must be"):
        ENTRY_POINTS[fn](seed, city)


def test_numpy_integer_seed_is_the_int_seed(city):
    a = _model().fit(city, seed=np.int64(3))
    b = _model().fit(city, seed=3)
    assert a.val_f1_ == b.val_f1_


def test_fit_refuses_a_non_city():
    with pytest.raises(TypeError, match="city must be"):
        _model().fit({"labels": [1, 2]})


def test_fit_prints_a_line_per_stage_when_piped(city, capsys):
    model = _model()
    model.progress = None
    model.fit(city, seed=0)
    err = capsys.readouterr().err
    assert "w=0.1" in err and "done in" in err
