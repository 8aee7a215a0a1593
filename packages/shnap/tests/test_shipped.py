"""Shipped float16 weights: found only by their exact key, never stale, loaded without training."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from shnap import _shipped, _weights
from shnap._bridge import Bridge, BridgeConfig, TrainConfig
from shnap._cnn import CNNConfig, RiskCNN3D, train_risk_cnn
from shnap._fills import DDPMConfig, RePaint
from shnap._reproduce import FULL, QUICK, cnn_configs
from shnap._weights import shipped_keys
from shnap._weights import weights_key as _key


def test_the_defaults_and_the_reproduce_cnns_ship_under_their_current_keys():
    """A changed default or code version changes the key: this fails until the weights are
    re-trained and re-shipped (scripts/ship_weights.py), so stale weights never load."""
    bridge = shipped_keys(TrainConfig(), BridgeConfig())
    assert any((_shipped.SHIPPED_DIR / f"bridge-{k}.npz").is_file() for k in bridge)
    repaint = shipped_keys(DDPMConfig())
    assert any((_shipped.SHIPPED_DIR / f"repaint-{k}-4000.npz").is_file() for k in repaint)
    for quick in (True, False):
        for cfg in cnn_configs(QUICK if quick else FULL):
            assert (_shipped.SHIPPED_DIR / f"riskcnn-{cfg.key()}.npz").is_file(), cfg


def test_shipped_round_trip_and_a_mismatched_key_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(_shipped, "SHIPPED_DIR", tmp_path)
    net = RiskCNN3D()
    path = _shipped.write_shipped("riskcnn", "abc", {"net": net.state_dict()}, {"record": {}})
    states, meta = _shipped.load_shipped("riskcnn", "abc")
    for k, v in net.state_dict().items():
        assert states["net"][k].dtype == torch.float32
        np.testing.assert_allclose(states["net"][k], v.half().float())
    assert meta["key"] == "abc" and _shipped.load_shipped("riskcnn", "abd") is None
    path.rename(tmp_path / "riskcnn-xyz.npz")
    with pytest.raises(ValueError, match=r"riskcnn-xyz\.npz.*expected 'xyz'"):
        _shipped.load_shipped("riskcnn", "xyz")


def test_pretrained_loads_shipped_weights_and_trains_only_another_config(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(_shipped, "SHIPPED_DIR", tmp_path / "weights")
    cfg = CNNConfig(n_cases=8, epochs=1)
    model, _ = train_risk_cnn(cfg, cache=False, progress=False)
    _shipped.write_shipped("riskcnn", cfg.key(), {"net": model.state_dict()}, {"record": {"x": 1}})
    got, rec = train_risk_cnn(cfg, progress=True)
    assert rec["shipped"] and rec["cached"] and "training" not in capsys.readouterr().err
    x = np.zeros((1, 1, 32, 32, 32), np.float32)
    assert abs(float(got(x)[0]) - float(model(x)[0])) < 0.05
    _, rec2 = train_risk_cnn(CNNConfig(n_cases=8, epochs=1, seed=1), progress=True)
    assert not rec2["cached"] and "training the risk CNN" in capsys.readouterr().err
    tc, bc = (
        TrainConfig(n_crops=8, steps=1, batch_size=4, n_pair_phantoms=2, n_mask_phantoms=2),
        BridgeConfig(),
    )
    b = Bridge.pretrained(tc, bc, cache=False, progress=False)
    states = {"unet": b.unet.state_dict(), "insert_unet": b.insert_unet.state_dict()}
    _shipped.write_shipped("bridge", _key(tc, bc), states, {"cond": False, "record": {}})
    again = Bridge.pretrained(tc, BridgeConfig(steps=7), progress=True)  # sampler change only
    assert again.record["shipped"] and "training" not in capsys.readouterr().err
    assert again.config.steps == 7


def test_repaint_pretrained_loads_shipped_weights_without_training(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_shipped, "SHIPPED_DIR", tmp_path / "weights")
    monkeypatch.setenv("SHNAP_CACHE", str(tmp_path / "cache"))
    cfg = DDPMConfig(train_steps=1, batch_size=2, steps=2, widths=(8, 8, 8))
    rp = RePaint.pretrained(cfg, n_crops=4, cache=False, progress=False)
    key = f"{_key(cfg)}-4"
    _shipped.write_shipped("repaint", key, {"unet": rp.unet.state_dict()}, {"record": {"x": 1}})
    got = RePaint.pretrained(cfg, n_crops=4, progress=True)
    assert got.record["shipped"] and got.record["x"] == 1
    assert "training" not in capsys.readouterr().err
    for a, b in zip(got.unet.state_dict().values(), rp.unet.state_dict().values()):
        np.testing.assert_allclose(a, b.half().float())


@pytest.mark.parametrize("native", [False, True])
def test_default_editors_load_shipped_weights_whatever_the_cpu_precision(
    native, tmp_path, monkeypatch, capsys
):
    """The shipped weights were trained in float32. On a CPU with native bf16 an auto-precision
    config is keyed as bf16, so the lookup falls back to the float32 key instead of training
    the bridge and RePaint for many CPU-minutes on first use."""
    monkeypatch.setattr(_weights, "native_bf16", lambda: native)
    monkeypatch.setenv("SHNAP_CACHE", str(tmp_path / "cache"))
    keys = shipped_keys(TrainConfig(), BridgeConfig())
    assert len(keys) == (2 if native else 1)
    assert keys[-1] == _key(TrainConfig(), BridgeConfig(), auto_bf16=False)
    assert shipped_keys(TrainConfig(), BridgeConfig(bf16=True)) == [
        _key(TrainConfig(), BridgeConfig(bf16=True))
    ]
    b = Bridge.pretrained(progress=True)
    rp = RePaint.pretrained(progress=True)
    assert b.record["shipped"] and rp.record["shipped"]
    assert "training" not in capsys.readouterr().err
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())
