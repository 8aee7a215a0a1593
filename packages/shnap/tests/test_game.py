import numpy as np
import pytest

from shnap._game import attribution_from_game, exact_sv_sii, lmpi_fit, order2_terms, shnap
from shnap._models import CallableRiskModel
from shnap._oracle import OracleRisk
from shnap._world import make_phantom


def _lmpi_game(n, rng, triple=0.0):
    mu = rng.normal()
    a = rng.normal(size=n)
    b = np.triu(rng.normal(size=(n, n)), 1)
    b = b + b.T
    idx = np.arange(2**n)
    z = ((idx[:, None] >> np.arange(n)) & 1).astype(float)
    v = mu + z @ a + 0.5 * np.einsum("si,ij,sj->s", z, b, z) + triple * z[:, 0] * z[:, 1] * z[:, 2]
    return v, mu, a, b, z


def test_phi_recovers_lmpi_terms_exactly():
    rng = np.random.default_rng(0)
    v, mu, a, b, _ = _lmpi_game(5, rng)
    sv, sii = exact_sv_sii(v)
    phi = order2_terms(sv, sii)
    np.testing.assert_allclose(phi, a, atol=1e-10)
    np.testing.assert_allclose(sii, b, atol=1e-10)
    iu = np.triu_indices(5, 1)
    assert abs(phi.sum() + sii[iu].sum() - (v[-1] - v[0])) < 1e-10
    fit = lmpi_fit(v)
    assert abs(fit.r2 - 1.0) < 1e-10 and abs(fit.mu - mu) < 1e-10
    np.testing.assert_allclose(fit.a, a, atol=1e-10)


def test_triple_term_residual_is_its_orthogonal_part():
    rng = np.random.default_rng(1)
    v, *_, z = _lmpi_game(5, rng, triple=1.7)
    fit = lmpi_fit(v)
    assert fit.r2 < 1.0 - 1e-6
    t = z[:, 0] * z[:, 1] * z[:, 2]
    design = np.column_stack(
        [np.ones(32), z, *[z[:, i] * z[:, j] for i in range(5) for j in range(i + 1, 5)]]
    )
    proj = design @ np.linalg.lstsq(design, t, rcond=None)[0]
    np.testing.assert_allclose(fit.residual, 1.7 * (t - proj), atol=1e-10)
    # efficiency holds for any game
    sv, sii = exact_sv_sii(v)
    iu = np.triu_indices(5, 1)
    assert abs(order2_terms(sv, sii).sum() + sii[iu].sum() - (v[-1] - v[0])) < 1e-10


def test_sv_sii_equal_shapiq_exact():
    shapiq = pytest.importorskip("shapiq")
    rng = np.random.default_rng(2)
    n = 6
    v = rng.normal(size=2**n)  # an arbitrary game
    sv, sii = exact_sv_sii(v)

    def game(coalitions):
        c = np.asarray(coalitions, bool)
        return v[(c * (1 << np.arange(n))).sum(axis=1)]

    comp = shapiq.ExactComputer(game, n_players=n)
    ref_sv = comp("SV")
    ref_sii = comp("SII", order=2)
    for i in range(n):
        assert abs(ref_sv[(i,)] - sv[i]) < 1e-10
        for j in range(i + 1, n):
            assert abs(ref_sii[(i, j)] - sii[i, j]) < 1e-10


def test_attribution_from_game_and_efficiency():
    att = attribution_from_game(lambda keep: float(keep.sum() ** 2), 4)
    assert att.efficiency_gap() < 1e-12
    np.testing.assert_allclose(att.phi, 1.0)
    np.testing.assert_allclose(att.phi_pair[np.triu_indices(4, 1)], 2.0)


def test_shnap_on_oracle_recovers_truth_and_ignores_electrodes(lung_fill):
    ph = make_phantom(32, n_nodules=3, electrodes=1, seed=4)
    oracle = OracleRisk.for_phantom(ph)
    players = {f"n{i}": m for i, m in enumerate(ph.nodule_masks)}
    players["electrode"] = ph.electrode_masks[0]
    att = shnap(oracle, ph.image, players, lung_fill, k=2)
    a, b = oracle.truth(ph)
    n = len(ph.nodule_masks)
    np.testing.assert_allclose(att.phi[:n], a, atol=1e-6)
    np.testing.assert_allclose(att.phi_pair[:n, :n], b, atol=1e-6)
    assert att["electrode"] == 0.0 and att.r2 > 1 - 1e-9
    assert att.efficiency_gap() < 1e-9
    assert att.values.shape == (2, 2 ** len(players))


def test_shnap_spread_reflects_edit_noise(lung_fill, noisy_fill):
    ph = make_phantom(32, n_nodules=2, seed=2)
    model = CallableRiskModel(lambda b: b.sum(axis=(1, 2, 3, 4)), name="sum")
    att = shnap(model, ph.image, list(ph.nodule_masks), noisy_fill, k=3)
    assert np.all(att.sv_spread > 0)
    att0 = shnap(model, ph.image, list(ph.nodule_masks), lung_fill, k=3)
    np.testing.assert_allclose(att0.sv_spread, 0, atol=1e-9)


def _model():
    return CallableRiskModel(lambda b: b.mean(axis=(1, 2, 3, 4)))


@pytest.mark.parametrize(
    ("x", "players", "match"),
    [
        (np.zeros((4, 4)), [np.ones((4, 4), bool)], "3D volume"),
        (np.zeros((4, 4, 4)), [np.ones((4, 4, 4), int)], "boolean"),
        (np.zeros((4, 4, 4)), [np.zeros((4, 4, 4), bool)], "empty"),
        (np.zeros((4, 4, 4)), [np.ones((4, 4, 5), bool)], "shape"),
        (np.zeros((4, 4, 4)), [np.ones((4, 4, 4), bool)] * 2, "overlap"),
        (np.zeros((4, 4, 4)), [], "1 to 12"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(x, players, match, lung_fill):
    with pytest.raises((ValueError, TypeError), match=match):
        shnap(_model(), x, players, lung_fill)


@pytest.mark.parametrize("batch_size", [0, 2.0, True])
def test_bad_batch_size_is_refused(batch_size, lung_fill):
    x = np.zeros((4, 4, 4), np.float32)
    with pytest.raises(ValueError, match="batch_size must be an integer >= 1"):
        shnap(_model(), x, [np.ones(x.shape, bool)], lung_fill, batch_size=batch_size)


def test_more_than_12_players_refused(lung_fill):
    x = np.zeros((13, 2, 2), np.float32)
    players = []
    for i in range(13):
        m = np.zeros(x.shape, bool)
        m[i] = True
        players.append(m)
    with pytest.raises(ValueError, match="N <= 12"):
        shnap(_model(), x, players, lung_fill)


def test_overlap_message_names_both_players(lung_fill):
    a = np.zeros((4, 4, 4), bool)
    a[:2] = True
    b = np.zeros((4, 4, 4), bool)
    b[1:] = True
    with pytest.raises(ValueError, match=r"players\[left\] and players\[right\] overlap"):
        shnap(_model(), np.zeros((4, 4, 4)), {"left": a, "right": b}, lung_fill)


@pytest.mark.parametrize(
    ("fn", "match"),
    [
        (lambda b: np.full(len(b), np.nan), "non-finite"),
        (lambda b: np.zeros((len(b), 3)), "shape"),
    ],
)
def test_bad_model_output_is_refused(fn, match, lung_fill):
    m = np.zeros((4, 4, 4), bool)
    m[0] = True
    with pytest.raises(ValueError, match=match):
        shnap(fn, np.zeros((4, 4, 4)), [m], lung_fill)


def test_gshnap_over_the_two_lungs_adds_up_their_nodules(lung_fill):
    from shnap._game import gshnap

    ph = make_phantom(32, n_nodules=4, seed=4)
    oracle = OracleRisk.for_phantom(ph)
    lungs = {
        "lung A": (ph.lobe >= 1) & (ph.lobe <= 3) & ~ph.vessel_mask,
        "lung B": (ph.lobe >= 4) & ~ph.vessel_mask,
    }
    att = gshnap(oracle, ph.image, lungs, lung_fill, k=1)
    a, b = oracle.truth(ph)
    side = np.array([int(ph.lobe[m].max() >= 4) for m in ph.nodule_masks])
    assert len(set(side)) == 2  # nodules in both lungs: a real two-player game
    expect = [
        a[side == s].sum() + np.triu(b[np.ix_(side == s, side == s)], 1).sum() for s in (0, 1)
    ]
    np.testing.assert_allclose(att.phi, expect, atol=1e-6)
    assert att.phi_pair[0, 1] == pytest.approx(b[np.ix_(side == 0, side == 1)].sum(), abs=1e-6)
    assert att.extra["locality_violations"] == 0
