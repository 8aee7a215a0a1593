import numpy as np
import pytest
import torch

from shnap import CNNConfig, RiskCNN3D, train_risk_cnn
from shnap._cnn import survival_nll, training_set


@pytest.mark.parametrize("padding", ["zeros", "reflect", "circular"])
def test_shapes_and_monotone_hazard(padding):
    torch.manual_seed(0)
    m = RiskCNN3D(padding=padding)
    x = torch.randn(3, 1, 32, 32, 32)
    h = m.cumulative_hazard(x)
    assert h.shape == (3, 6) and torch.all(h[:, 1:] >= h[:, :-1])
    out = m(x.numpy())
    assert out.shape == (3,) and np.all(np.isfinite(out))
    # the logit is log(exp(H_6) - 1)
    np.testing.assert_allclose(out, np.log(np.expm1(h[:, -1].detach().numpy())), rtol=1e-4)


def test_bad_padding_and_year():
    with pytest.raises(ValueError, match="padding must be"):
        RiskCNN3D(padding="same")
    with pytest.raises(ValueError, match="year"):
        RiskCNN3D(year=7)


def test_survival_nll_matches_hand_formula():
    h = torch.tensor([[0.1, 0.3, 0.6, 1.0, 1.5, 2.0]])
    for year in range(7):
        nll = float(survival_nll(h, torch.tensor([year])))
        hh = np.r_[0.0, h[0].numpy()]
        ref = hh[6] if year == 0 else -np.log(np.exp(-hh[year - 1]) - np.exp(-hh[year]))
        assert nll == pytest.approx(ref, rel=1e-5)


def test_training_set_plants_the_electrode_flaw():
    imgs, years, el = training_set(CNNConfig(n_cases=120, seed=3))
    pos = years > 0
    assert imgs.shape == (120, 32, 32, 32)
    assert pos.sum() > 10 and (~pos).sum() > 10
    assert el[pos].mean() > el[~pos].mean() + 0.3


def test_training_is_cached():
    cfg = CNNConfig(n_cases=16, epochs=1, batch_size=8)
    m1, r1 = train_risk_cnn(cfg)
    m2, r2 = train_risk_cnn(cfg)
    assert not r1["cached"] and r2["cached"]
    x = np.zeros((1, 1, 32, 32, 32), np.float32)
    assert m1(x)[0] == m2(x)[0]
