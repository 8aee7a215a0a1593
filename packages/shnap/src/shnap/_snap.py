"""SNAP: insertion sweeps and the radial regression of their effects.

A library nodule ``r`` is pasted at grid centre ``c`` and blended by the editor (the bridge
draws :math:`x_\\tau` from its marginal at :math:`\\tau = 0.3` and reverses to 0); the effect is

.. math:: \\psi_c = f(x_{c \\leftarrow r}) - f(x).

The grid: lung voxels on a stride-3 lattice where the pasted nodule lies inside the lungs and at
least 2 voxels from every object (nodules, electrodes, vessels). :meth:`SnapMap.radial_regression` fits by OLS

.. math:: \\psi = \\beta_0 + \\beta_1\\, d_{\\text{boundary}}(c)
    \\;[+ \\text{lobe}] \\;[+ \\text{nodule} + \\text{nodule} \\times d]

with HC3 heteroskedasticity-consistent standard errors (MacKinnon & White 1985:
:math:`(X^\\top X)^{-1} X^\\top \\mathrm{diag}(e_i^2/(1-h_{ii})^2) X (X^\\top X)^{-1}`) and a
case-clustered percentile bootstrap CI for :math:`\\beta_1` (cases resampled with replacement).
With the nodule interaction the distance columns of the nodules are centred, so
:math:`\\beta_1` is the average slope over nodules. Method of Sobieski, Grzywaczewski et al.
(arXiv 2602.02560), reconstructed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import ndimage, special

from ._checks import check_mask, check_tau, check_volume
from ._models import evaluate_model
from ._world import NoduleTemplate, boundary_distance

__all__ = ["RadialFit", "SnapMap", "check_insertion", "hc3_ols", "insertion_grid", "snap_grid"]

_CUBE = ndimage.generate_binary_structure(3, 3)


def check_insertion(
    template: NoduleTemplate,
    centre: Sequence[int],
    lung_mask: np.ndarray,
    avoid: np.ndarray,
    *,
    min_distance: int = 2,
) -> None:
    """Raise ``ValueError`` if the nodule pasted at ``centre`` leaves the lungs or comes within
    ``min_distance`` voxels of ``avoid`` (the objects)."""
    shape = lung_mask.shape
    c = tuple(int(v) for v in centre)
    if len(c) != 3 or not all(0 <= v < n for v, n in zip(c, shape)):
        raise ValueError(f"centre must be a voxel index inside {shape}, got {tuple(centre)}")
    placed = template.placed_mask(c, shape)
    if placed.sum() < template.mask.sum() or not (placed <= lung_mask).all():
        raise ValueError(
            f"centre {c}: insertion outside the lungs (the pasted nodule must lie inside lung_mask)"
        )
    near = ndimage.binary_dilation(placed, _CUBE, iterations=max(int(min_distance), 1))
    if (near & avoid).any():
        raise ValueError(
            f"centre {c}: insertion on an object (within {min_distance} voxels of a nodule, "
            "electrode or vessel)"
        )


def insertion_grid(
    template: NoduleTemplate,
    lung_mask: np.ndarray,
    avoid: np.ndarray,
    *,
    stride: int = 3,
    min_distance: int = 2,
) -> np.ndarray:
    """Valid insertion centres ``(M, 3)``: lung voxels on a ``stride`` lattice (offset
    ``stride // 2``) where :func:`check_insertion` passes."""
    lung = np.asarray(lung_mask, bool)
    avoid = np.asarray(avoid, bool)
    fits = ndimage.binary_erosion(lung, template.mask, border_value=0)
    far = ~ndimage.binary_dilation(avoid, _CUBE, iterations=max(int(min_distance), 1))
    ok = ndimage.binary_erosion(far, template.mask, border_value=1)
    lattice = np.zeros(lung.shape, bool)
    o = stride // 2
    lattice[o::stride, o::stride, o::stride] = True
    out = []
    for c in np.argwhere(lattice & fits & ok):
        try:
            check_insertion(template, c, lung, avoid, min_distance=min_distance)
        except ValueError:
            continue
        out.append(c)
    return np.array(out, dtype=np.int64).reshape(-1, 3)


@dataclass(frozen=True)
class RadialFit:
    """OLS of psi on distance to the lung boundary: slope, HC3 s.e., p (two-sided normal),
    the HC3 95% CI and the case-clustered bootstrap 95% CI (``None`` with one case)."""

    slope: float
    se: float
    p: float
    ci_hc3: tuple[float, float]
    ci_boot: tuple[float, float] | None
    coef: np.ndarray
    columns: tuple[str, ...]
    n: int
    n_cases: int

    def ci(self) -> tuple[float, float]:
        """The bootstrap CI when there are >= 2 cases, else the HC3 one."""
        return self.ci_boot if self.ci_boot is not None else self.ci_hc3


def hc3_ols(design: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """OLS coefficients and their HC3 covariance matrix.

    >>> X = np.column_stack([np.ones(5), np.arange(5.0)])
    >>> b, cov = hc3_ols(X, 2 + 3 * np.arange(5.0))
    >>> np.round(b, 10).tolist()
    [2.0, 3.0]
    """
    X = np.asarray(design, np.float64)
    y = np.asarray(y, np.float64)
    xtx_inv = np.linalg.pinv(X.T @ X)
    beta = xtx_inv @ X.T @ y
    e = y - X @ beta
    h = np.einsum("ij,jk,ik->i", X, xtx_inv, X)
    w = e**2 / np.maximum(1.0 - h, 1e-12) ** 2
    cov = xtx_inv @ (X.T * w) @ X @ xtx_inv
    return beta, cov


@dataclass(frozen=True)
class SnapMap:
    """Insertion effects ``psi`` at ``centres`` with their boundary distance, lobe, nodule
    (template index) and case id; concatenate cases with :meth:`concat`."""

    centres: np.ndarray
    psi: np.ndarray
    distance: np.ndarray
    lobe: np.ndarray
    nodule: np.ndarray
    case: np.ndarray
    base: np.ndarray
    locality_violations: int = 0

    @staticmethod
    def concat(maps: Sequence[SnapMap]) -> SnapMap:
        """One map from several (case ids are kept as given)."""
        if not maps:
            raise ValueError("maps must hold at least one SnapMap, got none")
        fields = [f for f in SnapMap.__dataclass_fields__ if f != "locality_violations"]
        arrays = {f: np.concatenate([getattr(m, f) for m in maps]) for f in fields}
        return SnapMap(**arrays, locality_violations=sum(m.locality_violations for m in maps))

    def design(
        self, *, by_lobe: bool = False, by_nodule: bool = False
    ) -> tuple[np.ndarray, list[str]]:
        """The regression design matrix and its column names (first two: intercept, distance)."""
        cols = [np.ones(len(self.psi)), self.distance.astype(np.float64)]
        names = ["intercept", "distance"]
        if by_lobe:
            for lb in np.unique(self.lobe)[1:]:
                cols.append((self.lobe == lb).astype(float))
                names.append(f"lobe{lb}")
        if by_nodule:
            for t in np.unique(self.nodule)[1:]:
                dummy = (self.nodule == t).astype(float)
                cols.append(dummy)
                names.append(f"nodule{t}")
                cols.append(self.distance * (dummy - dummy.mean()))
                names.append(f"nodule{t}:distance")
        return np.column_stack(cols), names

    def radial_regression(
        self,
        *,
        by_lobe: bool = False,
        by_nodule: bool = False,
        n_boot: int = 1000,
        seed: int = 0,
        level: float = 0.95,
    ) -> RadialFit:
        """OLS of ``psi`` on distance to the lung boundary (+ lobe, + nodule interaction) with
        HC3 errors and a case-clustered bootstrap CI of the slope (module docstring)."""
        if len(self.psi) < 4:
            raise ValueError(f"radial_regression needs >= 4 insertion points, got {len(self.psi)}")
        X, names = self.design(by_lobe=by_lobe, by_nodule=by_nodule)
        beta, cov = hc3_ols(X, self.psi)
        se = float(np.sqrt(max(cov[1, 1], 0.0)))
        z = special.ndtri(0.5 + level / 2)  # normal quantile (scipy.stats is slow to import)
        p = float(2 * special.ndtr(-abs(beta[1]) / se)) if se > 0 else 0.0
        cases = np.unique(self.case)
        ci_boot = None
        if len(cases) >= 2:
            rng = np.random.default_rng(seed)
            rows = [np.flatnonzero(self.case == c) for c in cases]
            slopes = []
            for _ in range(n_boot):
                pick = np.concatenate([rows[i] for i in rng.integers(len(cases), size=len(cases))])
                Xb = X[pick]
                b, *_ = np.linalg.lstsq(Xb, self.psi[pick], rcond=None)
                slopes.append(b[1])
            lo, hi = np.quantile(slopes, [0.5 - level / 2, 0.5 + level / 2])
            ci_boot = (float(lo), float(hi))
        return RadialFit(
            slope=float(beta[1]),
            se=se,
            p=p,
            ci_hc3=(float(beta[1] - z * se), float(beta[1] + z * se)),
            ci_boot=ci_boot,
            coef=beta,
            columns=tuple(names),
            n=len(self.psi),
            n_cases=len(cases),
        )


def snap_grid(
    model: Callable[..., Any] | Mapping[str, Any],
    x: np.ndarray,
    lung_mask: np.ndarray,
    library: Sequence[NoduleTemplate],
    editor: Any,
    *,
    avoid: np.ndarray | None = None,
    lobe: np.ndarray | None = None,
    stride: int = 3,
    tau: float = 0.3,
    min_distance: int = 2,
    seed: int = 0,
    case: int = 0,
    max_points: int | None = None,
    batch_size: int = 16,
) -> Any:
    """SNAP sweep of every library nodule over the insertion grid of one case.

    ``avoid`` is the union of objects to keep away from (nodules, electrodes, vessels);
    ``max_points`` subsamples the grid per nodule (seeded). ``editor.insert(x, nodule, centre,
    tau, seed)`` does the edit; ``psi`` is the model's logit change. A mapping of models gives a
    dict of maps from the same edits; ``locality_violations`` counts edited voxels outside the
    pasted nodule dilated by one voxel (0 for a local editor).
    """
    x = check_volume(x, "x")
    lung = check_mask(lung_mask, x, "lung_mask")
    avoid = np.zeros(x.shape, bool) if avoid is None else np.asarray(avoid, bool)
    if avoid.shape != x.shape:
        raise ValueError(f"avoid must have shape {x.shape}, got {avoid.shape}")
    tau = check_tau(tau)
    if not library:
        raise ValueError("library must hold at least one NoduleTemplate, got none")
    depth = boundary_distance(lung)
    lobe_arr = np.zeros(x.shape, np.int8) if lobe is None else np.asarray(lobe)
    models = dict(model) if isinstance(model, Mapping) else {"model": model}
    base = {m: float(evaluate_model(f, x[None])[0]) for m, f in models.items()}
    rng = np.random.default_rng([seed, case])
    centres, nods = [], []
    for t, tmpl in enumerate(library):
        grid = insertion_grid(tmpl, lung, avoid, stride=stride, min_distance=min_distance)
        if max_points is not None and len(grid) > max_points:
            grid = grid[np.sort(rng.choice(len(grid), max_points, replace=False))]
        centres.extend(grid)
        nods.extend([t] * len(grid))
    if not centres:
        raise ValueError("no valid insertion centre: the lungs are too small or too crowded")
    psi = {m: np.empty(len(centres)) for m in models}
    violations = 0
    for start in range(0, len(centres), batch_size):
        idx = range(start, min(start + batch_size, len(centres)))
        edited, allowed = [], []
        for i in idx:
            c = tuple(int(v) for v in centres[i])
            edited.append(editor.insert(x, library[nods[i]], c, tau=tau, seed=seed * 100_003 + i))
            allowed.append(ndimage.binary_dilation(library[nods[i]].placed_mask(c, x.shape), _CUBE))
        batch = np.stack(edited).astype(np.float32)
        violations += int(np.count_nonzero((batch != x[None]) & ~np.stack(allowed)))
        for m, f in models.items():
            psi[m][start : start + len(idx)] = evaluate_model(f, batch) - base[m]
    cs = np.array(centres, np.int64)
    maps = {
        m: SnapMap(
            centres=cs,
            psi=psi[m],
            distance=depth[tuple(cs.T)].astype(np.float64),
            lobe=lobe_arr[tuple(cs.T)].astype(np.int64),
            nodule=np.array(nods, np.int64),
            case=np.full(len(cs), case, np.int64),
            base=np.full(len(cs), base[m]),
            locality_violations=violations,
        )
        for m in models
    }
    return maps if isinstance(model, Mapping) else maps["model"]
