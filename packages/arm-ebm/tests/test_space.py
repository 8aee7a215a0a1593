import itertools

import numpy as np
import pytest

import arm_ebm as ae


@pytest.mark.parametrize("A,T,eos", [(2, 3, None), (3, 4, 2), (5, 3, 0), (1, 4, 0), (3, 1, None)])
def test_sequences_match_enumeration(A, T, eos, enumerate_sequences):
    space = ae.SequenceSpace(A, T, eos=eos)
    seqs = space.sequences()
    ref = enumerate_sequences(A, T, eos)
    assert sorted(seqs) == sorted(ref) and len(set(seqs)) == len(seqs)
    # fixed order: by length, then lexicographic
    assert seqs == sorted(seqs, key=lambda y: (len(y), y))
    # every prefix of a sequence is a state, and sequence_index inverts sequences()
    assert np.array_equal(space.sequence_index(seqs), np.arange(len(seqs)))
    prefixes = {y[:t] for y in seqs for t in range(len(y))}
    assert space.n_states == len(prefixes)
    assert {space.prefix(s) for s in range(space.n_states)} == prefixes


def test_paths_and_arrays_are_consistent():
    space = ae.SequenceSpace(3, 4, eos=2)
    arr, paths = space.sequence_array(), space.paths()
    for i, y in enumerate(space.sequences()):
        assert tuple(arr[i, : len(y)]) == y and (arr[i, len(y) :] == -1).all()
        for t in range(len(y)):
            assert space.prefix(paths[i, t]) == y[:t]


def test_mask_prunes_subtrees_and_several_prompts():
    def mask(prompts, prefixes):
        m = np.ones((prompts.size, 3), dtype=bool)
        m[prompts == 1, 0] = False  # prompt 1 never emits token 0
        if prefixes.shape[1]:
            m[prefixes[:, -1] == 1, 1] = False  # no "1 1"
        return m

    space = ae.SequenceSpace(3, 3, mask=mask, n_prompts=2)
    seqs, prom = space.sequences(), space.sequence_prompt
    assert np.all(np.diff(prom) >= 0)
    for y, p in zip(seqs, prom):
        assert not (p == 1 and 0 in y)
        assert all(not (a == 1 and b == 1) for a, b in itertools.pairwise(y))
    n0 = sum(1 for p in prom if p == 0)
    assert n0 == 27 - 5  # 27 minus the 5 containing "1 1" (11x: 3, x11: 3, 111 twice)
    assert space.roots.tolist() == [0, 1]


def test_bad_space_arguments():
    with pytest.raises(ValueError, match="eos must be a token id in"):
        ae.SequenceSpace(3, 4, eos=3)
    with pytest.raises(ValueError, match="max_len must be an integer >= 1"):
        ae.SequenceSpace(3, 0)
    with pytest.raises(TypeError, match="vocab_size"):
        ae.SequenceSpace(2.5, 3)
    with pytest.raises(TypeError, match="eos must be None or an integer"):
        ae.SequenceSpace(3, 3, eos=True)
    with pytest.raises(ValueError, match=r"max_states=1000.*FactoredSpace"):
        ae.SequenceSpace(5, 8, max_states=1000)
    with pytest.raises(ValueError, match=r"max_states=10000000.*FactoredSpace"):
        ae.SequenceSpace(50, 10)

    def dead_after_one(prompts, prefixes):
        m = np.ones((prompts.size, 2), dtype=bool)
        if prefixes.shape[1] == 1:
            m[prefixes[:, 0] == 1] = False
        return m

    with pytest.raises(ValueError, match=r"every action masked at prompt 0, prefix \(1,\)"):
        ae.SequenceSpace(2, 3, mask=dead_after_one)
    with pytest.raises(ValueError, match="mask must return a boolean array of shape"):
        ae.SequenceSpace(2, 3, mask=lambda p, y: np.ones((p.size, 3), bool))
    with pytest.raises(TypeError, match="mask must be None or a callable"):
        ae.SequenceSpace(2, 3, mask=np.ones(2))


def test_bad_sequences():
    space = ae.SequenceSpace(3, 4, eos=2)
    with pytest.raises(ValueError, match="tokens after EOS"):
        space.sequence_index([(0, 2, 1, 2)])
    with pytest.raises(ValueError, match=r"token ids in \[0, 3\)"):
        space.sequence_index([(0, 5, 2)])
    with pytest.raises(ValueError, match="incomplete"):
        space.sequence_index([(0, 1)])
    with pytest.raises(ValueError, match="1 to max_len=4 tokens"):
        space.sequence_index([(0, 1, 0, 1, 2)])
    with pytest.raises(ValueError, match="exactly max_len=3"):
        ae.SequenceSpace(2, 3).sequence_index([(0, 1)])
    with pytest.raises(TypeError, match="integer token ids"):
        space.sequence_index([(0.5, 2)])
    with pytest.raises(ValueError, match="must not be empty"):
        space.sequence_index([])
    with pytest.raises(ValueError, match="prompts must lie in"):
        space.sequence_index([(2,)], prompts=[3])


def _imbalance_step(key, a):
    return key + (a == 0) - (a == 1)


def test_factored_space_matches_trie_structure():
    fs = ae.FactoredSpace(3, 6, key_fn=lambda p, y: 0, eos=2, step=_imbalance_step)
    fs2 = ae.FactoredSpace(
        3, 6, key_fn=lambda p, y: sum((a == 0) - (a == 1) for a in y), eos=2
    )  # same key computed from representative prefixes
    assert np.array_equal(fs.children, fs2.children) and fs.keys == fs2.keys
    trie = ae.SequenceSpace(3, 6, eos=2)
    idx = fs.states_of(trie)
    for s in range(trie.n_states):
        y = trie.prefix(s)
        assert fs.depth[idx[s]] == len(y)
        assert fs.keys[idx[s]] == sum((a == 0) - (a == 1) for a in y)
    assert fs.n_states < trie.n_states
    with pytest.raises(ValueError, match="must have \\(vocab_size, max_len, eos, n_prompts\\)"):
        fs.states_of(ae.SequenceSpace(3, 5, eos=2))
    with pytest.raises(TypeError, match="key_fn must be a callable"):
        ae.FactoredSpace(3, 6, key_fn=None)
    with pytest.raises(ValueError, match="every action masked at depth 1"):
        ae.FactoredSpace(
            3,
            4,
            key_fn=lambda p, y: 0,
            step=lambda k, a: a,
            mask=lambda d, k: np.array([d != 1] * 3),
        )
    with pytest.raises(ValueError, match="at most max_states=10"):
        ae.FactoredSpace(3, 20, key_fn=lambda p, y: 0, step=_imbalance_step, max_states=10)


def test_factored_mask_and_tabulate():
    fs = ae.FactoredSpace(
        3,
        5,
        key_fn=lambda p, y: 0,
        step=_imbalance_step,
        mask=lambda d, k: np.array([k < 2, True, True]),
    )
    assert (fs.children[[i for i, k in enumerate(fs.keys) if k >= 2], 0] == ae.MASKED).all()
    tab = fs.tabulate(lambda d, k: np.full(3, float(d)))
    assert tab.shape == fs.shape and np.array_equal(tab[:, 0], fs.depth)
    with pytest.raises(ValueError, match="fn must return arrays of shape"):
        fs.tabulate(lambda d, k: np.zeros(2))
