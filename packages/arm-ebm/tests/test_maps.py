import numpy as np
import pytest
from scipy.special import logsumexp

import arm_ebm as ae
from arm_ebm.baselines import brute_force_arm, brute_force_log_partition

CASES = [(A, T, eos) for A in (2, 3, 5) for T in (3, 4, 6) for eos in (None, A - 1)]


def _gap(a, b, where):
    """max |a − b| over ``where`` (−inf = −inf counts as equal)."""
    with np.errstate(invalid="ignore"):
        d = np.where(np.isneginf(a) & np.isneginf(b), 0.0, np.abs(a - b))
    return float(np.max(np.where(where, d, 0.0)))


def _rand_r(space, rng, scale=1.0):
    return np.where(space.allowed, scale * rng.normal(size=space.shape), -np.inf)


@pytest.mark.parametrize("A,T,eos", CASES)
def test_bijection_against_enumeration(A, T, eos, brute_arm):
    space = ae.SequenceSpace(A, T, eos=eos)
    for seed in range(5):
        rng = np.random.default_rng(seed)
        r = _rand_r(space, rng)
        R = ae.sequence_reward(r, space)
        q = ae.ebm_to_arm(r, space)
        logz = logsumexp(R)
        assert abs(ae.log_partition(r, space) - logz) <= 1e-12
        assert abs(ae.log_partition(R, space) - logz) <= 1e-12
        p_r = np.exp(R - logz)
        assert np.max(np.abs(np.exp(ae.log_prob_arm(q, space)) - p_r)) <= 1e-12
        back = ae.arm_to_ebm(q, space)
        assert _gap(back, r, space.allowed) <= 1e-12
        q0 = _rand_r(space, rng, 3.0)
        q1 = ae.ebm_to_arm(ae.arm_to_ebm(q0, space), space)  # offsets included
        assert _gap(q1, q0, space.allowed) <= 1e-12
    # independent pure-Python reference of the policy (last seed)
    mass = brute_arm(space.sequences(), R)
    pi = ae.policy(q, space)
    for s in range(0, space.n_states, max(1, space.n_states // 25)):
        y = space.prefix(s)
        for a in range(A):
            ch = space.children[s, a]
            if ch == ae.MASKED:
                continue
            assert abs(pi[s, a] - mass[(*y, a)] / mass[y]) <= 1e-12


def test_brute_force_baseline_agrees():
    space = ae.SequenceSpace(3, 5, eos=2)
    r = _rand_r(space, np.random.default_rng(1))
    q = ae.ebm_to_arm(r, space)
    qb = brute_force_arm(r, space)
    assert _gap(qb, q, space.allowed) <= 1e-12
    R = ae.sequence_reward(r, space)
    assert abs(brute_force_log_partition(R, space) - ae.log_partition(r, space)) <= 1e-12


def test_soft_values_root_and_telescoping():
    space = ae.SequenceSpace(3, 4)
    rng = np.random.default_rng(2)
    q = rng.normal(size=space.shape) * 2
    r = ae.arm_to_ebm(q, space)
    V = ae.soft_values(r, space)
    R = ae.sequence_reward(r, space)
    vq_root = logsumexp(q[0])
    # R(y) = log p_q(y) + V_q(root); V(root) of r equals log Z = V_q(root)
    assert np.allclose(R, ae.log_prob_arm(q, space) + vq_root, atol=1e-12, rtol=0)
    assert abs(V[0] - vq_root) <= 1e-12


def test_reward_to_steps_and_log_prob_ebm():
    space = ae.SequenceSpace(3, 4, eos=2)
    R = np.random.default_rng(3).normal(size=space.n_sequences)
    r = ae.reward_to_steps(R, space)
    assert np.array_equal(ae.sequence_reward(r, space), R)
    lp = ae.log_prob_ebm(R, space)
    assert np.allclose(lp, R - logsumexp(R), atol=1e-13, rtol=0)
    some = [space.sequences()[i] for i in (0, 3, 7)]
    assert np.allclose(ae.log_prob_ebm(R, space, some), lp[[0, 3, 7]], atol=1e-13)
    assert np.allclose(ae.log_prob_ebm(r, space, some), lp[[0, 3, 7]], atol=1e-13)
    q = ae.ebm_to_arm(r, space)
    assert np.allclose(ae.log_prob_arm(q, space, some), lp[[0, 3, 7]], atol=1e-13)


def test_several_prompts():
    space = ae.SequenceSpace(3, 3, eos=2, n_prompts=3)
    rng = np.random.default_rng(4)
    R = rng.normal(size=space.n_sequences)
    r = ae.reward_to_steps(R, space)
    logz = ae.log_partition(r, space)
    assert logz.shape == (3,)
    for p in range(3):
        assert abs(logz[p] - logsumexp(R[space.sequence_prompt == p])) <= 1e-12
    q = ae.ebm_to_arm(r, space)
    lp = ae.log_prob_arm(q, space)
    for p in range(3):
        assert abs(np.exp(lp[space.sequence_prompt == p]).sum() - 1) <= 1e-12
    assert np.allclose(lp, ae.log_prob_ebm(R, space), atol=1e-12)
    y = space.sequences()[1]
    got = ae.log_prob_arm(q, space, [y, y, y], prompts=[0, 1, 2])
    assert np.allclose(got, [lp[space.sequence_index([y], prompts=[p])[0]] for p in range(3)])


def test_hard_constraints_and_masks_give_exact_zeros():
    def mask(prompts, prefixes):
        m = np.ones((prompts.size, 3), dtype=bool)
        if prefixes.shape[1]:
            m[prefixes[:, -1] == 0, 1] = False
        return m

    space = ae.SequenceSpace(3, 5, eos=2, mask=mask)
    rng = np.random.default_rng(5)
    R = rng.normal(size=space.n_sequences)
    dead = rng.random(space.n_sequences) < 0.4
    R[dead] = -np.inf
    r = ae.reward_to_steps(R, space)
    q = ae.ebm_to_arm(r, space)
    p = np.exp(ae.log_prob_arm(q, space))
    assert (p[dead] == 0).all() and not np.isnan(p).any()
    assert np.max(np.abs(p - np.exp(ae.log_prob_ebm(R, space)))) <= 1e-12
    assert (q[~space.allowed] == -np.inf).all()
    r_back = ae.arm_to_ebm(q, space)
    assert not np.isnan(r_back).any()
    # sequences through a masked action: probability exactly 0
    assert ae.log_prob_arm(q, space, [(0, 1, 2)])[0] == -np.inf
    assert ae.log_prob_ebm(R, space, [(0, 1, 2)])[0] == -np.inf
    # R placed back from r matches on the support
    assert np.array_equal(np.isneginf(ae.sequence_reward(r_back, space)), dead)


def test_stability_at_large_logits():
    space = ae.SequenceSpace(3, 6, eos=2)
    rng = np.random.default_rng(6)
    r = _rand_r(space, rng, 1e3)
    q = ae.ebm_to_arm(r, space)
    assert np.isfinite(q[space.allowed]).all()
    lp = ae.log_prob_arm(q, space)
    assert np.isfinite(lp).all() and abs(np.exp(lp).sum() - 1) <= 1e-12
    scale = np.abs(r[space.allowed]).max()
    back = ae.arm_to_ebm(q, space)
    assert _gap(back, r, space.allowed) / scale <= 1e-12


def test_kl_regularized_policy_is_the_dpo_ebm():
    space = ae.SequenceSpace(3, 4, eos=2)
    rng = np.random.default_rng(7)
    q_ref = _rand_r(space, rng)
    R = rng.normal(size=space.n_sequences)
    for beta in (0.1, 1.0, 5.0):
        q = ae.kl_regularized_policy(q_ref, R, beta, space)
        lp, lref = ae.log_prob_arm(q, space), ae.log_prob_arm(q_ref, space)
        logz = logsumexp(lref + R / beta)
        assert np.max(np.abs(beta * (lp - lref) + beta * logz - R)) <= 1e-12
    with pytest.raises(ValueError, match="beta must be finite and > 0"):
        ae.kl_regularized_policy(q_ref, R, 0.0, space)


def test_bad_tables():
    space = ae.SequenceSpace(3, 3, eos=2)
    good = np.zeros(space.shape)
    with pytest.raises(ValueError, match=r"r must have shape \(n_states, vocab_size\)"):
        ae.ebm_to_arm(np.zeros((2, 3)), space)
    bad = good.copy()
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="r must be finite or -inf, got nan at state 1"):
        ae.ebm_to_arm(bad, space)
    bad[1, 0] = np.inf
    with pytest.raises(ValueError, match="q must be finite or -inf, got inf"):
        ae.arm_to_ebm(bad, space)
    with pytest.raises(TypeError, match="r must be real-valued"):
        ae.ebm_to_arm(good + 1j, space)
    with pytest.raises(TypeError, match="r must be a real numeric array"):
        ae.ebm_to_arm(np.full(space.shape, "a"), space)
    with pytest.raises(ValueError, match=r"R must have shape \(7,\)"):
        ae.reward_to_steps(np.zeros(3), space)
    with pytest.raises(ValueError, match="probability 0"):
        ae.ebm_to_arm(np.full(space.shape, -np.inf), space)
    assert ae.log_partition(np.full(space.shape, -np.inf), space) == -np.inf
    q = good.copy()
    q[space.children[0, 0]] = -np.inf  # dead state reached with a finite logit
    with pytest.raises(ValueError, match="q must not reach a state whose logits are all -inf"):
        ae.arm_to_ebm(q, space)
    with pytest.raises(TypeError, match="space must be a SequenceSpace or FactoredSpace"):
        ae.ebm_to_arm(good, "space")
    fs = ae.FactoredSpace(3, 3, key_fn=lambda p, y: 0, eos=2, step=lambda k, a: k)
    with pytest.raises(TypeError, match="reward_to_steps enumerates sequences"):
        ae.reward_to_steps(np.zeros(7), fs)
