"""Input outside the trained range warns, impossible nodule counts warn, one seed rule."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from shnap import make_phantom
from shnap._checks import check_volume

ACCEPTED = [0, 3, np.int64(3), np.uint8(7), None, "generator"]
REFUSED = [("3", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)]


def _seed(s):
    return np.random.default_rng(0) if s == "generator" else s


@pytest.mark.parametrize("seed", ACCEPTED, ids=repr)
def test_make_phantom_accepts_every_seed_kind(seed):
    assert make_phantom(16, seed=_seed(seed)).image.shape == (16, 16, 16)


@pytest.mark.parametrize(("seed", "err"), REFUSED, ids=repr)
def test_make_phantom_refuses_bad_seeds(seed, err):
    with pytest.raises(err, match="seed must be"):
        make_phantom(16, seed=seed)


def test_numpy_integer_seed_is_the_int_seed():
    a, b = make_phantom(16, seed=np.int64(4)), make_phantom(16, seed=4)
    np.testing.assert_array_equal(a.hu, b.hu)
    assert a.seed == b.seed == 4


def test_too_many_nodules_warn_with_the_count():
    with pytest.warns(UserWarning, match=r"placed \d+ of the 100 nodules"):
        ph = make_phantom(32, n_nodules=100, seed=0)
    assert 0 < len(ph.nodule_masks) < 100


def test_placeable_nodules_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_phantom(32, n_nodules=1, seed=0)


def test_windowed_phantom_is_in_the_trained_range():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_volume(make_phantom(16, seed=0).image)


def test_raw_hu_and_zero_one_images_warn():
    ph = make_phantom(16, seed=0)
    with pytest.warns(UserWarning, match="pass window"):
        check_volume(ph.hu)
    zero_one = (ph.image + 1) / 2
    with pytest.warns(UserWarning, match=r"no air at -1.*\[0, 1\]"):
        check_volume(zero_one)


def test_risk_model_warns_on_a_zero_one_image():
    from shnap import RiskCNN3D

    ph = make_phantom(16, seed=0)
    with pytest.warns(UserWarning, match="outside the trained range"):
        RiskCNN3D()(((ph.image + 1) / 2)[None, None])
