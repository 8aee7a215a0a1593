"""Realism report: features, crops, discriminators on clear and null cases, nodule check."""

from __future__ import annotations

import numpy as np
import pytest

from shnap._fills import ShellMeanFill, ZeroFill
from shnap._realism import (
    box_crop,
    crop_features,
    nodule_free_fraction,
    realism_report,
    realism_reports,
    removal_study,
)


@pytest.fixture(scope="module")
def zero_study():
    return removal_study(ZeroFill(), 40, seed=1)


def test_box_crop_holds_the_padded_box_centred():
    rng = np.random.default_rng(0)
    vol = rng.standard_normal((20, 20, 20)).astype(np.float32)
    m = np.zeros(vol.shape, bool)
    m[5:8, 6:10, 1:3] = True
    crop, cm = box_crop(vol, m, size=12, pad=2)
    assert crop.shape == (12, 12, 12) and cm.sum() == m.sum()
    idx = np.argwhere(cm)
    lo = idx.min(0)
    assert np.array_equal(crop[cm], vol[m])
    # the z-box starts at -1 (outside the volume): those canvas voxels stay 0
    assert np.all(crop[:, :, lo[2] - 2] == 0)
    with pytest.raises(ValueError, match="larger than size"):
        box_crop(vol, np.ones(vol.shape, bool), size=12)
    with pytest.raises(ValueError, match="mask must select"):
        box_crop(vol, np.zeros(vol.shape, bool))


def test_features_are_finite_and_see_a_flat_fill(zero_study):
    f_real = np.stack(
        [crop_features(c, m) for c, m in zip(zero_study["real"], zero_study["real_masks"])]
    )
    f_fill = np.stack(
        [crop_features(c, m) for c, m in zip(zero_study["filled"], zero_study["filled_masks"])]
    )
    assert f_real.shape == (40, 14) and np.all(np.isfinite(f_real)) and np.all(np.isfinite(f_fill))
    assert np.all(f_fill[:, 1] == 0) and np.all(f_real[:, 1] > 0)  # std inside the mask


def test_discriminator_tells_zero_fill_and_not_real_from_real(zero_study):
    rep = realism_report(
        zero_study["real"],
        zero_study["filled"],
        zero_study["real_masks"],
        zero_study["filled_masks"],
        cnn_epochs=3,
        nodule_free=zero_study["nodule_free"],
    )
    assert rep.auc >= 0.9 and rep.auc == max(rep.auc_logistic, rep.auc_cnn)
    assert rep.n_real == rep.n_filled == 40 and "AUC" in str(rep)
    # null case: two disjoint sets of real crops
    other = removal_study(ZeroFill(), 40, seed=2)
    null = realism_report(
        zero_study["real"],
        other["real"],
        zero_study["real_masks"],
        other["real_masks"],
        cnn_epochs=3,
    )
    assert null.auc < 0.8


def test_nodule_check(zero_study):
    # zero = -300 HU is above the -600 HU threshold: every zero-filled region is a "nodule"
    assert zero_study["nodule_free"] == 0.0
    lung = np.full((16, 16, 16), -0.786, np.float32)
    blob = np.zeros(lung.shape, bool)
    blob[6:10, 6:10, 6:10] = True
    x = np.where(blob, np.float32(0.4), lung)
    region = np.zeros(lung.shape, bool)
    region[5:11, 5:11, 5:11] = True
    assert nodule_free_fraction([ShellMeanFill().remove(x, region)], [region]) == 1.0
    assert nodule_free_fraction([ZeroFill().remove(x, region), x], [region, region]) == 0.0
    tiny = lung.copy()
    tiny[7, 7, 7:10] = 0.4  # 3 voxels < 4
    assert nodule_free_fraction([tiny], [region]) == 1.0
    with pytest.raises(ValueError, match="at least one"):
        nodule_free_fraction([], [])


def test_report_refuses_bad_input(zero_study):
    r, f = zero_study["real"], zero_study["filled"]
    rm, fm = zero_study["real_masks"], zero_study["filled_masks"]
    with pytest.raises(ValueError, match="real_crops and real_masks"):
        realism_report(r[:, 0], f, rm, fm)
    with pytest.raises(TypeError, match="filled_masks must be boolean"):
        realism_report(r, f, rm, fm.astype(np.uint8))
    with pytest.raises(ValueError, match="at least folds=5"):
        realism_report(r[:3], f, rm[:3], fm)


def _item3_report(editor):
    d = removal_study(editor, 500, seed=0)
    return realism_report(
        d["real"], d["filled"], d["real_masks"], d["filled_masks"], nodule_free=d["nodule_free"]
    )


@pytest.mark.slow
def test_item3_naive_fills_are_detected():
    """Spec item 3 (500 real + 500 filled crops): zero and global-mean fill AUC >= 0.9."""
    from shnap._fills import GlobalMeanFill

    for editor in (ZeroFill(), GlobalMeanFill()):
        rep = _item3_report(editor)
        assert rep.auc >= 0.9, f"{editor.name}: {rep}"


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="measured: the shipped bridge's fills reach AUC 0.906 (logistic 0.906, CNN 0.573) "
    "and 82.6% nodule-free on 500 + 500 crops, against AUC <= 0.65 and >= 95%",
)
def test_item3_bridge_fills_pass_the_realism_and_nodule_bars():
    """Spec item 3 (500 real + 500 filled crops): bridge AUC <= 0.65 and >= 95% of its
    removed regions nodule-free."""
    from shnap._bridge import Bridge

    rep = _item3_report(Bridge.pretrained())
    assert rep.auc <= 0.65 and rep.nodule_free >= 0.95, f"bridge: {rep}"


class _TwinEditor:
    """The perfect removal: the object-free twin's voxels under the mask (removal_study draws
    phantom ``s = seed·100003 + k``, k = 0, 1, ...; the twin is ``make_phantom(size, 0,
    seed=s)``). Twins are drawn on demand, in removal_study's order, up to ``n`` phantoms."""

    name = "twin"

    def __init__(self, seed: int, n: int = 60):
        self.seed, self.n, self.k = seed, n, 0
        self.bare: dict[bytes, np.ndarray] = {}

    def _twin(self, x: np.ndarray) -> np.ndarray:
        from shnap._world import make_phantom

        key = x.tobytes()
        while key not in self.bare and self.k < self.n:
            s = self.seed * 100003 + self.k
            self.k += 1
            self.bare[make_phantom(32, n_nodules=3, seed=s).image.tobytes()] = make_phantom(
                32, n_nodules=0, seed=s
            ).image
        return self.bare[key]

    def remove_batch(self, xs, masks, seeds):
        return np.stack([np.where(m, self._twin(x), x) for x, m in zip(xs, masks)])


class _Identity:
    name = "identity"

    def remove_batch(self, xs, masks, seeds):
        return np.array(xs, copy=True)


def test_nodule_check_passes_the_true_background_and_fails_no_edit():
    """The check reads each region's lung parenchyma: the true background (the perfect
    removal) is nodule-free although dilated masks of juxtapleural nodules reach the chest
    wall (reading the whole region flagged 89% of true backgrounds), and an editor that
    changes nothing leaves every nodule in place."""
    assert removal_study(_TwinEditor(seed=3), 20, seed=3)["nodule_free"] == 1.0
    assert removal_study(_Identity(), 20, seed=3)["nodule_free"] == 0.0


def test_removal_study_reports_the_twin_reference_and_the_model_error():
    """The twin removal is returned beside the editor's; on a model, the twin editor's error
    |f(edit) - f(twin)| is exactly 0 and the identity editor's equals the nodule effect."""

    def model(x):
        return x.reshape(len(x), -1).mean(1).astype(np.float64)

    d = removal_study(_TwinEditor(seed=3), 6, seed=3, model=model)
    np.testing.assert_array_equal(d["twin"], d["filled"])
    np.testing.assert_array_equal(d["f_edit"], d["f_twin"])
    assert len(d["f_case"]) == 6 and np.all(d["f_case"] != d["f_twin"])
    ident = removal_study(_Identity(), 6, seed=3, model=model)
    np.testing.assert_array_equal(ident["f_edit"], ident["f_case"])


def test_removal_study_batches_phantoms_without_changing_an_edit(noisy_fill):
    """Removals of several phantoms go to the editor in one call; each keeps its own seed, so
    the study is the same whatever the batch (and the crop count is exact)."""

    def model(x):
        return x.reshape(len(x), -1).mean(1).astype(np.float64)

    one = removal_study(noisy_fill, 7, seed=4, model=model, batch=1)
    many = removal_study(noisy_fill, 7, seed=4, model=model, batch=64)
    assert len(one["filled"]) == len(many["filled"]) == 7
    for key in ("filled", "filled_masks", "twin", "real", "f_edit", "f_case", "f_twin"):
        np.testing.assert_array_equal(one[key], many[key])
    assert one["nodule_free"] == many["nodule_free"]


def _report_pairs(zero_study):
    z = zero_study
    return [
        (z["real"][:10], z["filled"][:10], z["real_masks"][:10], z["filled_masks"][:10], 0.25),
        (z["real"][:10], z["real"][10:20], z["real_masks"][:10], z["real_masks"][10:20], None),
    ]


def test_realism_reports_match_one_report_per_pair(zero_study):
    """Several reports at once equal the single report of each pair."""
    pairs = _report_pairs(zero_study)
    for pair, rep in zip(pairs, realism_reports(pairs, cnn_epochs=1, workers=1)):
        assert rep == realism_report(*pair[:4], cnn_epochs=1, nodule_free=pair[4])
    with pytest.raises(TypeError, match="filled_masks must be boolean"):
        realism_reports([(*pairs[0][:3], pairs[0][3].astype(np.uint8), None)], workers=1)


def test_cnn_below_skips_the_cnn_only_where_the_features_already_separate(zero_study):
    """``cnn_below``: the zero fill (logistic AUC 1) gets no CNN and ``auc`` is the logistic
    AUC; the null pair (real vs real, logistic AUC far below 0.99) still trains it, and its
    report equals the one without the option."""
    z = zero_study
    pairs = [(z["real"], z["filled"], z["real_masks"], z["filled_masks"], None)]
    pairs += _report_pairs(zero_study)[1:]
    skipped, trained = realism_reports(pairs, cnn_epochs=1, workers=1, cnn_below=0.99)
    full = realism_reports(pairs, cnn_epochs=1, workers=1)
    assert skipped.auc_logistic == full[0].auc_logistic >= 0.99
    assert skipped.auc_cnn is None and skipped.auc == skipped.auc_logistic
    assert "CNN not trained" in str(skipped)
    assert trained == full[1] and trained.auc_cnn is not None
    for bad in (0.0, 1.5, float("nan")):
        with pytest.raises(ValueError, match=r"cnn_below must be in \(0.0, 1.0\]"):
            realism_reports(pairs, workers=1, cnn_below=bad)
    with pytest.raises(TypeError, match="cnn_below must be a real number"):
        realism_reports(pairs, workers=1, cnn_below=[0.9])


@pytest.mark.slow
def test_realism_reports_in_two_worker_processes(zero_study):
    """The CNN folds in two worker processes: the same reports (the logistic AUC exactly, the
    CNN's up to float rounding); the fast test above checks the same reports in-process."""
    pairs = _report_pairs(zero_study)
    for pair, rep in zip(pairs, realism_reports(pairs, cnn_epochs=1, workers=2)):
        one = realism_report(*pair[:4], cnn_epochs=1, nodule_free=pair[4])
        assert rep.auc_logistic == one.auc_logistic and rep.nodule_free == one.nodule_free
        assert rep.auc_cnn == pytest.approx(one.auc_cnn, abs=0.02)
