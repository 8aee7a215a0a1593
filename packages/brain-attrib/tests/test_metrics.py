from __future__ import annotations

import doctest

import numpy as np
import pytest

import brain_attrib._fmri
import brain_attrib._grammar
import brain_attrib._metrics
from brain_attrib import metrics


@pytest.mark.parametrize("mod", [brain_attrib._metrics, brain_attrib._grammar, brain_attrib._fmri])
def test_doctests(mod):
    res = doctest.testmod(mod)
    assert res.failed == 0


def test_mass_set_hand_made():
    s = np.array([0.5, -0.3, 0.1, 0.1])
    assert metrics.mass_set(s, 0.5) == {0}
    assert metrics.mass_set(s, 0.51) == {0, 1}
    assert metrics.mass_set(s, 0.8) == {0, 1}
    assert metrics.mass_set(s, 0.81) == {0, 1, 2}
    assert metrics.mass_set(s, 1.0) == {0, 1, 2, 3}


def test_iou_and_curve():
    assert metrics.iou({1, 2}, {2, 3}) == pytest.approx(1 / 3)
    a = np.array([1.0, 0, 0, 0])
    b = np.array([0, 0, 0, 1.0])
    c = metrics.iou_curve(a, b, [0.5])
    assert c.tolist() == [0.0]
    assert metrics.iou_curve(a, a).min() == 1.0


def test_center_of_mass():
    assert metrics.center_of_mass(np.array([1.0, 1.0])) == pytest.approx(0.25)
    assert metrics.center_of_mass(np.array([0.0, -4.0, 0.0, 0.0])) == pytest.approx(0.25)


def test_category_shares():
    sh = metrics.category_shares(np.array([3.0, 1.0, 0.0]), ["noun_sg", "det_pl", "adj"], 0.9)
    assert sh == {"noun": 0.5, "det": 0.5}


def test_bh_known_vector():
    p = np.array([0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216])
    rej, adj = metrics.bh(p, 0.05)
    assert rej.tolist() == [True, True] + [False] * 8
    ref = np.minimum.accumulate((p * 10 / np.arange(1, 11))[::-1])[::-1]
    np.testing.assert_allclose(adj, ref)


@pytest.mark.parametrize("t", [0.0, -0.1, 1.5, float("nan")])
def test_bad_t(t):
    with pytest.raises(ValueError, match="t must"):
        metrics.mass_set(np.array([1.0, 2.0]), t)


def test_bad_scores():
    with pytest.raises(ValueError):
        metrics.importance(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="k must"):
        metrics.top_k(np.array([1.0, 2.0]), 3)
    with pytest.raises(ValueError, match="alpha"):
        metrics.bh(np.array([0.1]), 1.5)


def test_recovery_within_category_and_its_chance():
    import itertools

    from brain_attrib.metrics import recency_mass, recovery, recovery_chance, top_k_share

    s = np.array([9.0, -8.0, 0.5, 0.4, 0.3, 0.1])
    nouns = np.array([False, False, True, True, True, True])
    assert recovery(s, {2, 5}) == 0.0  # the non-nouns lead the all-word ranking
    assert recovery(s, {2, 5}, within=nouns) == pytest.approx(1 / 3)  # {2, 3} vs {2, 5}
    assert top_k_share(s, nouns, 2) == 0.0 and top_k_share(s, nouns, 4) == 0.5
    for n, m in ((7, 2), (9, 3), (5, 1)):
        brute = np.mean(
            [len({0, *range(1, m)} & set(c)) / len({*range(m)} | set(c))
             for c in itertools.combinations(range(n), m)]
        )  # fmt: skip
        assert recovery_chance(n, m) == pytest.approx(brute)
    assert recency_mass(np.r_[np.ones(5), np.zeros(27)]) == 1.0
    assert recency_mass(np.ones(32)) == pytest.approx(5 / 32)
    with pytest.raises(ValueError, match="within must contain every planted"):
        recovery(s, {0}, within=nouns)
    with pytest.raises(ValueError, match="planted must hold positions"):
        recovery(s, {6})
    with pytest.raises(ValueError, match="need 0 <= m <= n"):
        recovery_chance(3, 4)
