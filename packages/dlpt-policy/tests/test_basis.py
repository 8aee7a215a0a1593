import numpy as np
import pytest

from dlpt import DLPT, design_report
from dlpt._basis import gram, make_basis, solve_gram
from dlpt._dlpt import orthogonal_scores

ARMS3 = np.array([0.0, 1.0, 2.0])
P3 = np.array([0.5, 0.25, 0.25])


def test_gram_hand_computed_three_arms_monomial():
    b = make_basis(2, ARMS3, "monomial")  # φ = (1, t, t²)
    want = np.array([[1.0, 0.75, 1.25], [0.75, 1.25, 2.25], [1.25, 2.25, 4.25]])
    np.testing.assert_allclose(gram(b, ARMS3, P3), want, atol=1e-14)


def test_gram_hand_computed_three_arms_legendre():
    b = make_basis(2, ARMS3)  # u = t − 1, φ = (1, u, (3u² − 1)/2)
    want = np.array([[1.0, -0.25, 0.625], [-0.25, 0.75, -0.25], [0.625, -0.25, 0.8125]])
    np.testing.assert_allclose(gram(b, ARMS3, P3), want, atol=1e-14)


def test_psi_on_four_hand_computed_units():
    # arms (0, 1), p = (½, ½), φ = (1, t): Λ = [[1, ½], [½, ½]], Λ⁻¹ = [[2, −2], [−2, 4]]
    arms, p = np.array([0.0, 1.0]), np.array([0.5, 0.5])
    b = make_basis(1, arms, "monomial")
    theta = np.array([[1.0, 2.0], [0.0, 1.0], [2.0, 0.0], [1.0, -1.0]])
    t = np.array([0.0, 1.0, 1.0, 0.0])
    y = np.array([2.0, 0.0, 3.0, 1.0])
    pi = np.array([0.5, 1.0, 0.0, 2.0])
    w = solve_gram(gram(b, arms, p), b(t))
    resid = y - np.einsum("nk,nk->n", theta, b(t))
    psi, _ = orthogonal_scores(theta, w, resid, b(pi))
    np.testing.assert_allclose(psi, [3.0, -1.0, 2.0, -1.0], atol=1e-12)


@pytest.mark.parametrize("per_unit", [False, True])
@pytest.mark.parametrize("q", [2, 3])
def test_psi_identical_in_legendre_and_monomial_bases(per_unit, q):
    """Same μ̂ in both bases → same ψ to 1e-10 (relative for q = 3, where the monomial Λ on
    [0.6, 1.4] has condition number ~1e6 and its rounding alone reaches ~1e-10 absolute)."""
    rng = np.random.default_rng(0)
    arms = np.array([0.6, 0.87, 1.13, 1.4])
    n = 50
    p = rng.dirichlet(np.ones(4) * 5, size=n) if per_unit else np.array([0.1, 0.2, 0.3, 0.4])
    bl, bm = make_basis(q, arms), make_basis(q, arms, "monomial")
    theta_l = rng.normal(size=(n, q + 1))
    # same μ̂: φ_L(t) = M (1, t, …, t^q) so θ_m = Mᵀθ_L
    theta_m = theta_l @ bl._power_matrix()
    t = rng.choice(arms, size=n)
    y = rng.normal(size=n)
    pi = rng.uniform(0.5, 1.5, size=n)
    np.testing.assert_allclose(
        np.einsum("nk,nk->n", theta_l, bl(pi)), np.einsum("nk,nk->n", theta_m, bm(pi)), atol=1e-10
    )
    out = []
    for b, th in [(bl, theta_l), (bm, theta_m)]:
        w = solve_gram(gram(b, arms, p), b(t))
        resid = y - np.einsum("nk,nk->n", th, b(t))
        out.append(orthogonal_scores(th, w, resid, b(pi))[0])
    np.testing.assert_allclose(out[0], out[1], rtol=1e-10 if q == 3 else 0, atol=1e-10)


def test_score_is_exactly_conditionally_unbiased_for_any_theta_hat():
    """Σ_k p_k(x) ψ(π | T = t_k, Y = μ(x, t_k)) = μ(x, π(x)) for arbitrary θ̂ when μ ∈ span φ."""
    rng = np.random.default_rng(1)
    arms = np.array([0.6, 1.0, 1.4, 1.8])
    n, q = 40, 2
    b = make_basis(q, arms)
    p = rng.dirichlet(np.ones(4) * 3, size=n)
    theta_true, theta_hat = rng.normal(size=(n, q + 1)), rng.normal(size=(n, q + 1)) * 5
    pi = rng.uniform(0.6, 1.8, size=n)
    lam = gram(b, arms, p)
    expected = np.zeros(n)
    for k, tk in enumerate(arms):
        t = np.full(n, tk)
        w = solve_gram(lam, b(t))
        mu = np.einsum("nk,nk->n", theta_true, b(t))
        resid = mu - np.einsum("nk,nk->n", theta_hat, b(t))
        expected += p[:, k] * orthogonal_scores(theta_hat, w, resid, b(pi))[0]
    np.testing.assert_allclose(expected, np.einsum("nk,nk->n", theta_true, b(pi)), atol=1e-10)


def test_derivative_matches_finite_differences():
    for kind in ("legendre", "monomial"):
        b = make_basis(4, np.array([0.6, 0.8, 1.0, 1.2, 1.4]), kind)
        t = np.linspace(0.55, 1.45, 13)
        h = 1e-6
        fd = (b(t + h) - b(t - h)) / (2 * h)
        np.testing.assert_allclose(b.derivative(t), fd, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("q", [1, 2, 4])
def test_argmax_matches_a_fine_grid(q):
    rng = np.random.default_rng(q)
    arms = np.linspace(0.6, 1.4, 5)
    b = make_basis(q, arms)
    theta = rng.normal(size=(200, q + 1))
    grid = np.linspace(0.6, 1.4, 20001)
    vals = theta @ b(grid).T
    best = vals.max(axis=1)
    got = np.einsum("nk,nk->n", theta, b(b.argmax(theta)))
    assert np.all(got >= best - 1e-6)


def test_design_report_is_inverse_propensity_at_arms_when_saturated():
    p = np.array([0.2, 0.3, 0.5])
    r = design_report([0.6, 1.0, 1.4], p, 2, t_grid=[0.6, 1.0, 1.4])
    np.testing.assert_allclose(r.inflation, 1 / p, rtol=1e-10)
    assert "cond" in r.to_text()


def test_design_report_grows_outside_the_tested_range():
    r = design_report([0.6, 1.0, 1.4], np.ones(3) / 3, 2, t_grid=[1.0, 1.4, 1.6, 2.0])
    assert np.all(np.diff(r.inflation) > 0)


def test_design_report_with_covariate_probs():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    r = design_report([0.6, 1.0, 1.4], lambda X: np.full((X.shape[0], 3), 1 / 3), 2, X=X)
    r0 = design_report([0.6, 1.0, 1.4], np.ones(3) / 3, 2)
    np.testing.assert_allclose(r.inflation, r0.inflation, rtol=1e-10)


def test_too_few_arms_for_the_degree_raises():
    with pytest.raises(ValueError, match=r"needs K >= q \+ 1 = 4"):
        design_report([0.6, 1.0, 1.4], np.ones(3) / 3, 3)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    t = rng.choice([0.0, 1.0], 30)
    with pytest.raises(ValueError, match=r"needs K >= q \+ 1 = 3"):
        DLPT(degree=2).fit(X, t, rng.normal(size=30), [0.0, 1.0], [0.5, 0.5])
