import numpy as np
import pytest
from scipy import stats

import arm_ebm as ae
from icml26_shared.metrics import binomial_tolerance


@pytest.mark.parametrize("eos", [None, 2])
def test_frequencies_match_exact_probabilities(eos):
    space = ae.SequenceSpace(3, 4, eos=eos)
    R = np.random.default_rng(0).normal(size=space.n_sequences)
    q = ae.ebm_to_arm(ae.reward_to_steps(R, space), space)
    p = np.exp(ae.log_prob_ebm(R, space))
    n = 100_000
    idx = ae.sample(q, space, n, seed=1, output="index")
    freq = np.bincount(idx, minlength=space.n_sequences) / n
    conf = 1 - 0.001 / space.n_sequences  # Bonferroni over sequences
    for f, pi in zip(freq, p):
        assert abs(f - pi) <= binomial_tolerance(pi, n, confidence=conf)
    assert stats.chisquare(freq * n, n * p).pvalue > 1e-3


def test_outputs_and_masked_sequences_never_drawn():
    space = ae.SequenceSpace(3, 5, eos=2)
    rng = np.random.default_rng(2)
    R = rng.normal(size=space.n_sequences)
    dead = rng.random(space.n_sequences) < 0.5
    R[dead] = -np.inf
    q = ae.ebm_to_arm(ae.reward_to_steps(R, space), space)
    idx = ae.sample(q, space, 5000, seed=3, output="index")
    assert not dead[idx].any()
    tup = ae.sample(q, space, 50, seed=4)
    arr = ae.sample(q, space, 50, seed=4, output="array")
    assert [tuple(int(t) for t in row if t >= 0) for row in arr] == tup
    assert [space.sequences()[i] for i in ae.sample(q, space, 50, seed=4, output="index")] == tup
    assert np.isfinite(ae.log_prob_arm(q, space, tup)).all()


def test_factored_sampling_matches_trie_marginal():
    """Sampling on the keyed graph: the token count of 'a' follows the trie's exact law."""
    step = lambda k, a: k + (a == 0)  # noqa: E731
    fs = ae.FactoredSpace(2, 6, key_fn=lambda p, y: 0, step=step)
    r = fs.tabulate(lambda d, k: np.array([0.3 * (k - 2), 0.0]))
    q = ae.ebm_to_arm(r, fs)
    trie = ae.SequenceSpace(2, 6)
    lp = ae.log_prob_ebm(r[fs.states_of(trie)], trie)
    count = np.array([y.count(0) for y in trie.sequences()])
    exact = np.bincount(count, weights=np.exp(lp), minlength=7)
    n = 40_000
    arr = ae.sample(q, fs, n, seed=5, output="array")
    freq = np.bincount((arr == 0).sum(axis=1), minlength=7) / n
    for f, pi in zip(freq, exact):
        assert abs(f - pi) <= binomial_tolerance(pi, n, confidence=1 - 0.001 / 7)


def test_sample_bad_input():
    space = ae.SequenceSpace(2, 3)
    q = np.zeros(space.shape)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        ae.sample(q, space, 0)
    with pytest.raises(ValueError, match="output must be one of"):
        ae.sample(q, space, 3, output="dict")
    with pytest.raises(ValueError, match="prompts must lie in"):
        ae.sample(q, space, 3, prompt=2)
    fs = ae.FactoredSpace(2, 3, key_fn=lambda p, y: 0, step=lambda k, a: k)
    with pytest.raises(ValueError, match="output='index' needs a SequenceSpace"):
        ae.sample(np.zeros(fs.shape), fs, 3, output="index")
