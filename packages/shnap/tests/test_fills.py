"""Naive fills and RePaint: values, locality (spec item 2) for every editor, bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import ndimage

from shnap._bridge import Bridge, BridgeConfig, shell_mean
from shnap._fills import DDPMConfig, GlobalMeanFill, RePaint, ShellMeanFill, ZeroFill, alpha_bar
from shnap._unet import UNet3D
from shnap._world import make_phantom, nodule_library

STRUCT = np.ones((3, 3, 3), bool)


def _editors():
    torch.manual_seed(0)
    return [
        ZeroFill(),
        GlobalMeanFill(),
        ShellMeanFill(),
        RePaint(UNet3D(), DDPMConfig(steps=2, jumps=2)),
        Bridge(UNet3D(), BridgeConfig(steps=2)),
    ]


EDITORS = _editors()


def _masks(shape, rng, n):
    out = []
    for _ in range(n):
        m = np.zeros(shape, bool)
        for _ in range(int(rng.integers(1, 4))):
            c = rng.integers(0, np.array(shape))
            r = int(rng.integers(1, 4))
            m[tuple(slice(max(ci - r, 0), ci + r + 1) for ci in c)] = True
        out.append(m)
    return out


@pytest.mark.parametrize("editor", EDITORS, ids=lambda e: e.name)
def test_every_editor_is_bit_identical_outside_the_edit(editor):
    rng = np.random.default_rng(7)
    ph = make_phantom(32, n_nodules=3, seed=8)
    masks = _masks(ph.shape, rng, 10)
    out = editor.remove_batch(np.repeat(ph.image[None], 10, 0), np.stack(masks), list(range(10)))
    assert out.shape == (10, *ph.shape) and out.dtype == np.float32
    for o, m in zip(out, masks):
        assert np.array_equal(o[~m], ph.image[~m])
        assert not np.array_equal(o[m], ph.image[m])  # something was edited
    one = editor.remove(ph.image, masks[3], seed=2)
    assert np.array_equal(one[~masks[3]], ph.image[~masks[3]])
    lung = np.argwhere(ph.lung_mask)
    for tmpl in nodule_library(3, seed=2):
        c = tuple(lung[rng.integers(len(lung))])
        ins = editor.insert(ph.image, tmpl, c, tau=0.3, seed=1)
        edit = ndimage.binary_dilation(tmpl.placed_mask(c, ph.shape), STRUCT)
        assert np.array_equal(ins[~edit], ph.image[~edit])


def test_naive_fill_values():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12, 12, 12)).astype(np.float32)
    m = np.zeros(x.shape, bool)
    m[3:6, 4:8, 2:5] = True
    assert np.all(ZeroFill().remove(x, m)[m] == 0)
    assert np.allclose(GlobalMeanFill().remove(x, m)[m], x.mean(dtype=np.float64))
    assert np.allclose(ShellMeanFill().remove(x, m)[m], shell_mean(x, m))
    two = m.copy()
    two[9:11, 9:11, 9:11] = True  # a second component gets its own shell mean
    out = ShellMeanFill().remove(x, two)
    assert np.allclose(out[m], shell_mean(x, m)) and np.allclose(
        out[two & ~m], shell_mean(x, two & ~m)
    )
    # insertion pastes the template exactly
    tmpl = nodule_library(1, seed=0)[0]
    out = ShellMeanFill().insert(x, tmpl, (6, 6, 6))
    placed = tmpl.placed_mask((6, 6, 6), x.shape)
    vs, ps = tmpl.paste_slices((6, 6, 6), x.shape)
    assert np.array_equal(out[vs][tmpl.mask[ps]], tmpl.image[ps][tmpl.mask[ps]])
    assert placed.sum() == tmpl.mask[ps].sum()


def test_cosine_schedule_is_monotone_from_one():
    t = np.linspace(0, 1, 101)
    ab = alpha_bar(t)
    assert ab[0] == pytest.approx(1.0) and np.all(np.diff(ab) < 0) and ab[-1] >= 1e-4


def test_repaint_training_smoke(tmp_path, monkeypatch):
    monkeypatch.setenv("SHNAP_CACHE", str(tmp_path))
    cfg = DDPMConfig(train_steps=2, batch_size=4, steps=2)
    first, second = RePaint.pretrained(cfg, n_crops=8), RePaint.pretrained(cfg, n_crops=8)
    assert not first.record["cached"] and second.record["cached"]
    rng = np.random.default_rng(1)
    crops = (rng.standard_normal((8, 16, 16, 16)) * 0.05 - 0.78).astype(np.float32)
    rp = RePaint.train(crops, DDPMConfig(train_steps=3, batch_size=4, steps=2))
    assert np.isfinite(rp.record["loss_last"])
    m = np.zeros((16, 16, 16), bool)
    m[6:10, 6:10, 6:10] = True
    out = rp.remove(crops[0], m, seed=0)
    assert np.array_equal(out[~m], crops[0][~m]) and np.all(np.isfinite(out))


@pytest.mark.parametrize("editor", EDITORS, ids=lambda e: e.name)
def test_fills_refuse_bad_input(editor):
    x = np.zeros((8, 8, 8), np.float32)
    m = np.zeros(x.shape, bool)
    m[2:4, 2:4, 2:4] = True
    with pytest.raises(ValueError, match="x must be a 3D"):
        editor.remove(x[0], m[0], 0)
    with pytest.raises(TypeError, match="mask must be a boolean"):
        editor.remove(x, m.astype(float), 0)
    with pytest.raises(ValueError, match="mask must select"):
        editor.remove(x, np.zeros_like(m), 0)
    with pytest.raises(ValueError, match="masks must have shape"):
        editor.remove_batch(x[None], m[None, :4], [0])
    with pytest.raises(ValueError, match="tau must be in"):
        editor.insert(x, nodule_library(1, seed=0)[0], (4, 4, 4), tau=2.0)


def test_repaint_samples_a_repeated_crop_once_without_changing_an_edit(monkeypatch):
    torch.manual_seed(1)
    rp = RePaint(UNet3D((8, 8, 8)), DDPMConfig(steps=2, jumps=2, widths=(8, 8, 8), bf16=False))
    ph = make_phantom(32, n_nodules=3, seed=6)
    m = ndimage.binary_dilation(ph.nodule_masks[0], STRUCT)
    other = ndimage.binary_dilation(ph.nodule_masks[1], STRUCT)
    alone = rp.remove(ph.image, m, seed=5)
    sampled = []
    run = rp._run
    monkeypatch.setattr(rp, "_run", lambda jobs, t0: sampled.append(len(jobs)) or run(jobs, t0))
    batch = rp.remove_batch(np.stack([ph.image] * 3), np.stack([m, other, m]), [5, 5, 5])
    assert sampled == [2]  # three removals, two distinct crop jobs
    np.testing.assert_allclose(batch[0], alone, atol=1e-5)
    assert np.array_equal(batch[0], batch[2])
    assert not np.array_equal(rp.remove(ph.image, m, seed=6), alone)  # the seed matters
