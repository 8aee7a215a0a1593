"""The diffusion bridge: closed forms, sampler, locality, crops, training, bad input."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import torch
from scipy import ndimage

from shnap._bridge import (
    Bridge,
    BridgeConfig,
    TrainConfig,
    bridge_marginal,
    bridge_step,
    crop_boxes,
    random_metaball_mask,
    removal_masks,
    sampling_times,
    shell_mean,
)
from shnap._unet import UNet3D
from shnap._weights import weights_key as _key
from shnap._world import make_phantom, nodule_library

STRUCT = np.ones((3, 3, 3), bool)


#: locality, batching and input checks do not depend on the network's width: a narrow UNet
#: keeps them fast
NARROW = (8, 8, 8)


@pytest.fixture(scope="module")
def bridge() -> Bridge:
    torch.manual_seed(0)
    return Bridge(UNet3D(NARROW), BridgeConfig(steps=3, widths=NARROW))


def _random_masks(shape, rng, n):
    """Metaballs, scattered voxels, border blobs and multi-component masks."""
    out = []
    for i in range(n):
        kind = i % 4
        if kind == 0:
            m = np.zeros(shape, bool)
            c = rng.integers(0, np.array(shape))
            m[tuple(slice(max(ci - 2, 0), ci + 3) for ci in c)] = True
        elif kind == 1:
            m = rng.random(shape) < 0.003
        elif kind == 2:
            m = np.zeros(shape, bool)
            m[:3, rng.integers(0, shape[1] - 4) :][:, :4, -5:] = True  # touches two faces
        else:
            m = np.zeros(shape, bool)
            for _ in range(3):
                c = rng.integers(2, np.array(shape) - 2)
                m[tuple(slice(ci - 1, ci + 2) for ci in c)] = True
        m[tuple(rng.integers(0, s) for s in shape)] = True
        out.append(m)
    return out


# -- closed forms -----------------------------------------------------------------------------
def test_posterior_step_has_the_bridge_conditional_law():
    """Given x0 exactly, x_s = step(x_t) has mean x0 + (s/t)(x_t - x0) and var σ² s(t-s)/t,
    and (x_t drawn from the marginal) x_s has the bridge marginal at s."""
    rng = np.random.default_rng(0)
    n, sigma, sigma1, x0, m = 400_000, 0.3, 0.2, 0.7, -0.4
    t, s = 0.8, 0.35
    x1 = m + sigma1 * rng.standard_normal(n)
    xt = bridge_marginal(x0, x1, t, sigma, rng.standard_normal(n))
    # the marginal itself
    assert abs(xt.mean() - ((1 - t) * x0 + t * m)) < 4e-3
    var_t = t**2 * sigma1**2 + sigma**2 * t * (1 - t)
    assert abs(xt.var() - var_t) < 0.01 * var_t + 1e-4
    # conditional law at one fixed x_t
    fixed = np.full(n, 0.1)
    xs = bridge_step(fixed, x0, t, s, sigma, rng.standard_normal(n))
    assert abs(xs.mean() - (x0 + (s / t) * (0.1 - x0))) < 3e-3
    assert abs(xs.var() - sigma**2 * s * (t - s) / t) < 0.01 * sigma**2 * s * (t - s) / t
    # the step composes to the marginal at s
    xs = bridge_step(xt, x0, t, s, sigma, rng.standard_normal(n))
    var_s = s**2 * sigma1**2 + sigma**2 * s * (1 - s)
    assert abs(xs.mean() - ((1 - s) * x0 + s * m)) < 3e-3
    assert abs(xs.var() - var_s) < 0.015 * var_s
    # s = 0 lands on x0
    assert np.all(bridge_step(xt, x0, t, 0.0, sigma, rng.standard_normal(n)) == x0)


class _Oracle(torch.nn.Module):
    """A "network" that knows x0 (a constant inside the mask) and records its inputs."""

    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = value
        self.seen: list[tuple[float, np.ndarray]] = []

    def forward(self, x_t, mask, t):
        inside = mask[:, 0] > 0
        self.seen.append((float(t[0]), x_t[:, 0][inside].numpy().copy()))
        return torch.where(mask > 0, torch.full_like(x_t, self.value), x_t)


def test_sampler_with_exact_x0_follows_the_bridge_marginals():
    """With x̂0 = x0, the state fed to the network at each t has the marginal of the bridge:
    mean (1-t) x0 + t·shell_mean, variance t² σ1² + σ² t (1-t); the output is x0 inside."""
    cfg = BridgeConfig(steps=10, sigma=0.4, sigma1=0.15, bf16=False, crop=32)
    x = np.full((32, 32, 32), -0.5, np.float32)
    mask = np.zeros(x.shape, bool)
    mask[4:28, 4:28, 4:28] = True
    oracle = _Oracle(0.25)
    b = Bridge(oracle, cfg)  # type: ignore[arg-type]
    out = b.remove(x, mask, seed=3)
    assert np.all(out[mask] == np.float32(0.25))
    assert np.array_equal(out[~mask], x[~mask])
    assert len(oracle.seen) == cfg.steps
    for t, vals in oracle.seen:
        mean = (1 - t) * 0.25 + t * (-0.5)
        var = t**2 * cfg.sigma1**2 + cfg.sigma**2 * t * (1 - t)
        sd = np.sqrt(var / vals.size)
        assert abs(vals.mean() - mean) < 5 * sd + 1e-6, t
        assert abs(vals.var() - var) < 0.05 * var + 1e-6, t


def test_shell_mean_is_the_mean_of_the_one_voxel_shell():
    x = np.arange(5**3, dtype=np.float32).reshape(5, 5, 5)
    m = np.zeros(x.shape, bool)
    m[2, 2, 2] = True
    ring = np.ones((3, 3, 3), bool)
    ring[1, 1, 1] = False
    assert shell_mean(x, m) == pytest.approx(x[1:4, 1:4, 1:4][ring].mean())
    with pytest.raises(ValueError, match="whole volume"):
        shell_mean(x, np.ones(x.shape, bool))


# -- crops ------------------------------------------------------------------------------------
def test_crop_boxes_cover_every_mask_voxel_with_sides_multiple_of_four():
    rng = np.random.default_rng(1)
    for m in _random_masks((32, 32, 32), rng, 12):
        boxes = crop_boxes(m, margin=3, crop=16)
        cover = np.zeros(m.shape, bool)
        for comp, (corner, size) in boxes:
            assert all(s % 4 == 0 and s >= 16 for s in size)
            assert not (comp & cover).any()  # components go to one box only
            cover |= comp
            idx = np.argwhere(comp)
            assert np.all(idx >= np.array(corner) + 1) or np.any(np.array(corner) <= 0)
            assert np.all(idx < np.array(corner) + np.array(size))
        assert np.array_equal(cover, m)


# -- locality (spec item 2) -------------------------------------------------------------------
def test_remove_and_remove_batch_are_bit_identical_outside_the_mask(bridge):
    rng = np.random.default_rng(2)
    ph = make_phantom(32, n_nodules=2, seed=4)
    masks = _random_masks(ph.shape, rng, 16)
    xs = np.repeat(ph.image[None], len(masks), 0)
    out = bridge.remove_batch(xs, np.stack(masks), list(range(len(masks))))
    for o, m in zip(out, masks):
        assert np.array_equal(o[~m], ph.image[~m])
        assert np.all(np.isfinite(o))
    one = bridge.remove(ph.image, masks[0], seed=9)
    assert np.array_equal(one[~masks[0]], ph.image[~masks[0]])
    # a volume smaller than the crop and not a multiple of 4 (edge padding path)
    small = rng.standard_normal((7, 9, 10)).astype(np.float32)
    m = np.zeros(small.shape, bool)
    m[2:5, 3:6, 4:7] = True
    o = bridge.remove(small, m, seed=0)
    assert np.array_equal(o[~m], small[~m])


def test_insert_is_bit_identical_outside_the_dilated_template_mask(bridge):
    ph = make_phantom(32, n_nodules=0, seed=5)
    rng = np.random.default_rng(3)
    lung = np.argwhere(ph.lung_mask)
    for tmpl in nodule_library(4, seed=1):
        for _ in range(3):
            c = tuple(lung[rng.integers(len(lung))])
            out = bridge.insert(ph.image, tmpl, c, tau=0.3, seed=int(rng.integers(99)))
            edit = ndimage.binary_dilation(tmpl.placed_mask(c, ph.shape), STRUCT)
            assert np.array_equal(out[~edit], ph.image[~edit])
    # at the volume border too
    out = bridge.insert(ph.image, tmpl, (0, 31, 16), seed=0)
    edit = ndimage.binary_dilation(tmpl.placed_mask((0, 31, 16), ph.shape), STRUCT)
    assert np.array_equal(out[~edit], ph.image[~edit])


def test_batching_and_deduplication_do_not_change_an_edit():
    torch.manual_seed(1)
    b = Bridge(UNet3D(NARROW), BridgeConfig(steps=3, bf16=False, widths=NARROW))
    ph = make_phantom(32, n_nodules=3, seed=6)
    m = ndimage.binary_dilation(ph.nodule_masks[0], STRUCT)
    alone = b.remove(ph.image, m, seed=5)
    other = ndimage.binary_dilation(ph.nodule_masks[1], STRUCT)
    batch = b.remove_batch(np.stack([ph.image] * 3), np.stack([m, other, m]), [5, 5, 5])
    np.testing.assert_allclose(batch[0], alone, atol=1e-5)
    assert np.array_equal(batch[0], batch[2])
    again = b.remove(ph.image, m, seed=6)
    assert not np.array_equal(again, alone)  # the seed matters


# -- training, cache --------------------------------------------------------------------------
def test_training_smoke_save_load_and_cache(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    crops = (rng.standard_normal((12, 16, 16, 16)) * 0.05 - 0.78).astype(np.float32)
    b = Bridge.train(
        crops, TrainConfig(steps=3, batch_size=4), BridgeConfig(steps=2, widths=NARROW)
    )
    assert np.isfinite(b.record["loss_last"]) and b.record["loss_first"] > 0
    path = tmp_path / "b.pt"
    b.save(path)
    c = Bridge.load(path)
    m = np.zeros((16, 16, 16), bool)
    m[5:9, 6:10, 4:8] = True
    np.testing.assert_array_equal(b.remove(crops[0], m, seed=1), c.remove(crops[0], m, seed=1))
    monkeypatch.setenv("SHNAP_CACHE", str(tmp_path / "cache"))
    cfg = TrainConfig(n_crops=8, steps=2, batch_size=4, n_pair_phantoms=2, n_mask_phantoms=2)
    first = Bridge.pretrained(cfg, BridgeConfig(steps=2, widths=NARROW))
    second = Bridge.pretrained(cfg, BridgeConfig(steps=2, widths=NARROW))
    assert not first.record["cached"] and second.record["cached"]


def test_split_bridge_removes_and_inserts_with_its_own_network(tmp_path):
    """``TrainConfig.split``: an unconditioned removal UNet and a conditioned insertion UNet,
    both saved and loaded; ``remove`` runs only the first, ``insert`` only the second."""
    rng = np.random.default_rng(0)
    crops = (rng.standard_normal((12, 16, 16, 16)) * 0.05 - 0.78).astype(np.float32)
    b = Bridge.train(crops, TrainConfig(steps=2, batch_size=4), BridgeConfig(steps=2))
    assert not b.unet.cond and b.insert_unet is not None and b.insert_unet.cond
    one = Bridge.train(crops, TrainConfig(steps=2, batch_size=4, split=False))
    assert one.unet.cond and one.insert_unet is None
    b.save(tmp_path / "b.pt")
    c = Bridge.load(tmp_path / "b.pt")
    assert c.insert_unet is not None and c.insert_unet.cond and not c.unet.cond
    ph = make_phantom(32, n_nodules=0, seed=5)
    tmpl = nodule_library(1, seed=1)[0]
    centre = tuple(np.argwhere(ph.lung_mask)[0])
    np.testing.assert_array_equal(
        b.insert(ph.image, tmpl, centre), c.insert(ph.image, tmpl, centre)
    )
    removal, insertion = _Oracle(-0.7), _Oracle(0.2)
    d = Bridge(removal, BridgeConfig(steps=2, bf16=False), insert_unet=insertion)  # type: ignore[arg-type]
    m = np.zeros(ph.shape, bool)
    m[10:13, 10:13, 10:13] = True
    d.remove(ph.image, m, seed=0)
    assert removal.seen and not insertion.seen
    n_removal = len(removal.seen)
    d.insert(ph.image, tmpl, centre, seed=0)
    assert insertion.seen and len(removal.seen) == n_removal


def test_metaball_masks_stay_inside_their_margin():
    rng = np.random.default_rng(4)
    for _ in range(20):
        m = random_metaball_mask((16, 16, 16), rng, margin=2)
        assert m.any()
        assert not m[:2].any() and not m[-2:].any()
        assert not m[:, :2].any() and not m[:, :, -2:].any()


# -- bad input --------------------------------------------------------------------------------
def test_bad_input_is_refused_naming_the_argument(bridge):
    x = np.zeros((16, 16, 16), np.float32)
    m = np.zeros(x.shape, bool)
    m[4:8, 4:8, 4:8] = True
    tmpl = nodule_library(1, seed=0)[0]
    with pytest.raises(ValueError, match="x must be a 3D"):
        bridge.remove(np.zeros((16, 16)), m[0], seed=0)
    with pytest.raises(TypeError, match="mask must be a boolean"):
        bridge.remove(x, m.astype(np.uint8), seed=0)
    with pytest.raises(ValueError, match="mask must select"):
        bridge.remove(x, np.zeros(x.shape, bool), seed=0)
    with pytest.raises(ValueError, match="mask must have shape"):
        bridge.remove(x, m[:8], seed=0)
    with pytest.raises(ValueError, match="steps must be >= 1"):
        bridge.remove(x, m, seed=0, steps=0)
    with pytest.raises(ValueError, match="xs must be a batch"):
        bridge.remove_batch(x, m, [0])
    with pytest.raises(ValueError, match="seeds must have 2"):
        bridge.remove_batch(np.stack([x, x]), np.stack([m, m]), [0])
    with pytest.raises(ValueError, match=r"masks\[1\] must select"):
        bridge.remove_batch(np.stack([x, x]), np.stack([m, ~np.ones_like(m)]), [0, 1])
    for tau in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="tau must be in"):
            bridge.insert(x, tmpl, (8, 8, 8), tau=tau)
    with pytest.raises(ValueError, match="centre must be a voxel"):
        bridge.insert(x, tmpl, (8, 8, 99))
    with pytest.raises(ValueError, match="crops must have sides"):
        Bridge.train(np.zeros((4, 10, 16, 16), np.float32), TrainConfig(steps=1))
    with pytest.raises(ValueError, match="steps must be >= 1"):
        Bridge.train(np.zeros((4, 16, 16, 16), np.float32), TrainConfig(steps=0))


def test_conditioned_unet_takes_the_prior_channels():
    net = UNet3D(cond=True)
    x = torch.zeros(2, 1, 16, 16, 16)
    m = torch.ones_like(x)
    t = torch.full((2,), 0.3)
    a = net(x, m, t)
    b = net(x, m, t, torch.zeros_like(x), torch.zeros_like(x))
    torch.testing.assert_close(a, b)  # omitted prior channels are zeros (a removal)
    assert net.inc.in_channels == 4 and UNet3D().inc.in_channels == 2


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="known miss (2026-12-04, code version 3): edit-region correlation with the template "
    "measured 0.73 on two runs, bar 0.8; README 'What does not work yet'",
)
def test_trained_bridge_insert_puts_the_object_inside_the_mask():
    """Item 6's premise: after insert, the edit region correlates with the inserted template
    (>= 0.8), its mean is the template's within 100 HU, and outside is bit-identical."""
    b = Bridge.pretrained()
    lib = nodule_library(2, seed=3)
    struct = ndimage.generate_binary_structure(3, 3)
    for case in range(2):
        ph = make_phantom(32, n_nodules=1, seed=30_000 + case)
        depth = ndimage.distance_transform_edt(ph.lung_mask)
        blocked = ndimage.binary_dilation(ph.objects() | ph.vessel_mask, iterations=4)
        c = tuple(int(v) for v in np.argwhere((depth > 4) & ~blocked)[0])
        tm = lib[case]
        placed = tm.placed_mask(c, ph.shape)
        edit = ndimage.binary_dilation(placed, struct)
        out = b.insert(ph.image, tm, c, tau=0.3, seed=case)
        assert np.array_equal(out[~edit], ph.image[~edit])
        vs, ps = tm.paste_slices(c, ph.shape)
        tmpl = np.zeros(ph.shape, np.float32)
        tmpl[vs] = tm.image[ps]
        assert np.corrcoef(out[edit], tmpl[edit])[0, 1] >= 0.8
        assert abs(out[placed].mean() - tm.image[tm.mask].mean()) * 700 < 100


def test_split_removal_network_trains_on_the_masks_it_edits(monkeypatch):
    """Code version 6: the removal UNet sees no real removal or insertion pairs (with them it
    drew nodule-like blobs into removed regions) but the deployment masks of
    :func:`removal_masks`; the insertion UNet keeps both pair shares and no deployment masks."""
    calls = []
    fit = Bridge._fit

    def spy(crops, train, config, progress, pairs, p_removal, p_insertion, cond, offset, **kw):
        calls.append((p_removal, p_insertion, cond, offset, kw.get("removal") is not None))
        return fit(
            crops, train, config, progress, pairs, p_removal, p_insertion, cond, offset, **kw
        )

    monkeypatch.setattr(Bridge, "_fit", staticmethod(spy))
    rng = np.random.default_rng(0)
    crops = (rng.standard_normal((12, 16, 16, 16)) * 0.05 - 0.78).astype(np.float32)
    tc = TrainConfig(steps=1, batch_size=4)
    Bridge.train(crops, tc, BridgeConfig(steps=2), removal=removal_masks(3, 16, seed=1))
    assert calls == [(tc.p_removal, tc.p_insertion, True, 0, False), (0.0, 0.0, False, 1, True)]


def test_removal_masks_are_dilated_nodules_over_object_free_twins():
    """Item 1: the masks hold vessel / wall voxels (above -750 HU) as real nodule masks do;
    the crops are the nodule-free twin's voxels, so no target holds a nodule."""
    from shnap._world import find_nodules, window

    crops, masks = removal_masks(12, 16, seed=2)
    assert crops.shape == masks.shape and masks.dtype == bool and len(crops) >= 20
    bright = window(np.float32(-750.0))
    with_bright = np.mean([(c[m] > bright).any() for c, m in zip(crops, masks)])
    assert with_bright >= 0.8
    sizes = masks.reshape(len(masks), -1).sum(1)
    assert sizes.min() >= 8  # a nodule of >= 4 voxels dilated by one
    for c, m in zip(crops, masks):
        eroded = ndimage.binary_erosion(m, STRUCT)  # the nodule's own voxels, roughly
        assert not find_nodules(c, eroded & (c < window(np.float32(-200.0))))


def test_sampling_times_end_near_zero_and_are_denser_there():
    """Item 2: the sampler's last network call is at t_end <= 0.001; steps shrink toward 0."""
    ts = sampling_times(1.0, 50)
    assert ts[0] == 1.0 and abs(ts[-1] - 1e-3) < 1e-12 and len(ts) == 50
    gaps = -np.diff(ts)
    assert np.all(gaps > 0) and np.all(np.diff(gaps) < 0)
    assert sampling_times(0.3, 1).tolist() == [0.3]
    with pytest.raises(ValueError, match="t_end"):
        sampling_times(0.3, 5, t_end=0.5)
    with pytest.raises(ValueError, match=r"BridgeConfig\.t_end"):
        BridgeConfig(t_end=0.0)
    with pytest.raises(ValueError, match="removal_mask_source"):
        TrainConfig(removal_mask_source="random")


def test_sampler_settings_do_not_change_the_cache_key():
    base = _key(TrainConfig(), BridgeConfig())
    assert _key(TrainConfig(), BridgeConfig(steps=10, t_end=5e-4)) == base
    assert _key(TrainConfig(), BridgeConfig(sigma=0.3)) != base
    assert _key(TrainConfig(p_metaball=0.5), BridgeConfig()) != base
    assert _key(TrainConfig(loss="l1"), BridgeConfig()) == base  # the default keeps old keys
    assert _key(TrainConfig(loss="l2"), BridgeConfig()) != base
    with pytest.raises(ValueError, match=r"TrainConfig\.loss must be 'l1' or 'l2'"):
        TrainConfig(loss="huber")


def test_train_loss_is_the_masked_absolute_or_squared_error(monkeypatch):
    """With a network that predicts 0 everywhere and crops at -0.6, the masked L1 loss is 0.6
    and the L2 loss 0.36, whatever the masks and the bridge draws."""
    from shnap import _bridge
    from shnap._unet import UNet3D

    class Zero(UNet3D):
        def forward(self, *args, **kw):  # keeps the graph, so the optimiser still steps
            return super().forward(*args, **kw) * 0.0

    monkeypatch.setattr(_bridge, "UNet3D", Zero)
    crops = np.full((4, 8, 8, 8), -0.6, np.float32)
    got = {}
    for loss in ("l1", "l2"):
        tc = TrainConfig(
            n_crops=4, steps=2, batch_size=4, nodule_like=False, split=False, radius=(1.5, 2.0),
            n_pair_phantoms=0, loss=loss,
        )  # fmt: skip
        b = _bridge.Bridge.train(crops, tc, BridgeConfig(widths=(8, 8, 8), bf16=False))
        got[loss] = b.record["loss_first"]
    assert got["l1"] == pytest.approx(0.6, rel=1e-5)
    assert got["l2"] == pytest.approx(0.36, rel=1e-5)


def test_training_in_segments_gives_the_uninterrupted_weights():
    rng = np.random.default_rng(0)
    crops = (rng.standard_normal((12, 16, 16, 16)) * 0.05 - 0.78).astype(np.float32)
    rem = removal_masks(2, 16, seed=3)
    tc, cfg = TrainConfig(steps=3, batch_size=4), BridgeConfig(widths=NARROW)
    states = []
    for which in (0, 1):
        _, state = Bridge.fit_network(which, crops, tc, cfg, None, rem, until=1)
        assert state.step == 1 and len(state.losses) == 1
        state = pickle.loads(pickle.dumps(state))  # as a job's result comes back
        blob = pickle.dumps(state)
        assert pickle.dumps(pickle.loads(blob)) == blob  # the same digest in every run
        given = state
        _, state = Bridge.fit_network(which, crops, tc, cfg, None, rem, resume=given)
        assert pickle.dumps(given) == blob  # resuming left its input (a job's argument) alone
        assert state.step == 3 and len(state.losses) == 3
        states.append(state)
    resumed = Bridge.from_states(states, tc, cfg, 0.0, None, rem)
    straight = Bridge._train(crops, tc, cfg, None, None, rem)
    for net in ("unet", "insert_unet"):
        for a, b in zip(getattr(resumed, net).parameters(), getattr(straight, net).parameters()):
            assert torch.equal(a, b)
    assert resumed.record["loss_last"] == straight.record["loss_last"]


def test_insert_steps_sets_the_insertion_network_calls_without_retraining():
    removal, insertion = _Oracle(-0.7), _Oracle(0.2)
    cfg = BridgeConfig(steps=10, insert_steps=4, bf16=False)
    d = Bridge(removal, cfg, insert_unet=insertion)  # type: ignore[arg-type]
    ph = make_phantom(32, n_nodules=0, seed=5)
    tmpl = nodule_library(1, seed=1)[0]
    centre = tuple(np.argwhere(ph.lung_mask)[len(np.argwhere(ph.lung_mask)) // 2])
    d.insert(ph.image, tmpl, centre, tau=0.3, seed=0)
    assert len(insertion.seen) == 4 and insertion.seen[0][0] == pytest.approx(0.3)
    insertion.seen.clear()
    d.insert(ph.image, tmpl, centre, tau=0.3, seed=0, steps=20)  # explicit steps win
    assert len(insertion.seen) == 6
    assert _key(TrainConfig(), cfg) == _key(TrainConfig(), BridgeConfig(bf16=False))
    with pytest.raises(ValueError, match="insert_steps"):
        BridgeConfig(insert_steps=0)


def test_removal_network_metaballs_avoid_bright_voxels_unless_asked(monkeypatch):
    """Code version 7: bright voxels enter the removal network's masks only through the
    deployment masks (real removal regions reach vessels and the chest wall); its random
    metaballs stay where a nodule could sit, as in version 5 (version 6,
    ``metaball_bright=True``, let them cover the wall and ribs)."""
    import shnap._bridge as bridge_mod

    filtered = []
    real = bridge_mod._nodule_like_masks

    def spy(x0, masks, flat, level, rng, fallback):
        filtered.append(len(x0))
        return real(x0, masks, flat, level, rng, fallback)

    monkeypatch.setattr(bridge_mod, "_nodule_like_masks", spy)
    rng = np.random.default_rng(0)
    crops = (rng.standard_normal((12, 16, 16, 16)) * 0.05 - 0.78).astype(np.float32)
    rem = removal_masks(3, 16, seed=1)
    cfg = BridgeConfig(widths=NARROW)
    tc = TrainConfig(steps=2, batch_size=8, split=True)
    Bridge._train(crops, tc, cfg, None, None, rem)
    # two steps of each network: the insertion network's 8 metaballs, the removal network's
    # 2 (a quarter of its batch; the rest are deployment masks)
    assert filtered == [8, 8, 2, 2]
    filtered.clear()
    Bridge._train(
        crops, TrainConfig(steps=2, batch_size=8, metaball_bright=True), cfg, None, None, rem
    )
    assert filtered == [8, 8]
    assert _key(TrainConfig(metaball_bright=True), BridgeConfig()) != _key(
        TrainConfig(), BridgeConfig()
    )
