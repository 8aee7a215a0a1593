import numpy as np
import pytest

from shnap import OracleRisk, make_phantom, nodule_library
from shnap._world import NoduleSpec


def test_oracle_is_blind_outside_the_lungs():
    ph = make_phantom(32, n_nodules=2, electrodes=2, seed=7)
    oracle = OracleRisk.for_phantom(ph)
    x = ph.image.copy()
    rng = np.random.default_rng(0)
    outside = ~ph.lung_mask
    x[outside] = rng.uniform(-1, 1, int(outside.sum()))
    assert np.ptp(oracle(np.stack([ph.image, x])[:, None])) == 0.0


def test_oracle_is_location_invariant():
    ph = make_phantom(32, seed=8)
    oracle = OracleRisk.for_phantom(ph)
    tmpl = nodule_library(1, seed=2)[0]
    from shnap._snap import insertion_grid

    grid = insertion_grid(tmpl, ph.lung_mask, ph.vessel_mask)
    assert len(grid) >= 5
    vals = []
    for c in grid[:: max(1, len(grid) // 6)]:
        x = ph.image.copy()
        vs, ps = tmpl.paste_slices(c, x.shape)
        patch = x[vs]
        patch[tmpl.mask[ps]] = tmpl.image[ps][tmpl.mask[ps]]
        vals.append(oracle.logit(x))
    assert np.ptp(vals) < 1e-9 and vals[0] > oracle.logit(ph.image)


def test_oracle_scores_follow_the_spec():
    ph = make_phantom(
        32,
        nodules=[NoduleSpec(3.5, "solid"), NoduleSpec(3.5, "calcified"), NoduleSpec(1.8, "solid")],
        seed=11,
    )
    oracle = OracleRisk.for_phantom(ph)
    a, b = oracle.truth(ph)
    assert a[1] == pytest.approx(-0.3)  # calcified: benign
    assert a[0] > a[2] > 0  # bigger solid nodule, more risk
    feats = oracle.features(ph.image)
    assert len(feats) == 3
    # the pairwise term: only pairs of large nodules
    big = [f.volume >= oracle.large_voxels for f in feats]
    assert b.sum() == pytest.approx(2 * 0.8 * (sum(big) * (sum(big) - 1) / 2))
    empty = make_phantom(32, seed=11)
    assert OracleRisk.for_phantom(empty).logit(empty.image) == oracle.mu


def test_oracle_bad_input():
    with pytest.raises(ValueError, match="one shape"):
        OracleRisk(np.zeros((4, 4, 4), bool), np.zeros((4, 4, 5), bool))
    ph = make_phantom(32, seed=1)
    with pytest.raises(ValueError, match=r"\(B, 1, D, H, W\)"):
        OracleRisk.for_phantom(ph)(ph.image)
