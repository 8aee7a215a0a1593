import numpy as np
import pytest
from scipy.special import logsumexp

import arm_ebm as ae


def _space():
    return ae.SequenceSpace(3, 4, eos=2)


def test_backend_is_chosen_by_input_type(x64):
    import jax.numpy as jnp

    space = _space()
    r = np.random.default_rng(0).normal(size=space.shape)
    qn = ae.ebm_to_arm(r, space)
    qj = ae.ebm_to_arm(jnp.asarray(r), space)
    assert isinstance(qn, np.ndarray) and isinstance(qj, x64.Array)
    assert qj.dtype == jnp.float64
    fin = np.isfinite(qn)
    assert np.max(np.abs(np.asarray(qj)[fin] - qn[fin])) <= 1e-12
    assert np.array_equal(np.isneginf(np.asarray(qj)), np.isneginf(qn))
    for fn in (ae.arm_to_ebm, ae.log_policy, ae.policy, ae.visit_probabilities):
        a, b = fn(qn, space), np.asarray(fn(jnp.asarray(qn), space))
        with np.errstate(invalid="ignore"):
            d = np.where(np.isneginf(a) & np.isneginf(b), 0, np.abs(a - b))
        assert d.max() <= 1e-12, fn.__name__
    assert abs(float(ae.log_partition(jnp.asarray(r), space)) - ae.log_partition(r, space)) < 1e-12
    assert np.allclose(
        np.asarray(ae.log_prob_arm(jnp.asarray(qn), space)), ae.log_prob_arm(qn, space), atol=1e-12
    )
    q2 = np.where(space.allowed, np.random.default_rng(1).normal(size=space.shape), -np.inf)
    assert (
        abs(float(ae.kl(jnp.asarray(qn), jnp.asarray(q2), space)) - ae.kl(qn, q2, space)) <= 1e-12
    )
    R = np.random.default_rng(2).normal(size=space.n_sequences)
    rs = ae.reward_to_steps(jnp.asarray(R), space)
    assert np.array_equal(np.asarray(rs), ae.reward_to_steps(R, space))


def test_gradient_of_log_partition_matches_finite_differences(x64):
    """∂ log Z / ∂ r(s, a) = P_{p_R}(visit s, emit a); checked by central differences."""
    space = _space()
    rng = np.random.default_rng(3)
    r = rng.normal(size=space.shape)
    f = x64.jit(lambda t: ae.log_partition(t, space))
    g = np.asarray(x64.grad(f)(x64.numpy.asarray(r)))
    h = 1e-6
    for s, a in zip(*np.nonzero(space.allowed)):
        e = np.zeros(space.shape)
        e[s, a] = h
        fd = (ae.log_partition(r + e, space) - ae.log_partition(r - e, space)) / (2 * h)
        assert abs(g[s, a] - fd) <= 1e-8
    q = ae.ebm_to_arm(r, space)
    occ = ae.visit_probabilities(q, space)[:, None] * ae.policy(q, space)
    assert np.max(np.abs(np.where(space.allowed, g - occ, 0))) <= 1e-12
    assert (g[~space.allowed] == 0).all()


def test_learning_equivalence_value_and_gradient(x64):
    """−Σ log π_θ(y_t|s_t) = −R_θ(y) + log Z_θ (log Z by enumeration), for a tabular q_θ and a
    one-hidden-layer MLP; gradients also checked against finite differences."""
    jnp = x64.numpy
    from jax.scipy.special import logsumexp as jlse

    space = ae.SequenceSpace(3, 4)
    rng = np.random.default_rng(4)
    seqs = [space.sequences()[i] for i in rng.integers(0, space.n_sequences, 100)]
    X = jnp.asarray(ae.prefix_features(space))

    def arm(q):
        return -jnp.sum(ae.log_prob_arm(q, space, seqs))

    def ebm(q):
        r = ae.arm_to_ebm(q, space)
        return -jnp.sum(ae.sequence_reward(r, space, seqs)) + len(seqs) * jlse(
            ae.sequence_reward(r, space)
        )

    def mlp(p):
        return jnp.tanh(X @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]

    params = {
        "W1": jnp.asarray(rng.normal(size=(X.shape[1], 5))),
        "b1": jnp.asarray(rng.normal(size=5)),
        "W2": jnp.asarray(rng.normal(size=(5, 3))),
        "b2": jnp.asarray(rng.normal(size=3)),
    }
    for theta, f in ((jnp.asarray(rng.normal(size=space.shape)), lambda t: t), (params, mlp)):
        va, ga = x64.jit(x64.value_and_grad(lambda t, f=f: arm(f(t))))(theta)
        vb, gb = x64.jit(x64.value_and_grad(lambda t, f=f: ebm(f(t))))(theta)
        assert abs(float(va) - float(vb)) <= 1e-10
        for x, y in zip(x64.tree.leaves(ga), x64.tree.leaves(gb)):
            assert float(jnp.max(jnp.abs(x - y))) <= 1e-10
    # finite differences on one MLP weight
    h = 1e-6
    e = np.zeros(params["W1"].shape)
    e[0, 0] = h
    up = {**params, "W1": params["W1"] + e}
    dn = {**params, "W1": params["W1"] - e}
    fd = (float(arm(mlp(up))) - float(arm(mlp(dn)))) / (2 * h)
    assert abs(float(ga["W1"][0, 0]) - fd) <= 1e-6 * max(1, abs(fd))


def test_jax_hard_constraints_have_finite_gradients(x64):
    jnp = x64.numpy
    space = _space()
    R = np.random.default_rng(5).normal(size=space.n_sequences)
    R[::3] = -np.inf
    r = ae.reward_to_steps(R, space)
    g = x64.grad(lambda t: ae.log_partition(t, space))(jnp.asarray(r))
    assert np.isfinite(np.asarray(g)).all()
    p = np.exp(np.asarray(ae.log_prob_arm(ae.ebm_to_arm(jnp.asarray(r), space), space)))
    assert (p[::3] == 0).all()
    assert (
        abs(p.sum() - 1) < 1e-12
        and abs(np.log(np.exp(R[np.isfinite(R)]).sum()) - logsumexp(R)) < 1e-12
    )


def test_jax_bad_input(x64):
    jnp = x64.numpy
    space = _space()
    with pytest.raises(ValueError, match="r must be finite or -inf, got nan"):
        ae.ebm_to_arm(jnp.full(space.shape, jnp.nan), space)
    with pytest.raises(TypeError, match="real floating jax array"):
        ae.ebm_to_arm(jnp.zeros(space.shape, dtype=jnp.int32), space)
    with pytest.raises(ValueError, match="must have shape"):
        ae.ebm_to_arm(jnp.zeros((3, 3)), space)


def test_missing_jax_names_the_extra(monkeypatch):
    import sys

    from arm_ebm import _backend

    monkeypatch.setitem(sys.modules, "optax", None)
    with pytest.raises(ImportError, match=r"arm-ebm\[jax\]"):
        _backend.require_jax()
