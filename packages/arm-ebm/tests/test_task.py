import numpy as np

import arm_ebm as ae
from arm_ebm import data as _task
from icml26_shared.metrics import binomial_tolerance


def test_planning_task_ebm_is_p0_conditioned_on_validity():
    task = _task.planning_task(0)
    sp = task.space
    lp0 = ae.log_prob_arm(task.q0, sp)
    seqs = sp.sequences()
    ref_valid = np.array([6 <= len(y) - 1 <= 10 and y.count(0) == y.count(1) for y in seqs])
    assert np.array_equal(task.valid, ref_valid)
    q_star = ae.ebm_to_arm(task.r, sp)
    lp = ae.log_prob_arm(q_star, sp)
    p_valid = np.exp(lp0[ref_valid]).sum()
    assert np.allclose(np.exp(lp[ref_valid]), np.exp(lp0[ref_valid]) / p_valid, atol=1e-12)
    assert (np.exp(lp[~ref_valid]) == 0).all()
    # KL(p_R‖p0) = −log P0(valid): the rejection cost made visible
    assert abs(ae.kl(q_star, task.q0, sp) + np.log(p_valid)) <= 1e-12
    # myopic: p0 with EOS masked where it would be invalid, except where it is forced
    idx = ae.sample(task.q0, sp, 20_000, seed=0, output="index")
    assert abs(task.valid[idx].mean() - p_valid) <= binomial_tolerance(p_valid, 20_000)
    k_my = ae.kl(q_star, task.q_myopic, sp)
    assert 0 < k_my < ae.kl(q_star, task.q0, sp)


def test_keyed_task_reward_equals_trie_reward():
    task = _task.planning_task(1)
    rk = _task.keyed_task_reward(task.keyed, task.bigram, 6, 10)
    rt = np.where(task.space.allowed, rk[task.key_of_state], -np.inf)
    fin = np.isfinite(task.r)
    assert np.array_equal(fin, np.isfinite(rt))
    assert np.max(np.abs(rt[fin] - task.r[fin])) <= 1e-12
    assert abs(ae.log_partition(rk, task.keyed) - ae.log_partition(task.r, task.space)) <= 1e-12


def test_factored_backup_long_sequences():
    """T = 200 over keys: log Z against a closed form (r = 0 ⇒ Z = number of sequences)."""
    fs = ae.FactoredSpace(3, 200, key_fn=lambda p, y: 0, step=lambda k, a: min(k + (a == 0), 5))
    assert abs(ae.log_partition(np.zeros(fs.shape), fs) - 200 * np.log(3)) <= 1e-9
    fe = ae.FactoredSpace(3, 200, key_fn=lambda p, y: 0, eos=2, step=lambda k, a: a)
    # with EOS: Σ_{n=0}^{199} 2^n sequences
    logz = ae.log_partition(np.zeros(fe.shape), fe)
    assert abs(logz - (200 * np.log(2) + np.log1p(-(2.0**-200)))) <= 1e-9
    task = _task.planning_task(0)
    keyed = ae.FactoredSpace(4, 200, key_fn=lambda p, y: (0, 0), eos=3, step=_task.task_key_step)
    r = _task.keyed_task_reward(keyed, task.bigram, 6, 199)
    q = ae.ebm_to_arm(r, keyed)
    arr = ae.sample(q, keyed, 300, seed=0, output="array")
    lengths = (arr >= 0).sum(axis=1) - 1
    assert (lengths >= 6).all()
    assert all((row == 0).sum() == (row == 1).sum() for row in arr)
