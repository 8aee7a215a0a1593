"""Realism of an editor's fills: can a discriminator tell filled crops from real ones?

Spec "The method", Realism (S(H)NAP, arXiv 2602.02560, reconstructed): real nodule-free crops and
filled crops (the mask's bounding box plus 2 voxels) are told apart by

* a logistic regression on intensity and gradient features of the mask and of its 2-voxel shell
  (:func:`crop_features`), and
* a tiny 3D CNN discriminator on the crop and its mask,

each scored by the mean 5-fold cross-validated AUC; the larger AUC counts (0.5 = indistinguishable).
The nodule check counts edited regions in which :func:`shnap._world.find_nodules` finds a
component above −600 HU with at least 4 voxels. :func:`removal_study` checks each region's lung
parenchyma (region ∩ lung − known vessels, the oracle's reader): the dilated mask of a nodule
near the pleura reaches the chest wall, so the whole region flags 89% of *true* backgrounds
as holding a nodule, and an editor that erased the wall would score best.

:func:`removal_study` builds the data of acceptance item 3: each nodule of synthetic phantoms
removed by the editor (its mask dilated by one voxel), against the true nodule-free background
under the nodule masks of other phantoms (no real and filled crop share anatomy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from scipy import ndimage
from torch import nn

from icml26_shared.checks import check_in_interval
from icml26_shared.threads import single_thread
from shnap._precision import autocast, native_bf16

__all__ = [
    "RealismReport",
    "box_crop",
    "crop_features",
    "nodule_free_fraction",
    "realism_report",
    "realism_reports",
    "removal_study",
]

_STRUCT = ndimage.generate_binary_structure(3, 3)


@dataclass(frozen=True)
class RealismReport:
    """Discriminator AUCs (mean over folds) and, when given, the nodule check."""

    auc: float
    auc_logistic: float
    auc_cnn: float | None
    n_real: int
    n_filled: int
    nodule_free: float | None = None

    def __str__(self) -> str:
        nf = "" if self.nodule_free is None else f", nodule-free {self.nodule_free:.1%}"
        cnn = "not trained" if self.auc_cnn is None else f"{self.auc_cnn:.3f}"
        return (
            f"AUC {self.auc:.3f} (logistic {self.auc_logistic:.3f}, CNN {cnn}; "
            f"{self.n_real} real vs {self.n_filled} filled{nf})"
        )


def box_crop(
    volume: np.ndarray, mask: np.ndarray, size: int = 16, pad: int = 2
) -> tuple[np.ndarray, np.ndarray]:
    """The mask's bounding box plus ``pad`` voxels, centred in a ``size``³ canvas.

    Returns ``(crop, crop_mask)``; canvas voxels outside the box (or the volume) are 0 in the
    crop and False in the mask. Raises when the padded box is larger than ``size``.
    """
    sl = ndimage.find_objects(mask.astype(np.int8))
    if not sl or sl[0] is None:
        raise ValueError("mask must select at least one voxel, got an empty mask")
    lo = np.array([s.start for s in sl[0]]) - pad
    hi = np.array([s.stop for s in sl[0]]) + pad
    if np.any(hi - lo > size):
        raise ValueError(f"mask box + {pad} is {tuple(hi - lo)} voxels, larger than size={size}")
    crop = np.zeros((size,) * 3, np.float32)
    cmask = np.zeros((size,) * 3, bool)
    a = np.maximum(lo, 0)
    b = np.minimum(hi, volume.shape)
    off = (size - (hi - lo)) // 2 + (a - lo)
    dst = tuple(slice(o, o + (e - s)) for o, s, e in zip(off, a, b))
    src = tuple(slice(s, e) for s, e in zip(a, b))
    crop[dst] = volume[src]
    cmask[dst] = mask[src]
    return crop, cmask


def _valid(crop_mask: np.ndarray, pad: int = 2) -> np.ndarray:
    """The padded box of the mask inside the canvas (where crop voxels are real)."""
    sl = ndimage.find_objects(crop_mask.astype(np.int8))[0]
    v = np.zeros(crop_mask.shape, bool)
    v[tuple(slice(max(s.start - pad, 0), s.stop + pad) for s in sl)] = True
    return v


def crop_features(crop: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Intensity and gradient features of the mask and its 2-voxel shell (within the box + 2).

    Mask: mean, std, 10th/90th percentiles, mean gradient magnitude, std of the discrete
    Laplacian (texture), fraction above 0.5 of the shell's range; shell: mean, std, mean
    gradient; their differences; mean gradient on the mask's boundary voxels.
    """
    valid = _valid(mask)
    shell = ndimage.binary_dilation(mask, _STRUCT, iterations=2) & ~mask & valid
    inner = mask & ~ndimage.binary_erosion(mask, _STRUCT) if mask.sum() > 1 else mask
    g = np.sqrt(sum(gi**2 for gi in np.gradient(crop.astype(np.float64))))
    lap = ndimage.laplace(crop.astype(np.float64))
    xm, xs = crop[mask].astype(np.float64), crop[shell].astype(np.float64)
    if xs.size == 0:
        xs = xm
    thr = xs.min() + 0.5 * (xs.max() - xs.min())
    f = [
        xm.mean(),
        xm.std(),
        np.percentile(xm, 10),
        np.percentile(xm, 90),
        g[mask].mean(),
        lap[mask & ndimage.binary_erosion(valid, _STRUCT)].std() if mask.sum() > 1 else 0.0,
        float((xm > thr).mean()),
        xs.mean(),
        xs.std(),
        g[shell].mean() if shell.any() else 0.0,
        xm.mean() - xs.mean(),
        xm.std() - xs.std(),
        g[mask].mean() - (g[shell].mean() if shell.any() else 0.0),
        g[inner].mean(),
    ]
    return np.asarray(f, np.float64)


class _TinyDiscriminator(nn.Module):
    """Conv(2→8)-pool-Conv(8→16)-pool-Conv(16→32), global mean and max, linear; trained with
    Adam (lr 3e-3, weight decay 1e-4), random flips, bf16 autocast where the CPU computes bf16 natively."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv3d(2, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool3d(2),
            nn.Conv3d(8, 16, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool3d(2),
            nn.Conv3d(16, 32, 3, padding=1),
            nn.ReLU(),
        )
        self.head = nn.Linear(64, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.body(x)
        return self.head(torch.cat([h.mean(dim=(2, 3, 4)), h.amax(dim=(2, 3, 4))], 1))[:, 0]


def _cnn_scores(
    train_x: np.ndarray, train_y: np.ndarray, test_x: np.ndarray, epochs: int, seed: int
) -> np.ndarray:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = _TinyDiscriminator()
    opt = torch.optim.Adam(net.parameters(), lr=3e-3, weight_decay=1e-4)
    xt = torch.from_numpy(train_x)
    yt = torch.from_numpy(train_y.astype(np.float32))
    for _ in range(epochs):
        order = rng.permutation(len(xt))
        for a in range(0, len(order), 64):
            idx = torch.from_numpy(order[a : a + 64])
            xb = xt[idx]
            dims = [d for d in (2, 3, 4) if rng.random() < 0.5]
            if dims:
                xb = torch.flip(xb, dims)
            with autocast(native_bf16()):
                logits = net(xb).float()
            loss = nn.functional.binary_cross_entropy_with_logits(logits, yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    net.eval()
    with torch.no_grad(), autocast(native_bf16()):
        return net(torch.from_numpy(test_x)).float().numpy()


def realism_report(
    real_crops: np.ndarray,
    filled_crops: np.ndarray,
    real_masks: np.ndarray,
    filled_masks: np.ndarray,
    *,
    folds: int = 5,
    cnn_epochs: int = 10,
    seed: int = 0,
    nodule_free: float | None = None,
    cnn_below: float | None = None,
) -> RealismReport:
    """Mean ``folds``-fold AUC of the feature logistic regression and of the tiny CNN.

    Args:
        real_crops, filled_crops: (n, S, S, S) crops from :func:`box_crop` (windowed).
        real_masks, filled_masks: their boolean masks.
        folds: stratified cross-validation folds.
        cnn_epochs: training epochs of the CNN per fold.
        seed: fold split and CNN initialisation.
        nodule_free: the nodule check's fraction, carried into the report.
        cnn_below: train the CNN only when the logistic AUC is below this value (``None``:
            always). Above it the CNN cannot move ``auc`` by more than ``1 - cnn_below``, so a
            fill the features already expose skips the costlier discriminator.

    Returns:
        :class:`RealismReport`; ``auc = max(auc_logistic, auc_cnn)`` (``auc_cnn`` is ``None``
        and ``auc = auc_logistic`` when the CNN was skipped).
    """
    pair = (real_crops, filled_crops, real_masks, filled_masks, nodule_free)
    return realism_reports(
        [pair], folds=folds, cnn_epochs=cnn_epochs, seed=seed, workers=1, cnn_below=cnn_below
    )[0]


def _cnn_fold(task: tuple[np.ndarray, np.ndarray, np.ndarray, int, int]) -> np.ndarray:
    """One fold's discriminator scores, on one thread: the same numbers in a worker process
    or here (with one worker), whatever the caller's thread count."""
    with single_thread():
        return _cnn_scores(*task)


def realism_reports(
    pairs: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float | None]],
    *,
    folds: int = 5,
    cnn_epochs: int = 10,
    seed: int = 0,
    workers: int | None = None,
    cnn_below: float | None = None,
) -> list[RealismReport]:
    """:func:`realism_report` of several ``(real_crops, filled_crops, real_masks,
    filled_masks, nodule_free)`` at once; the tiny CNN's ``len(pairs) x folds`` trainings run
    in up to ``workers`` single-threaded processes (default: the run's core share; 1: here, in
    order). Each report equals :func:`realism_report` of its pair (up to float rounding);
    ``cnn_below`` as there."""
    try:
        from sklearn.linear_model import LogisticRegression
        from sklearn.metrics import roc_auc_score
        from sklearn.model_selection import StratifiedKFold
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler
    except ImportError as exc:  # pragma: no cover - scikit-learn ships with the test group
        raise ImportError("realism_report needs scikit-learn: pip install scikit-learn") from exc
    from icml26_shared.experiment import parallel_map

    if cnn_below is not None:
        cnn_below = check_in_interval(cnn_below, "cnn_below", 0.0, 1.0, closed=(False, True))
    prepared, tasks = [], []
    for real_crops, filled_crops, real_masks, filled_masks, nodule_free in pairs:
        crops = [np.asarray(real_crops, np.float32), np.asarray(filled_crops, np.float32)]
        masks = [np.asarray(real_masks), np.asarray(filled_masks)]
        for name, arr, m in zip(("real", "filled"), crops, masks):
            if arr.ndim != 4 or m.shape != arr.shape:
                raise ValueError(
                    f"{name}_crops and {name}_masks must be matching (n, S, S, S) arrays"
                )
            if m.dtype != np.bool_:
                raise TypeError(f"{name}_masks must be boolean, got dtype {m.dtype}")
            if len(arr) < folds:
                raise ValueError(f"{name}_crops needs at least folds={folds} crops, got {len(arr)}")
        x = np.concatenate(crops)
        m = np.concatenate(masks)
        y = np.r_[np.zeros(len(crops[0])), np.ones(len(crops[1]))].astype(int)
        feats = np.stack([crop_features(c, k) for c, k in zip(x, m)])
        valid = np.stack([_valid(k) for k in m])
        images = np.stack([np.where(valid, x, 0.0), m], 1).astype(np.float32)
        split = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(feats, y))
        auc_lr = []
        for tr, te in split:
            clf = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=5000))
            clf.fit(feats[tr], y[tr])
            auc_lr.append(roc_auc_score(y[te], clf.decision_function(feats[te])))
        cnn = cnn_below is None or float(np.mean(auc_lr)) < cnn_below
        if cnn:
            for i, (tr, te) in enumerate(split):
                tasks.append((images[tr], y[tr], images[te], cnn_epochs, seed * 100 + i))
        prepared.append((y, split, auc_lr, cnn, len(crops[0]), len(crops[1]), nodule_free))
    scores = iter(parallel_map(_cnn_fold, tasks, workers=workers) if tasks else [])
    out = []
    for y, split, auc_lr, cnn, n_real, n_filled, nodule_free in prepared:
        a = float(np.mean(auc_lr))
        if not cnn:
            out.append(RealismReport(a, a, None, n_real, n_filled, nodule_free))
            continue
        b = float(np.mean([roc_auc_score(y[te], next(scores)) for _, te in split]))
        out.append(RealismReport(max(a, b), a, b, n_real, n_filled, nodule_free))
    return out


def nodule_free_fraction(images: Sequence[np.ndarray], regions: Sequence[np.ndarray]) -> float:
    """Fraction of edited ``regions`` in which ``find_nodules`` finds no component
    (> −600 HU, >= 4 voxels, 26-connected)."""
    from shnap._world import find_nodules

    hits = [len(find_nodules(im, r)) == 0 for im, r in zip(images, regions)]
    if not hits:
        raise ValueError("images must hold at least one edited volume")
    return float(np.mean(hits))


def _fits(mask: np.ndarray, size: int, pad: int = 2) -> bool:
    sl = ndimage.find_objects(mask.astype(np.int8))[0]
    return all(s.stop - s.start + 2 * pad <= size for s in sl)


def removal_study(
    editor: Any,
    n: int = 500,
    *,
    seed: int = 0,
    n_nodules: int = 3,
    size: int = 32,
    progress: Callable[[int], None] | None = None,
    model: Any = None,
    batch: int = 32,
) -> dict[str, np.ndarray | float]:
    """Item 3's data: ``n`` nodules removed by ``editor`` and ``n`` real crops under the same
    kind of masks.

    Filled: every nodule of ``make_phantom(size, n_nodules, seed=s)`` (even ``s``) is removed
    alone (its mask dilated by one voxel, minus the kept objects), one ``remove_batch`` per
    phantom. Real: for odd ``s`` the same phantom drawn without nodules (identical anatomy)
    under its nodules' masks, i.e. the true background at a nodule's place. Real and filled
    crops never come from the same phantom. Returns crops and masks of both (see
    :func:`box_crop`, 24³ canvas), the nodule-free fraction of the removed regions' lung
    parenchyma (region ∩ lung − known vessels; see the module docstring) and
    ``skipped``: nodules (of both kinds of phantom) whose box + 2 exceeds 24 voxels, left out.

    References: ``twin`` / ``twin_masks`` are the same removals done perfectly (the
    nodule-free twin ``make_phantom(size, 0, seed=s)`` under the region), the discriminator's
    floor. With a ``model`` (a risk model) also ``f_case``, ``f_edit``, ``f_twin``: its
    logits of each case, of the editor's removal and of the twin removal, so that
    ``|f_edit − f_twin|`` (the editor's error on the model) reads against the nodule effect
    ``|f_case − f_twin|``. ``batch``: about this many removals go to the editor in one
    ``remove_batch`` call (seeds as above, so the edits do not depend on it).
    """
    from shnap._models import evaluate_model
    from shnap._world import make_phantom

    out: dict[str, list[np.ndarray]] = {
        k: [] for k in ("real", "real_m", "filled", "filled_m", "twin", "twin_m")
    }
    scores: dict[str, list[float]] = {"f_case": [], "f_edit": [], "f_twin": []}
    edited_all, regions = [], []
    # phantoms to edit, removed together in one editor call of about ``batch`` regions (the
    # editor's noise is keyed by seed, not by batch: the same edits as one call per phantom)
    pending: list[tuple[Any, list[np.ndarray], int]] = []

    def flush() -> None:
        if not pending:
            return
        xs = np.concatenate([np.repeat(ph.image[None], len(jobs), 0) for ph, jobs, _ in pending])
        seeds = [s * 31 + j for _, jobs, s in pending for j in range(len(jobs))]
        edited_batch = editor.remove_batch(
            xs, np.concatenate([np.stack(j) for _, j, _ in pending]), seeds
        )
        at = 0
        for ph, jobs, s in pending:
            edited = edited_batch[at : at + len(jobs)]
            at += len(jobs)
            bare = make_phantom(size, n_nodules=0, seed=s).image
            twins = np.stack([np.where(r, bare, ph.image) for r in jobs])
            parenchyma = ph.lung_mask & ~ph.vessel_mask
            for e, tw, r in zip(edited, twins, jobs):
                for name, vol in (("filled", e), ("twin", tw)):
                    c, cm = box_crop(vol, r, size=24)
                    out[name].append(c)
                    out[f"{name}_m"].append(cm)
                edited_all.append(e)
                regions.append(r & parenchyma)
            if model is not None:
                f = evaluate_model(model, np.concatenate([ph.image[None], edited, twins]))
                scores["f_case"] += [float(f[0])] * len(jobs)
                scores["f_edit"] += [float(v) for v in f[1 : 1 + len(jobs)]]
                scores["f_twin"] += [float(v) for v in f[1 + len(jobs) :]]
            if progress is not None:
                progress(len(jobs))
        pending.clear()

    k = skipped = n_filled = 0
    while n_filled < n or len(out["real"]) < n:
        s = int(seed) * 100003 + k
        filled_turn = k % 2 == 0
        k += 1
        if (n_filled if filled_turn else len(out["real"])) >= n:
            continue
        ph = make_phantom(size, n_nodules=n_nodules, seed=s)
        objects = ph.objects()
        jobs = [
            r
            for r in (
                ndimage.binary_dilation(nm, _STRUCT) & ~(objects & ~nm) for nm in ph.nodule_masks
            )
            if _fits(r, 24)
        ]
        skipped += len(ph.nodule_masks) - len(jobs)
        if not jobs:
            continue
        if filled_turn:
            jobs = jobs[: n - n_filled]
            n_filled += len(jobs)
            pending.append((ph, jobs, s))
            if sum(len(j) for _, j, _ in pending) >= batch or n_filled >= n:
                flush()
        else:
            # the same anatomy without nodules: real background under the same masks
            bare = make_phantom(size, n_nodules=0, seed=s).image
            for r in jobs:
                if len(out["real"]) < n:
                    c, cm = box_crop(bare, r, size=24)
                    out["real"].append(c)
                    out["real_m"].append(cm)
    flush()
    return {
        "real": np.stack(out["real"]),
        "real_masks": np.stack(out["real_m"]),
        "filled": np.stack(out["filled"]),
        "filled_masks": np.stack(out["filled_m"]),
        "twin": np.stack(out["twin"]),
        "twin_masks": np.stack(out["twin_m"]),
        "nodule_free": nodule_free_fraction(edited_all, regions),
        "skipped": skipped,
        **({k: np.asarray(v) for k, v in scores.items()} if model is not None else {}),
    }
