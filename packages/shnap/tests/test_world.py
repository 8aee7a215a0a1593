import numpy as np
import pytest

from shnap._world import (
    NoduleSpec,
    boundary_distance,
    find_nodules,
    make_phantom,
    nodule_free_crops,
    nodule_library,
    unwindow,
    window,
)


def test_window_round_trip_and_fixed_points():
    hu = np.array([-1000.0, -300.0, 400.0, -850.0])
    np.testing.assert_allclose(window(hu), [-1.0, 0.0, 1.0, window(-850.0)])
    np.testing.assert_allclose(unwindow(window(hu)), hu, atol=1e-3)
    assert window(np.array(2000.0)) == 1.0


@pytest.mark.parametrize("seed", range(4))
def test_phantom_masks_and_intensities(seed):
    ph = make_phantom(32, n_nodules=3, electrodes=2, seed=seed)
    assert ph.image.dtype == np.float32 and ph.image.shape == (32, 32, 32)
    np.testing.assert_array_equal(ph.image, window(ph.hu))
    for m in (ph.body_mask, ph.lung_mask, ph.vessel_mask, *ph.nodule_masks, *ph.electrode_masks):
        assert m.dtype == np.bool_ and m.shape == ph.image.shape
    assert (ph.lung_mask <= ph.body_mask).all()
    assert set(np.unique(ph.lobe[ph.lung_mask])) <= {1, 2, 3, 4, 5}
    assert (ph.lobe[~ph.lung_mask] == 0).all()
    # objects are disjoint; nodules inside the lungs, electrodes outside, at +2000 HU
    objs = [*ph.nodule_masks, *ph.electrode_masks]
    total = sum(m.astype(int) for m in objs)
    assert total.max() == 1
    for m in ph.nodule_masks:
        assert (m <= ph.lung_mask).all() and not (m & ph.vessel_mask).any()
    for m in ph.electrode_masks:
        assert not (m & ph.lung_mask).any() and np.all(ph.hu[m] == 2000.0)
    # lung parenchyma: -850 HU with texture
    par = ph.lung_mask & ~ph.vessel_mask & ~ph.objects()
    assert abs(np.median(ph.hu[par]) + 850) < 30 and 10 < ph.hu[par].std() < 60
    # every lung voxel above -600 HU is vessel or nodule: the reader sees exactly the nodules
    hot = (ph.hu > -600) & ph.lung_mask
    assert (hot <= (ph.vessel_mask | ph.objects())).all()
    found = find_nodules(ph.image, ph.lung_mask & ~ph.vessel_mask)
    assert len(found) == len(ph.nodules)
    for f in found:
        assert sum(bool((f & m).any()) for m in ph.nodule_masks) == 1


def test_nodule_kinds_have_their_intensities():
    specs = [
        NoduleSpec(3.0, "solid"),
        NoduleSpec(3.0, "ground_glass"),
        NoduleSpec(3.0, "calcified"),
    ]
    ph = make_phantom(32, nodules=specs, seed=5)
    assert [n.kind for n in ph.nodules] == ["solid", "ground_glass", "calcified"]
    core = [np.median(ph.hu[m]) for m in ph.nodule_masks]
    assert core[2] > 250 > core[0] > -250 > core[1] > -750


def test_placement_moves_nodules_and_keeps_anatomy():
    depth_c, depth_p = [], []
    for seed in range(12):
        a = make_phantom(32, nodules=[NoduleSpec(2.0, placement="central")], seed=seed)
        b = make_phantom(32, nodules=[NoduleSpec(2.0, placement="peripheral")], seed=seed)
        np.testing.assert_array_equal(a.lung_mask, b.lung_mask)
        np.testing.assert_array_equal(a.vessel_mask, b.vessel_mask)
        depth_c.append(a.nodules[0].depth)
        depth_p.append(b.nodules[0].depth)
    assert np.mean(depth_c) > np.mean(depth_p) + 1.0
    assert np.mean(np.array(depth_c) > np.array(depth_p)) >= 0.9


def test_same_seed_same_phantom():
    a, b = make_phantom(32, 2, 1, seed=9), make_phantom(32, 2, 1, seed=9)
    np.testing.assert_array_equal(a.hu, b.hu)


def test_library_and_crops():
    lib = nodule_library(3, seed=1)
    for t in lib:
        assert t.image.shape == t.mask.shape and t.mask.shape[0] % 2 == 1
        assert t.mask.any() and np.all(np.abs(t.image) <= 1)
        c = (16, 16, 16)
        assert t.placed_mask(c, (32, 32, 32)).sum() == t.mask.sum()
    crops = nodule_free_crops(10, size=16, seed=2)
    assert crops.shape == (10, 16, 16, 16) and crops.dtype == np.float32
    assert (crops < window(np.float32(-600))).mean() > 0.3  # mostly lung


def test_boundary_distance_is_zero_outside():
    ph = make_phantom(32, seed=0)
    d = boundary_distance(ph.lung_mask)
    assert (d[~ph.lung_mask] == 0).all() and d.max() > 4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"size": 8}, "size"),
        ({"n_nodules": -1}, "n_nodules"),
        ({"electrodes": 9}, "electrodes"),
        ({"placement": "middle"}, "placement"),
    ],
)
def test_bad_phantom_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_phantom(**kwargs)


def test_bad_nodule_spec():
    with pytest.raises(ValueError, match="kind"):
        NoduleSpec(2.0, kind="metal")
    with pytest.raises(ValueError, match="spiculation"):
        NoduleSpec(2.0, spiculation=2.0)
