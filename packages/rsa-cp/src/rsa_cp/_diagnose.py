"""How far is the reference law from the real one, and what does it cost?

``diagnose`` compares the ``m`` real calibration scores with the ``N`` reference scores:

* ``w1``: the Wasserstein-1 (1-D optimal-transport) distance between the two empirical laws,
  and ``w1_relative = w1 / mean|R - median(R)|`` (scale-free; 0 for identical laws);
* ``w1_affine``: the same distance after the best affine fit of the QQ plot, which is what is
  left once a shift and a scale are allowed (RSA-CP's alignment removes both exactly);
* the QQ pairs ``(S_(i), Q_R((i - 1/2)/m))``;
* the coverage RSA-CP certifies for this pool, ``L(R)/(m + 1)`` (and the worst case over all
  pools from :func:`rsa_cp.coverage_bounds`), with the implied slack below ``1 - alpha``;
* the reference-only ("synthetic-only") threshold's empirical coverage on the real
  calibration scores, which shows how misleading the raw reference would be.

With alignment the certified coverage does not depend on the distance (the bound holds for
every pool); the distance governs how much width RSA-CP saves and how badly SPI or
reference-only calibration can miss.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_finite_array

from ._bounds import coverage_bounds
from ._ot import wasserstein_distance
from ._rsa import reference_threshold, rsa_threshold

__all__ = ["Diagnosis", "diagnose", "plot_qq"]


@dataclass(frozen=True)
class Diagnosis:
    """What :func:`diagnose` measured (see the module docstring)."""

    n_cal: int
    n_ref: int
    alpha: float
    window: float
    w1: float
    w1_relative: float
    w1_affine: float
    qq_real: NDArray[np.float64]
    qq_reference: NDArray[np.float64]
    certified_coverage: float
    worst_case_coverage: float
    slack: float
    reference_only_coverage_on_cal: float

    def summary(self) -> str:
        """A few readable lines."""
        return "\n".join(
            [
                f"m = {self.n_cal} real scores, N = {self.n_ref} reference scores",
                f"W1(real, reference) = {self.w1:.4g} ({self.w1_relative:.3f} relative), "
                f"after the best affine fit {self.w1_affine:.4g}",
                f"RSA-CP certified coverage for this pool {self.certified_coverage:.4f} "
                f"(worst pool {self.worst_case_coverage:.4f}); slack below "
                f"{1 - self.alpha:.3f}: {self.slack:.4f}",
                "reference-only threshold covers "
                f"{self.reference_only_coverage_on_cal:.3f} of the real calibration scores",
            ]
        )


def diagnose(
    cal_scores: ArrayLike, ref_scores: ArrayLike, alpha: float = 0.1, window: float = 0.4
) -> Diagnosis:
    """Distance between the real and reference score laws and the coverage slack it implies.

    Args:
        cal_scores: ``(m,)`` real calibration scores.
        ref_scores: ``(N,)`` reference scores.
        alpha: miscoverage level.
        window: the window level ``beta``.

    Returns:
        A :class:`Diagnosis`; ``print(d.summary())`` for a readable report.
    """
    s = np.sort(check_finite_array(cal_scores, "cal_scores", ndim=1))
    r = np.sort(check_finite_array(ref_scores, "ref_scores", ndim=1))
    m = s.size
    rule = rsa_threshold(s, r, alpha, window)
    spread = float(np.mean(np.abs(r - np.median(r))))
    w1 = wasserstein_distance(s, r)
    probs = (np.arange(1, m + 1) - 0.5) / m
    qq_ref = np.quantile(r, probs)
    if np.ptp(s) > 0:
        slope, intercept = np.polyfit(s, qq_ref, 1)
        w1_aff = wasserstein_distance(slope * s + intercept, r)
    else:
        w1_aff = float("nan")
    worst = coverage_bounds(m, r.size, alpha, window).lower if r.size > m else float("nan")
    t_ref = reference_threshold(r, alpha)
    return Diagnosis(
        n_cal=m,
        n_ref=r.size,
        alpha=rule.alpha,
        window=rule.window,
        w1=w1,
        w1_relative=w1 / spread if spread > 0 else float("inf"),
        w1_affine=float(w1_aff),
        qq_real=s,
        qq_reference=qq_ref,
        certified_coverage=rule.coverage_lower,
        worst_case_coverage=worst,
        slack=max(0.0, 1 - rule.alpha - rule.coverage_lower),
        reference_only_coverage_on_cal=float(np.mean(s <= t_ref)),
    )


def plot_qq(diagnosis: Diagnosis, path: str | Path | None = None, ax: Any = None) -> Any:
    """QQ plot of real against reference scores (needs ``pip install rsa-cp[plot]``).

    Returns the matplotlib axes; saves a PNG when ``path`` is given.
    """
    from icml26_shared.experiment import require_matplotlib

    plt = require_matplotlib("plot", "rsa-cp")
    if ax is None:
        _, ax = plt.subplots(figsize=(4, 4))
    d = diagnosis
    ax.plot(d.qq_real, d.qq_reference, "o", ms=4, label="real vs reference quantiles")
    lim = [min(d.qq_real.min(), d.qq_reference.min()), max(d.qq_real.max(), d.qq_reference.max())]
    ax.plot(lim, lim, "k--", lw=1, label="same law")
    ax.set_xlabel("real score quantile")
    ax.set_ylabel("reference score quantile")
    ax.set_title(f"W1 = {d.w1:.3g} (relative {d.w1_relative:.2f})")
    ax.legend(fontsize=8)
    if path is not None:
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    return ax
