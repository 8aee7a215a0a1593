"""PerturbedVAE: the SCM structure, the closed-form KL, u-free background, prediction, errors."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest
import torch

from perturbedvae import PerturbedVAE
from perturbedvae._perturbedvae import scm_kl
from perturbedvae.data import Screen, simulate_screen


def _kl_mc(mu_n, lv_n, mu_b, lv_b, A, C, shift, lo, n=100_000, seed=1):
    """Independent estimate: sample z_ι, z_ν; log q − log p with the full-covariance prior."""
    g = torch.Generator().manual_seed(seed)
    d = mu_n.shape[-1]
    z_b = mu_b + torch.exp(0.5 * lv_b) * torch.randn(
        n, mu_b.shape[-1], generator=g, dtype=torch.float64
    )
    z_n = mu_n + torch.exp(0.5 * lv_n) * torch.randn(n, d, generator=g, dtype=torch.float64)
    Minv = torch.linalg.inv(torch.eye(d, dtype=torch.float64) - A)
    cov = Minv @ torch.diag(torch.exp(lo)) @ Minv.T
    p = torch.distributions.MultivariateNormal((z_b @ C.T + shift) @ Minv.T, covariance_matrix=cov)
    q = torch.distributions.Normal(mu_n, torch.exp(0.5 * lv_n))
    return float((q.log_prob(z_n).sum(-1) - p.log_prob(z_n)).mean())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_closed_form_kl_matches_monte_carlo(seed):
    g = torch.Generator().manual_seed(seed)
    d, b = 5, 7
    rnd = lambda *s: torch.randn(*s, generator=g, dtype=torch.float64)  # noqa: E731
    A = torch.tril(rnd(d, d), -1) * 0.7
    C = 0.5 * rnd(d, b)
    mu_n, lv_n, mu_b, lv_b = rnd(1, d), 0.5 * rnd(1, d), rnd(1, b), 0.5 * rnd(1, b)
    shift, lo = rnd(1, d), 0.5 * rnd(d)
    kl = float(scm_kl(mu_n, lv_n, mu_b, lv_b, A, C, shift, lo))
    mc = _kl_mc(mu_n, lv_n, mu_b, lv_b, A, C, shift, lo)
    assert kl > 1.0
    assert abs(kl - mc) <= 0.01 * abs(mc)


def test_kl_is_zero_when_posterior_equals_prior_without_background_coupling():
    d, b = 3, 2
    A = torch.tensor([[0, 0, 0], [0.5, 0, 0], [0, 0, 0.0]], dtype=torch.float64)
    lo = torch.zeros(d, dtype=torch.float64)
    # prior covariance is not diagonal when A != 0, so use A = 0 for an exact zero
    mu = torch.tensor([[0.3, -0.2, 1.0]], dtype=torch.float64)
    z = lambda *s: torch.zeros(*s, dtype=torch.float64)  # noqa: E731
    kl0 = scm_kl(mu, z(1, d), z(1, b), torch.full((1, b), -30.0, dtype=torch.float64),
                 torch.zeros(d, d, dtype=torch.float64), torch.zeros(d, b, dtype=torch.float64),
                 mu, lo)  # fmt: skip
    assert float(kl0) == pytest.approx(0.0, abs=1e-10)
    kl1 = scm_kl(mu, z(1, d), z(1, b), z(1, b), A,
                 torch.zeros(d, b, dtype=torch.float64), mu, lo)  # fmt: skip
    assert float(kl1) > 0


def test_A_strictly_lower_triangular_after_training(model):
    A = model.A
    assert np.all(A[np.triu_indices_from(A)] == 0.0)
    assert np.any(A[np.tril_indices_from(A, -1)] != 0.0)  # it did train


def test_background_encoder_ignores_u(model, split):
    test = split.test
    relabeled = dataclasses.replace(test, conditions=np.full(test.n_cells, "ctrl"))
    assert np.array_equal(model.background(test), model.background(relabeled))
    assert np.array_equal(model.background(test), model.background(test.X))
    assert model.net.enc_bg[0].in_features == 100  # x only
    assert not np.allclose(model.perturbation_latent(test), model.perturbation_latent(relabeled))


def test_two_hot_decodes_without_retraining(model, split):
    before = [p.detach().clone() for p in model.net.parameters()]
    pred = model.predict(split.doubles, n_cells=50)
    assert pred.cells.shape == (5, 50, 100) and pred.mean.shape == (5, 100)
    assert np.isfinite(pred.cells).all()
    a, b = split.doubles[0].split("+")
    assert np.array_equal(pred[f"{b}+{a}"], pred.mean[0])
    single = model.predict([a, b, "ctrl"], n_cells=50)
    assert not np.allclose(pred.mean[0], single.mean[2])
    for p, q in zip(before, model.net.parameters()):
        assert torch.equal(p, q)


def test_predict_is_reproducible(model, split):
    a = model.predict(split.doubles[:2], n_cells=30, seed=3)
    b = model.predict(split.doubles[:2], n_cells=30, seed=3)
    assert np.array_equal(a.cells, b.cells)


def test_programs_tables(model):
    prog = model.programs()
    assert prog.targets.shape == (12, 6) and prog.node_genes.shape == (6, 100)
    np.testing.assert_allclose(
        prog.total_effects, np.linalg.solve(np.eye(6) - prog.dag, prog.targets.T).T, atol=1e-5
    )
    tab = prog.perturbation_table()
    assert set(tab) == set(model.perturbations) and all(tab[p] for p in tab)
    genes = prog.gene_table(k=5)
    assert len(genes) == 6 and all(len(v) == 5 for v in genes.values())


def test_jacobian_matches_finite_differences(model):
    prog = model.programs()
    net = model.net
    with torch.no_grad():
        x0 = torch.as_tensor(model._controls[:500], dtype=torch.float32)
        z_b = net.encode_bg(x0)[0]
        B = torch.eye(6) - net.A
        z_n = torch.linalg.solve_triangular(B, (z_b @ net.C.T).T, upper=False, unitriangular=True).T
        eps = 1e-2
        e = torch.zeros(6)
        e[2] = eps
        up = net.decode_mean(torch.cat([z_b, z_n + e], -1), None).mean(0)
        dn = net.decode_mean(torch.cat([z_b, z_n - e], -1), None).mean(0)
    np.testing.assert_allclose(((up - dn) / (2 * eps)).numpy(), prog.node_genes[2], atol=2e-3)


def test_training_lowers_the_loss(split):
    m = PerturbedVAE(100, 12, hidden=32).fit(split.train, epochs=4, lr=1e-3, warmup=0.0)
    assert m.history[-1] < m.history[0]


@pytest.mark.slow
def test_learns_background_and_double_deltas():
    split = simulate_screen(n_cells=120, n_controls=1000, n_doubles=4, n_mc=2000, seed=1)
    m = PerturbedVAE(100, 12).fit(split.train, epochs=100, lr=1e-3)
    from perturbedvae import background_r2

    assert background_r2(m.background(split.test), split.test.truth["z_bg"]) > 0.85
    pred = m.predict(["ctrl", *split.doubles], n_cells=400)
    tm = split.test.truth["true_means"]
    from perturbedvae import pearson_delta

    r = [pearson_delta(pred.mean[k + 1] - pred.mean[0], tm[d] - tm["ctrl"])
         for k, d in enumerate(split.doubles)]  # fmt: skip
    assert np.mean(r) > 0.6


def test_nb_likelihood_and_soft_intervention():
    split = simulate_screen(n_cells=30, n_controls=100, n_doubles=2, noise="poisson", n_mc=200)
    assert split.train.counts and np.all(split.train.X == np.round(split.train.X))
    m = PerturbedVAE(100, 12, likelihood="nb", intervention="soft", hidden=32)
    m.fit(split.train, epochs=2, lr=1e-3)
    assert np.isfinite(m.history).all()
    pred = m.predict(split.doubles, n_cells=20)
    assert (pred.cells >= 0).all() and np.all(pred.cells == np.round(pred.cells))
    assert (pred.mean > 0).all()
    assert m.net.gamma is not None and m.net.gamma.abs().sum() > 0


def test_batch_aware_control_partners(split):
    from perturbedvae._perturbedvae import _control_partners

    tr = split.train
    batch = np.where(np.arange(tr.n_cells) % 2 == 0, "a", "b")
    screen = dataclasses.replace(tr, batch=batch)
    ctrl = np.flatnonzero(screen.is_control)
    draw = _control_partners(screen, ctrl)
    idx = np.flatnonzero(~screen.is_control)[:200]
    got = draw(idx, np.random.default_rng(0))
    assert np.all(screen.is_control[got]) and np.all(batch[got] == batch[idx])
    PerturbedVAE(100, 12, hidden=16).fit(screen, epochs=1)


def test_bad_input(model, split):
    with pytest.raises(ValueError, match="not seen in training: \\['ZZ'\\]"):
        model.predict(["P00+ZZ"])
    with pytest.raises(ValueError, match="empty"):
        model.predict([""])
    with pytest.raises(ValueError, match="at least one"):
        model.predict([])
    with pytest.raises(ValueError, match="cannot be parsed"):
        model.predict(["P00++P01"])
    with pytest.raises(ValueError, match="100 gene columns"):
        model.background(np.zeros((3, 99)))
    with pytest.raises(ValueError, match="finite"):
        model.background(np.full((3, 100), np.nan))
    with pytest.raises(ValueError, match="finite"):
        model.background(np.full((3, 100), np.inf))
    with pytest.raises(TypeError, match="real-valued"):
        model.background(np.zeros((3, 100), dtype=complex))
    with pytest.raises(ValueError, match="dimension"):
        model.background(np.zeros(100))
    shuffled = dataclasses.replace(split.test, genes=tuple(reversed(split.test.genes)))
    with pytest.raises(ValueError, match="genes differ"):
        model.background(shuffled)
    with pytest.raises(ValueError, match="alpha must be finite and >= 0"):
        PerturbedVAE(100, 12, alpha=-0.1)
    with pytest.raises(ValueError, match="likelihood"):
        PerturbedVAE(100, 12, likelihood="poisson")
    with pytest.raises(ValueError, match="intervention"):
        PerturbedVAE(100, 12, intervention="x")
    with pytest.raises(TypeError, match="n_genes"):
        PerturbedVAE(100.5, 12)
    with pytest.warns(UserWarning, match="d_pert=8 >= d_bg=8"):
        PerturbedVAE(100, 12, d_bg=8, d_pert=8)
    no_ctrl = split.train.subset(~split.train.is_control)
    with pytest.raises(ValueError, match="no control cells"):
        PerturbedVAE(100, 12, hidden=8).fit(no_ctrl, epochs=1)
    with pytest.raises(ValueError, match="expects 100"):
        PerturbedVAE(100, 12, hidden=8).fit(split.train.subset(np.arange(10)).__class__(
            np.zeros((2, 5)), np.array(["ctrl", "ctrl"]), split.train.perturbations,
            tuple("abcde")), epochs=1)  # fmt: skip
    neg = dataclasses.replace(split.train, X=split.train.X - 100.0)
    with pytest.raises(ValueError, match="negative values"):
        PerturbedVAE(100, 12, likelihood="nb", hidden=8).fit(neg, epochs=1)
    with pytest.raises(ValueError, match="warmup"):
        PerturbedVAE(100, 12, hidden=8).fit(split.train, epochs=1, warmup=1.5)
    with pytest.raises(RuntimeError, match="fit"):
        PerturbedVAE(100, 12).predict(["P00"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PerturbedVAE(100, 12)


def test_screen_validation():
    with pytest.raises(ValueError, match="finite"):
        Screen(np.array([[np.nan]]), np.array(["ctrl"]), (), ("g",))
    with pytest.raises(ValueError, match="not in perturbations"):
        Screen(np.zeros((1, 1)), np.array(["A"]), ("B",), ("g",))
    with pytest.raises(ValueError, match="genes must have"):
        Screen(np.zeros((1, 2)), np.array(["ctrl"]), (), ("g",))
    with pytest.raises(ValueError, match="no cells"):
        Screen(np.zeros((1, 1)), np.array(["ctrl"]), ("A",), ("g",)).pseudobulk("A")


def test_predict_uses_common_random_numbers_across_conditions(model, split):
    both = model.predict(["ctrl", split.doubles[0]], n_cells=40, seed=3)
    alone = model.predict(["ctrl"], n_cells=40, seed=3)
    assert np.array_equal(both.mean[0], alone.mean[0])


def _mmd_reference(mu, groups, mu0, kernel):
    """Direct double loops over cell pairs (the U-statistic written out)."""
    total, weight = 0.0, 0
    m = len(mu0)
    rr = np.mean([kernel(mu0[r], mu0[s]) for r in range(m) for s in range(m) if r != s])
    for c in np.unique(groups[groups >= 0]):
        rows = mu[groups == c]
        n = len(rows)
        if n < 2:
            continue
        pp = np.mean([kernel(rows[i], rows[j]) for i in range(n) for j in range(n) if i != j])
        pr = np.mean([kernel(rows[i], mu0[r]) for i in range(n) for r in range(m)])
        total += n * (pp + rr - 2 * pr)
        weight += n
    return total / weight


def _gauss_mix(a, b):
    d2, h2 = np.sum((a - b) ** 2), len(a)
    return np.mean([np.exp(-d2 / (2 * s * h2)) for s in (0.25, 1.0, 4.0)])


@pytest.mark.parametrize(("kind", "kernel"), [("mean", np.dot), ("mmd", _gauss_mix)])
def test_alignment_term_matches_direct_computation(kind, kernel):
    from perturbedvae._perturbedvae import alignment_term

    rng = np.random.default_rng(0)
    mu, mu0 = rng.normal(size=(13, 3)), rng.normal(size=(7, 3))
    groups = np.array([0, 0, 1, 1, 1, 2, -1, 3, 3, 3, 3, 0, -1])  # group 2 has one cell: left out
    got = alignment_term(torch.as_tensor(mu), torch.as_tensor(groups), torch.as_tensor(mu0), kind)
    assert float(got) == pytest.approx(_mmd_reference(mu, groups, mu0, kernel), rel=1e-10)
    if kind == "mean":  # = squared distance of the means, minus the within-group variances / n
        one = torch.as_tensor(groups == 1)
        g1 = alignment_term(torch.as_tensor(mu[groups == 1]), torch.zeros(3, dtype=torch.long),
                            torch.as_tensor(mu0), "mean")  # fmt: skip
        a, b = mu[one.numpy()], mu0
        want = (
            np.sum((a.mean(0) - b.mean(0)) ** 2)
            - a.var(0, ddof=1).sum() / 3
            - b.var(0, ddof=1).sum() / 7
        )
        assert float(g1) == pytest.approx(want, rel=1e-10)
    with pytest.raises(ValueError, match="kind"):
        alignment_term(torch.as_tensor(mu), torch.as_tensor(groups), torch.as_tensor(mu0), "l2")


def test_group_mean_alignment_does_not_penalise_spread_unlike_random_partners():
    """Same distribution for perturbed and control cells: the group-mean term is 0 in
    expectation, the random-partner term is 2 tr Cov (it shrinks the background)."""
    from perturbedvae._perturbedvae import alignment_term

    g = torch.Generator().manual_seed(0)
    vals, partner = [], []
    for _ in range(400):
        mu, mu0 = torch.randn(64, 4, generator=g), torch.randn(64, 4, generator=g)
        groups = torch.arange(64) % 8
        vals.append(float(alignment_term(mu, groups, mu0, "mean")))
        partner.append(float(((mu - mu0) ** 2).sum(-1).mean()))
    assert abs(np.mean(vals)) < 3 * np.std(vals) / np.sqrt(400)
    assert np.mean(partner) == pytest.approx(8.0, rel=0.05)


@pytest.mark.parametrize("align", ["mean", "mmd", "partner"])
def test_every_alignment_trains(split, align):
    m = PerturbedVAE(100, 12, hidden=16, alpha=1.0, align=align)
    m.fit(split.train, epochs=1, lr=1e-3)
    assert np.isfinite(m.history).all()
    with pytest.raises(ValueError, match="align must be one of"):
        PerturbedVAE(100, 12, align="pairs")


def test_u_free_perturbation_latent_does_not_use_u(model, split):
    test = split.test
    relabeled = dataclasses.replace(test, conditions=np.full(test.n_cells, "ctrl"))
    free = model.perturbation_latent(test, use_u=False)
    assert np.array_equal(free, model.perturbation_latent(relabeled, use_u=False))
    assert np.array_equal(free, model.perturbation_latent(relabeled))  # u = 0 is the control's
    assert not np.allclose(free, model.perturbation_latent(test))


def test_fit_callback_sees_every_epoch(split):
    seen = []
    PerturbedVAE(100, 12, hidden=8).fit(
        split.train, epochs=3, callback=lambda e, m: seen.append((e, m.net.training))
    )
    assert seen == [(1, False), (2, False), (3, False)]


def test_smoothed_mean_gap_gradient_is_the_squared_gap_gradient():
    """With decay 0 the running means are the batch means: the surrogate's gradient equals
    that of Σ_c w_c ‖m_c − m_0‖² computed directly; with decay 1 a zero running gap gives none."""
    from perturbedvae._perturbedvae import smoothed_mean_gap

    g = torch.Generator().manual_seed(0)
    mu = torch.randn(12, 3, generator=g, dtype=torch.float64, requires_grad=True)
    mu0 = torch.randn(6, 3, generator=g, dtype=torch.float64, requires_grad=True)
    groups = torch.tensor([0, 0, 1, 1, 1, -1, 3, 3, 0, 1, 3, 3])
    ema, ema0 = torch.zeros(4, 3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    got = torch.autograd.grad(smoothed_mean_gap(mu, groups, mu0, ema, ema0, decay=0.0), [mu, mu0])
    direct = 0.0
    for c, n_c in ((0, 3), (1, 4), (3, 4)):
        direct = direct + n_c / 11 * ((mu[groups == c].mean(0) - mu0.mean(0)) ** 2).sum()
    want = torch.autograd.grad(direct, [mu, mu0])
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b)
    torch.testing.assert_close(ema[1], mu[groups == 1].mean(0).detach())
    assert torch.all(ema[2] == 0)  # group 2 absent from the batch: its running mean is kept
    ema.zero_(), ema0.zero_()
    out = smoothed_mean_gap(mu, groups, mu0, ema, ema0, decay=1.0)
    assert all(torch.all(v == 0) for v in torch.autograd.grad(out, [mu, mu0]))
