"""bf16 autocast only where the CPU computes bf16 natively."""

import warnings

import pytest
import torch

from shnap import _precision
from shnap._bridge import BridgeConfig
from shnap._fills import DDPMConfig
from shnap._weights import weights_key as _key


def test_default_is_auto_and_follows_the_cpu():
    assert BridgeConfig().bf16 is None and DDPMConfig().bf16 is None
    assert _precision.resolve_bf16(None, "x") is _precision.native_bf16()


def test_native_bf16_reads_cpu_flags(monkeypatch, tmp_path):
    for text, expected in [
        ("flags\t: fpu sse avx2 fma\n", False),
        ("flags\t: fpu avx512f avx512_bf16\n", True),
        ("flags\t: fpu amx_tile amx_bf16\n", True),
        ("Features\t: fp asimd bf16\n", True),
    ]:
        f = tmp_path / "cpuinfo"
        f.write_text(text)
        monkeypatch.setattr(_precision, "Path", lambda _p, f=f: f)
        _precision.native_bf16.cache_clear()
        assert _precision.native_bf16() is expected
    _precision.native_bf16.cache_clear()


def test_forced_bf16_warns_without_native_support(monkeypatch):
    monkeypatch.setattr(_precision, "native_bf16", lambda: False)
    with pytest.warns(RuntimeWarning, match="without native bf16"):
        assert _precision.resolve_bf16(True, "BridgeConfig") is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _precision.resolve_bf16(False, "BridgeConfig") is False
        assert _precision.resolve_bf16(None, "BridgeConfig") is False
    with pytest.raises(TypeError, match="bf16"):
        _precision.resolve_bf16("yes", "BridgeConfig")  # type: ignore[arg-type]


def test_cache_key_holds_the_precision_run(monkeypatch):
    monkeypatch.setattr("shnap._weights.native_bf16", lambda: False)
    assert _key(BridgeConfig()) == _key(BridgeConfig(bf16=False))
    assert _key(BridgeConfig()) != _key(BridgeConfig(bf16=True))


def test_autocast_off_keeps_float32():
    lin = torch.nn.Linear(4, 4)
    with _precision.autocast(False):
        assert lin(torch.ones(1, 4)).dtype == torch.float32
    with _precision.autocast(True):
        assert lin(torch.ones(1, 4)).dtype == torch.bfloat16
