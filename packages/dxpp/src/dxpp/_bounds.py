"""Inequality rows that are simple bounds, ``s·x_j ≤ h_i`` (one nonzero in the row).

Long-only portfolios (``x ≥ 0``), OptNet's Sudoku (``−x ≤ 0``) and box constraints are written
as rows of ``G``; a solver told they are bounds ``lb ≤ x ≤ ub`` handles them natively (a
diagonal term in an interior-point KKT system, a cheap constraint in a dual active-set
method) and is several times faster. :func:`bound_rows` finds them, :func:`bounds_of` turns
them into ``(lb, ub)`` and :func:`row_duals` maps the solver's box multipliers back to the rows:
for row ``i`` with coefficient ``s`` on variable ``j``, stationarity ``… + s·ν_i e_j`` equals the
box term ``z_j e_j`` (``z_j > 0``: upper bound active, ``< 0``: lower), so ``ν_i = z_j / s``
on the row that sets the bound and 0 on any looser row of the same variable.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

__all__ = ["BoundRows", "bound_rows", "bounds_of", "row_duals"]


class BoundRows:
    """The rows of a dense ``G (m, n)`` with exactly one nonzero.

    Attributes:
        rows: indices of the bound rows; ``cols``, ``coef``: their variable and coefficient.
        general: indices of the other rows.
    """

    __slots__ = ("coef", "cols", "general", "rows")

    def __init__(self, G: NDArray[np.float64]) -> None:
        nz = G != 0
        count = nz.sum(axis=1)
        one = count == 1
        self.rows = np.flatnonzero(one)
        self.general = np.flatnonzero(~one)
        self.cols = nz[self.rows].argmax(axis=1)
        self.coef = G[self.rows, self.cols]

    @property
    def all_bounds(self) -> bool:
        """Every row is a bound (and there is at least one)."""
        return self.rows.size > 0 and self.general.size == 0


def bound_rows(G: NDArray[np.float64]) -> BoundRows:
    """:class:`BoundRows` of a dense 2-D ``G``."""
    return BoundRows(G)


class Bounds(NamedTuple):
    """``lb ≤ x ≤ ub`` (±inf where none) and the row that sets each bound (−1: none)."""

    lb: NDArray[np.float64]
    ub: NDArray[np.float64]
    lower_row: NDArray[np.intp]
    upper_row: NDArray[np.intp]


def bounds_of(br: BoundRows, h: NDArray[np.float64], n: int) -> Bounds:
    """The tightest bound per variable from the bound rows of ``G x ≤ h``."""
    lb, ub = np.full(n, -np.inf), np.full(n, np.inf)
    lower_row = np.full(n, -1, dtype=np.intp)
    upper_row = np.full(n, -1, dtype=np.intp)
    value = h[br.rows] / br.coef
    up = br.coef > 0
    if np.bincount(br.cols + n * up, minlength=2 * n).max(initial=0) <= 1:
        # one bound row per variable and side (the usual case): no ordering needed
        for sel, bound, row in ((up, ub, upper_row), (~up, lb, lower_row)):
            bound[br.cols[sel]] = value[sel]
            row[br.cols[sel]] = br.rows[sel]
        return Bounds(lb, ub, lower_row, upper_row)
    for sign, bound, row in ((1.0, ub, upper_row), (-1.0, lb, lower_row)):
        pick = np.flatnonzero(br.coef * sign > 0)
        if not pick.size:
            continue
        cols, vals = br.cols[pick], value[pick]
        order = np.lexsort((sign * vals, cols))  # per variable, the tightest bound first
        first = np.r_[True, cols[order][1:] != cols[order][:-1]]
        chosen = order[first]
        bound[cols[chosen]] = vals[chosen]
        row[cols[chosen]] = br.rows[pick[chosen]]
    return Bounds(lb, ub, lower_row, upper_row)


def row_duals(
    br: BoundRows,
    bounds: Bounds,
    z_box: NDArray[np.float64],
    z_general: NDArray[np.float64],
    m: int,
) -> NDArray[np.float64]:
    """Multipliers ``ν (m,)`` of the rows of ``G`` from the box multipliers ``z_box (n,)`` (signed:
    ``> 0`` upper, ``< 0`` lower) and those of the general rows."""
    nu = np.zeros(m)
    nu[br.general] = z_general
    coef = np.zeros(m)
    coef[br.rows] = br.coef
    up = bounds.upper_row >= 0
    nu[bounds.upper_row[up]] = np.maximum(z_box[up], 0.0) / coef[bounds.upper_row[up]]
    lo = bounds.lower_row >= 0
    nu[bounds.lower_row[lo]] = np.minimum(z_box[lo], 0.0) / coef[bounds.lower_row[lo]]
    return nu
