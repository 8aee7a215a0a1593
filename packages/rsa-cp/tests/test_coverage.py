"""Statistical tests of the coverage guarantee. Tolerances come from the repetition count
through icml26_shared.metrics.binomial_tolerance (99.9% two-sided)."""

import numpy as np
import pytest

from icml26_shared.metrics import binomial_tolerance
from rsa_cp import coverage_bounds, rsa_threshold
from rsa_cp.baselines import split_threshold
from rsa_cp.data import regression_scores


@pytest.mark.parametrize(("law", "m"), [("lognormal", 20), ("gamma", 40)])
def test_same_law_coverage_sits_between_the_proven_bounds(law, m, score_law):
    n_rep, alpha, n_ref = 500, 0.05, 1000
    rng = np.random.default_rng(m)
    covered = np.empty(n_rep, dtype=bool)
    for i in range(n_rep):
        s = regression_scores(law, m + 1, seed=rng)
        r = regression_scores(law, n_ref, seed=rng)
        covered[i] = s[-1] <= rsa_threshold(s[:-1], r, alpha, 0.4).threshold
    b = coverage_bounds(m, n_ref, alpha, 0.4)
    rate = covered.mean()
    assert rate >= b.lower - binomial_tolerance(b.lower, n_rep)
    assert rate <= b.upper + binomial_tolerance(b.upper, n_rep)


@pytest.mark.parametrize("pool", ["bimodal", "uniform", "heavy"])
def test_bound_holds_conditionally_on_a_fixed_reference_pool(pool, score_law):
    """Fix one (strange) reference pool; draw only the real scores: L is constant and the
    coverage lies in [L/(m+1), (L+1)/(m+1)] up to Monte Carlo error."""
    rng = np.random.default_rng(3)
    m, n_rep, alpha = 25, 1500, 0.1
    ref = {
        "bimodal": np.r_[rng.normal(0, 1, 400), rng.normal(30, 1, 400)],
        "uniform": rng.uniform(-5, 5, 900),
        "heavy": rng.standard_cauchy(1200),
    }[pool]
    cdf = score_law["lognormal"].cdf
    cov, ranks = np.empty(n_rep), set()
    for i in range(n_rep):
        rule = rsa_threshold(rng.lognormal(size=m), ref, alpha, 0.4)
        ranks.add(rule.certain_rank)
        cov[i] = 1.0 if rule.is_infinite else cdf(rule.threshold)
    assert len(ranks) == 1
    (L,) = ranks
    lo, hi = L / (m + 1), min(1.0, (L + 1) / (m + 1))
    assert cov.mean() >= lo - binomial_tolerance(lo, n_rep)
    assert cov.mean() <= hi + binomial_tolerance(hi, n_rep)


def test_alignment_is_what_makes_coverage_reference_free(score_law):
    """A reference pool on the wrong scale (x0.3) breaks SPI (no alignment) but not RSA-CP."""
    rng = np.random.default_rng(9)
    m, n_rep, alpha = 40, 400, 0.1
    cdf = score_law["lognormal"].cdf
    rsa, spi, split = np.empty(n_rep), np.empty(n_rep), np.empty(n_rep)
    for i in range(n_rep):
        s, r = rng.lognormal(size=m), 0.3 * rng.lognormal(size=2000)
        rsa[i] = cdf(rsa_threshold(s, r, alpha).threshold)
        spi[i] = cdf(rsa_threshold(s, r, alpha, align=False).threshold)
        split[i] = cdf(split_threshold(s, alpha))
    b = coverage_bounds(m, 2000, alpha, 0.4)
    assert rsa.mean() >= b.lower - binomial_tolerance(b.lower, n_rep)
    assert spi.mean() < 1 - alpha - 0.1  # SPI badly under-covers with this reference
    assert split.mean() >= 1 - alpha - binomial_tolerance(1 - alpha, n_rep)


@pytest.mark.slow
@pytest.mark.parametrize("law", ["lognormal", "gamma"])
@pytest.mark.parametrize("m", [20, 40])
def test_acceptance_3_same_law_2000_repetitions(law, m):
    from rsa_cp._reproduce import BETAS, matched_randomized_width, simulate

    sim = simulate(law, "same", m, n_rep=2000)
    for beta in BETAS:
        key = f"rsa b={beta}"
        bound = coverage_bounds(m, 1000, 0.05, beta).lower
        cov = float(np.mean(sim.coverages[key]))
        assert cov >= bound - binomial_tolerance(bound, 2000)
        ratio = np.mean(sim.width(key)) / np.mean(matched_randomized_width(sim, cov))
        assert ratio <= (0.90 if (law, m) == ("lognormal", 20) else 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("reference", ["shock", "scaled"])
@pytest.mark.parametrize("m", [20, 40])
def test_acceptance_4_misaligned_2000_repetitions(reference, m):
    from rsa_cp._reproduce import BETAS, simulate

    sim = simulate("lognormal", reference, m, n_rep=2000)
    for beta in BETAS:
        assert np.mean(sim.coverages[f"rsa b={beta}"]) >= 1 - 0.05 - 0.03


@pytest.mark.slow
@pytest.mark.parametrize("reference", ["shock", "scaled"])
@pytest.mark.parametrize("m", [20, 40])
def test_acceptance_4_width_not_above_reference_only_2000_repetitions(reference, m):
    """Spec item 4, second clause: mean width <= reference-only's."""
    from rsa_cp._reproduce import BETAS, simulate

    sim = simulate("lognormal", reference, m, n_rep=2000)
    ref_width = np.mean(sim.width("reference only"))
    for beta in BETAS:
        assert np.mean(sim.width(f"rsa b={beta}")) <= ref_width


def test_acceptance_4_width_clause_small():
    """The same clause at a size the default run affords (400 repetitions, m = 20)."""
    from rsa_cp._reproduce import BETAS, simulate

    for reference in ("shock", "scaled"):
        sim = simulate("lognormal", reference, 20, n_rep=400, betas=BETAS)
        ref_width = np.mean(sim.width("reference only"))
        assert np.isfinite(ref_width)
        for beta in BETAS:
            assert np.mean(sim.width(f"rsa b={beta}")) <= ref_width
