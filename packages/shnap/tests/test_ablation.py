"""The depth-independent world and the 2 x 2 radial ablation (padding x placement)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from shnap._ablation import AblationResult, ablation_configs, padding_placement
from shnap._snap import SnapMap
from shnap._world import INDEPENDENT_MAX_RADIUS, NoduleSpec, make_phantom

_CELLS = [
    ("zeros", "flawed"),
    ("reflect", "flawed"),
    ("zeros", "balanced"),
    ("reflect", "balanced"),
]


def _depth_radius(independent: bool, n: int = 60) -> tuple[list[float], list[float]]:
    d, r = [], []
    for s in range(n):
        ph = make_phantom(32, n_nodules=3, seed=s, depth_independent=independent)
        d += [x.depth for x in ph.nodules]
        r += [x.spec.radius for x in ph.nodules]
    return d, r


def test_depth_is_independent_of_size_only_in_the_independent_world():
    d, r = _depth_radius(False)
    assert stats.spearmanr(d, r).statistic > 0.4  # the default world ties depth to size
    d, r = _depth_radius(True)
    assert abs(stats.spearmanr(d, r).statistic) < 0.15 and max(r) <= INDEPENDENT_MAX_RADIUS
    assert np.ptp(d) >= 1.5  # depth still varies
    a = make_phantom(32, n_nodules=2, seed=4)
    b = make_phantom(32, n_nodules=2, seed=4, depth_independent=True)
    np.testing.assert_array_equal(a.lung_mask, b.lung_mask)  # same anatomy
    with pytest.raises(ValueError, match="nodules: a depth-independent world"):
        make_phantom(32, nodules=[NoduleSpec(3.5)], depth_independent=True)


def _synthetic(true: dict[tuple[str, str], float], seeds: int, noise: float, rng):
    cfgs = ablation_configs(16, 1, seeds)
    n_cases, per_case = 6, 30
    dist = rng.uniform(1, 6, n_cases * per_case)
    case = np.repeat(np.arange(n_cases), per_case)
    nod = rng.integers(0, 2, len(dist))
    snap = SnapMap(
        centres=np.zeros((len(dist), 3), int),
        psi=np.zeros(len(dist)),
        distance=dist,
        lobe=np.ones(len(dist), int),
        nodule=nod,
        case=case,
        base=np.zeros(len(dist)),
    )
    psi = {}
    for name, c in cfgs.items():
        cell = (c.padding, "balanced" if c.location_balanced else "flawed")
        psi[name] = 0.2 + true[cell] * dist + noise * rng.standard_normal(len(dist))
    return snap, psi, cfgs


def test_ablation_recovers_planted_cell_slopes_and_effects():
    rng = np.random.default_rng(0)
    true = {
        ("zeros", "flawed"): 0.4,
        ("reflect", "flawed"): 0.1,
        ("zeros", "balanced"): 0.2,
        ("reflect", "balanced"): 0.1,
    }
    snap, psi, cfgs = _synthetic(true, 3, 0.01, rng)
    res = padding_placement(snap, psi, cfgs, n_boot=300)
    for cell, v in true.items():
        assert abs(res.cell_mean(*cell) - v) < 0.01 and len(res.slopes[cell]) == 3
    est, lo, hi = res.effects["padding effect (reflect - zeros)"]
    assert abs(est - (-0.2)) < 0.01 and lo <= -0.2 <= hi
    est, lo, hi = res.effects["placement effect (flawed - balanced)"]
    assert abs(est - 0.1) < 0.01 and lo <= 0.1 <= hi
    assert abs(res.effects["interaction"][0] - (-0.2)) < 0.01
    cut = res.effects["reflect cut (share of the zeros slope)"]
    assert abs(cut[0] - (1 - 0.1 / 0.3)) < 0.03 and cut[1] <= cut[0] <= cut[2]


def test_ablation_interval_widens_with_seed_spread_and_refuses_bad_input():
    rng = np.random.default_rng(1)
    flat = dict.fromkeys(
        [
            ("zeros", "flawed"),
            ("reflect", "flawed"),
            ("zeros", "balanced"),
            ("reflect", "balanced"),
        ],
        0.3,
    )
    snap, psi, cfgs = _synthetic(flat, 3, 0.01, rng)
    tight = padding_placement(snap, psi, cfgs, n_boot=300).effects[
        "padding effect (reflect - zeros)"
    ]
    noisy = {n: p + rng.normal(0, 0.1) * snap.distance for n, p in psi.items()}
    wide = padding_placement(snap, noisy, cfgs, n_boot=300).effects[
        "padding effect (reflect - zeros)"
    ]
    assert wide[2] - wide[1] > 3 * (tight[2] - tight[1])
    with pytest.raises(ValueError, match="psi lacks"):
        padding_placement(snap, {}, cfgs)
    with pytest.raises(ValueError, match="seeds must be >= 1"):
        ablation_configs(16, 1, 0)


def test_seeds_for_matches_the_pooled_seed_sd():
    """Pooled within-cell s.d. against numpy's on planted per-seed slopes, and the seed count
    n = ceil((1.96 sd / h)^2) at which the padding effect's seed-driven s.e. sd / sqrt(n)
    reaches h / 1.96."""
    rng = np.random.default_rng(2)
    slopes = {cell: rng.normal(0.2, 0.15, 5) for cell in _CELLS}
    res = AblationResult(slopes, {}, 1, 1, 0.95)
    pooled = np.sqrt(np.mean([np.var(v, ddof=1) for v in slopes.values()]))
    assert res.seed_sd() == pytest.approx(pooled)
    n = res.seeds_for(0.1)
    assert 1.96 * pooled / np.sqrt(n) <= 0.1 < 1.96 * pooled / np.sqrt(n - 1)
    with pytest.raises(ValueError, match="half_width"):
        res.seeds_for(0.0)
    one = AblationResult({c: np.array([0.1]) for c in _CELLS}, {}, 1, 1, 0.95)
    assert np.isnan(one.seed_sd())
