import numpy as np
import pytest

import arm_ebm as ae


def _enum_kl(lp, lq):
    p = np.exp(lp)
    m = p > 0
    return float(np.sum(p[m] * (lp[m] - lq[m])))


@pytest.mark.parametrize("eos", [None, 2])
def test_kl_both_ways_against_enumeration(eos):
    space = ae.SequenceSpace(3, 4, eos=eos)
    rng = np.random.default_rng(0)
    a = np.where(space.allowed, rng.normal(size=space.shape), -np.inf)
    b = np.where(space.allowed, rng.normal(size=space.shape), -np.inf)
    la, lb = ae.log_prob_arm(a, space), ae.log_prob_arm(b, space)
    assert abs(ae.kl(a, b, space) - _enum_kl(la, lb)) <= 1e-12
    assert abs(ae.kl(b, a, space) - _enum_kl(lb, la)) <= 1e-12
    assert ae.kl(a, a + rng.normal(size=(space.n_states, 1)), space) <= 1e-14  # offsets
    # visit probabilities = marginal of prefixes under p_a
    rho = ae.visit_probabilities(a, space)
    pa = np.exp(la)
    paths = space.paths()
    ref = np.zeros(space.n_states)
    for i in range(space.n_sequences):
        ref[paths[i][paths[i] >= 0]] += pa[i]
    assert np.allclose(rho, ref, atol=1e-13, rtol=0)


def test_bound_holds_forward_and_reverse_over_noise_levels():
    space = ae.SequenceSpace(3, 5)
    rng = np.random.default_rng(1)
    for _seed in range(5):
        q_star = rng.normal(size=space.shape)
        for noise in (0.01, 0.1, 0.3, 1.0, 3.0):
            q_hat = q_star + noise * rng.normal(size=space.shape)
            fwd, rev = ae.kl(q_star, q_hat, space), ae.kl(q_hat, q_star, space)
            bf = ae.kl_bound(q_star, q_hat, space)
            br = ae.kl_bound(q_hat, q_star, space)
            assert 0 < fwd <= bf + 1e-12 and 0 < rev <= br + 1e-12
            assert bf <= ae.kl_bound(q_star, q_hat, space, uniform=True) + 1e-12
            # ε-form equals E|y|·ε²/2 with E|y| = T here
            osc = (q_star - q_hat).max(1) - (q_star - q_hat).min(1)
            assert (
                abs(ae.kl_bound(q_star, q_hat, space, uniform=True) - 5 * (osc.max() / 2) ** 2 / 2)
                < 1e-9
            )
    # blind to per-state offsets
    q_hat = q_star + rng.normal(size=(space.n_states, 1))
    assert ae.kl_bound(q_star, q_hat, space) <= 1e-20


def test_bound_with_hard_constraints_and_missing_support():
    space = ae.SequenceSpace(3, 4, eos=2)
    rng = np.random.default_rng(2)
    R = rng.normal(size=space.n_sequences)
    R[rng.random(space.n_sequences) < 0.3] = -np.inf
    q_star = ae.ebm_to_arm(ae.reward_to_steps(R, space), space)
    q_hat = np.where(
        space.allowed,
        np.nan_to_num(q_star, neginf=-3.0) + 0.2 * rng.normal(size=space.shape),
        -np.inf,
    )
    k = ae.kl(q_star, q_hat, space)
    assert np.isfinite(k) and k <= ae.kl_bound(q_star, q_hat, space) + 1e-12
    # q_hat misses part of the support of p_R: KL and bound are +inf
    assert ae.kl(q_hat, q_star, space) == np.inf
    assert ae.kl_bound(q_hat, q_star, space) == np.inf


def test_kl_per_prompt_and_on_a_factored_space():
    space = ae.SequenceSpace(3, 3, eos=2, n_prompts=2)
    rng = np.random.default_rng(3)
    a = np.where(space.allowed, rng.normal(size=space.shape), -np.inf)
    b = np.where(space.allowed, rng.normal(size=space.shape), -np.inf)
    la, lb = ae.log_prob_arm(a, space), ae.log_prob_arm(b, space)
    got = ae.kl(a, b, space)
    assert got.shape == (2,)
    for p in range(2):
        m = space.sequence_prompt == p
        assert abs(got[p] - _enum_kl(la[m], lb[m])) <= 1e-12
        assert got[p] <= ae.kl_bound(a, b, space)[p] + 1e-12
    # on a keyed DAG: same KL as on the trie with the tables lifted through states_of
    fs = ae.FactoredSpace(
        3, 7, key_fn=lambda p, y: 0, eos=2, step=lambda k, t: min(k + (t == 0), 3)
    )
    trie = ae.SequenceSpace(3, 7, eos=2)
    idx = fs.states_of(trie)
    qa, qb = rng.normal(size=fs.shape), rng.normal(size=fs.shape)
    lift = lambda q: np.where(trie.allowed, q[idx], -np.inf)  # noqa: E731
    assert abs(ae.kl(qa, qb, fs) - ae.kl(lift(qa), lift(qb), trie)) <= 1e-12
    assert abs(ae.kl_bound(qa, qb, fs) - ae.kl_bound(lift(qa), lift(qb), trie)) <= 1e-12
    rho_f, rho_t = ae.visit_probabilities(qa, fs), ae.visit_probabilities(lift(qa), trie)
    assert np.allclose(np.bincount(idx, weights=rho_t, minlength=fs.n_states), rho_f, atol=1e-13)
