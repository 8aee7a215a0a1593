import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from rsa_cp import ot_alignment, wasserstein_distance


@pytest.mark.parametrize("seed", range(5))
def test_identity_when_samples_are_identical(seed):
    rng = np.random.default_rng(seed)
    s = rng.lognormal(size=int(rng.integers(2, 60)))
    t = ot_alignment(s, rng.permutation(s))
    np.testing.assert_allclose(t(s), s, rtol=1e-12, atol=1e-12)
    grid = np.linspace(s.min(), s.max(), 97)
    np.testing.assert_allclose(t(grid), grid, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("a", "b"), [(2.0, 1.0), (0.5, -3.0), (1e3, 7.0)])
@pytest.mark.parametrize("copies", [1, 3])
def test_affine_when_reference_is_affine_image(a, b, copies):
    rng = np.random.default_rng(1)
    s = rng.gamma(2.0, size=25)
    ref = np.tile(a * s + b, copies)  # N = copies * m: every block is one atom of the image
    t = ot_alignment(s, ref)
    grid = np.linspace(s.min(), s.max(), 101)
    scale = abs(a) * s.max() + abs(b)
    np.testing.assert_allclose(t(s), a * s + b, atol=1e-12 * scale)
    np.testing.assert_allclose(t(grid), a * grid + b, atol=1e-12 * scale)


def test_held_constant_outside_range_and_block_means():
    s = np.array([1.0, 2.0, 3.0, 4.0])
    r = np.arange(1.0, 9.0)  # N = 8: block i averages R_(2i-1), R_(2i)
    t = ot_alignment(s, r)
    np.testing.assert_allclose(t.knots_z, [1.5, 3.5, 5.5, 7.5])
    assert t(np.array([-10.0]))[0] == 1.5 and t(np.array([99.0]))[0] == 7.5
    # fractional blocks: m = 3, N = 4 -> block 1 = R1 + 1/3 R2 (mass 3/4 of 4/3)
    t3 = ot_alignment(np.array([0.0, 1.0, 2.0]), np.array([0.0, 3.0, 6.0, 9.0]))
    np.testing.assert_allclose(t3.knots_z, [0.75, 4.5, 8.25])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=40),
    st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=200),
)
def test_monotone_always(cal, ref):
    t = ot_alignment(cal, ref)
    assert np.all(np.diff(t.knots_z) >= 0)
    grid = np.linspace(min(cal) - 1, max(cal) + 1, 50)
    assert np.all(np.diff(t(grid)) >= 0)
    assert t.knots_z[0] >= min(ref) - 1e-9 and t.knots_z[-1] <= max(ref) + 1e-9


def test_ties_in_calibration_form_one_atom():
    t = ot_alignment(np.array([1.0, 1.0, 2.0]), np.array([0.0, 3.0, 6.0]))
    np.testing.assert_allclose(t.knots_x, [1.0, 2.0])
    np.testing.assert_allclose(t.knots_z, [1.5, 6.0])
    np.testing.assert_allclose(t.aligned, [1.5, 1.5, 6.0])


def test_inverse_upper():
    t = ot_alignment(np.array([0.0, 1.0, 2.0]), np.array([0.0, 10.0, 20.0]))
    assert t.inverse_upper(5.0) == pytest.approx(0.5)
    assert t.inverse_upper(20.0) == np.inf and t.inverse_upper(-1.0) == -np.inf


@pytest.mark.parametrize("seed", range(4))
def test_wasserstein_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=37), rng.lognormal(size=211)
    assert wasserstein_distance(a, b) == pytest.approx(stats.wasserstein_distance(a, b), rel=1e-10)
    assert wasserstein_distance(a, a) == 0.0
