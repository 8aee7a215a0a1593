import numpy as np
import pytest

from shnap._oracle import OracleRisk
from shnap._snap import SnapMap, check_insertion, hc3_ols, insertion_grid, snap_grid
from shnap._world import make_phantom, nodule_library


def _avoid(ph):
    return ph.objects() | ph.vessel_mask


def test_hc3_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    rng = np.random.default_rng(0)
    X = np.column_stack([np.ones(60), rng.normal(size=60), rng.random(60) > 0.5])
    y = X @ [1.0, 2.0, -0.5] + rng.normal(size=60) * (1 + np.abs(X[:, 1]))
    beta, cov = hc3_ols(X, y)
    ref = sm.OLS(y, X).fit(cov_type="HC3")
    np.testing.assert_allclose(beta, ref.params, atol=1e-10)
    np.testing.assert_allclose(cov, ref.cov_params(), rtol=1e-8, atol=1e-12)


def test_hc3_hand_formula_small_case():
    X = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 4.0]])
    y = np.array([0.0, 1.5, 1.0, 4.0])
    beta, cov = hc3_ols(X, y)
    e = y - X @ beta
    h = np.diag(X @ np.linalg.inv(X.T @ X) @ X.T)
    bread = np.linalg.inv(X.T @ X)
    ref = bread @ X.T @ np.diag(e**2 / (1 - h) ** 2) @ X @ bread
    np.testing.assert_allclose(cov, ref, atol=1e-12)


def test_grid_points_are_valid_and_strided():
    ph = make_phantom(32, n_nodules=2, electrodes=1, seed=3)
    tmpl = nodule_library(1, seed=0)[0]
    grid = insertion_grid(tmpl, ph.lung_mask, _avoid(ph))
    assert len(grid) > 10
    assert np.all(grid % 3 == 1)
    for c in grid[:20]:
        check_insertion(tmpl, c, ph.lung_mask, _avoid(ph))


def test_bad_insertions_are_refused():
    ph = make_phantom(32, n_nodules=1, seed=3)
    tmpl = nodule_library(1, seed=0)[0]
    with pytest.raises(ValueError, match="outside the lungs"):
        check_insertion(tmpl, (16, 1, 16), ph.lung_mask, _avoid(ph))
    with pytest.raises(ValueError, match="on an object"):
        check_insertion(tmpl, ph.nodules[0].centre, ph.lung_mask, _avoid(ph))
    with pytest.raises(ValueError, match="tau"):
        snap_grid(lambda b: np.zeros(len(b)), ph.image, ph.lung_mask, [tmpl], None, tau=1.5)
    with pytest.raises(ValueError, match="tau"):
        snap_grid(lambda b: np.zeros(len(b)), ph.image, ph.lung_mask, [tmpl], None, tau=0.0)


def test_oracle_snap_is_flat_and_regression_recovers_planted_slope(lung_fill):
    maps = []
    lib = nodule_library(2, seed=1)
    for case in range(3):
        ph = make_phantom(32, n_nodules=1, seed=20 + case)
        oracle = OracleRisk.for_phantom(ph)
        maps.append(
            snap_grid(
                oracle,
                ph.image,
                ph.lung_mask,
                lib,
                lung_fill,
                avoid=_avoid(ph),
                lobe=ph.lobe,
                case=case,
                max_points=15,
            )
        )
    snap = SnapMap.concat(maps)
    # the oracle is location-invariant: insertion effect is the same everywhere per nodule
    for t in range(2):
        assert np.ptp(snap.psi[snap.nodule == t]) < 1e-9
    fit = snap.radial_regression(by_nodule=True, n_boot=200)
    assert abs(fit.slope) < 1e-8 and fit.ci()[0] <= 0 <= fit.ci()[1]
    planted = SnapMap(**{**snap.__dict__, "psi": snap.psi + 0.3 * snap.distance})
    fit2 = planted.radial_regression(by_lobe=True, by_nodule=True, n_boot=200)
    assert abs(fit2.slope - 0.3) < 1e-8 and fit2.ci_boot[0] <= 0.3 <= fit2.ci_boot[1]
    assert fit2.n_cases == 3


def test_bootstrap_ci_covers_at_nominal_rate():
    """Statistical check: the case-clustered CI covers a true slope ~95% of the time."""
    rng = np.random.default_rng(5)
    hits = 0
    reps = 60
    for r in range(reps):
        n_case, m = 15, 12
        case = np.repeat(np.arange(n_case), m)
        d = rng.uniform(0, 6, n_case * m)
        effect = rng.normal(0, 0.5, n_case)[case]  # case-level shift: clustered errors
        psi = 0.2 * d + effect + rng.normal(0, 0.3, len(d))
        snap = SnapMap(
            np.zeros((len(d), 3), int),
            psi,
            d,
            np.zeros(len(d), int),
            np.zeros(len(d), int),
            case,
            np.zeros(len(d)),
        )
        lo, hi = snap.radial_regression(n_boot=300, seed=r).ci_boot
        hits += lo <= 0.2 <= hi
    assert hits / reps > 0.8
