"""What a new user meets first: the quickstart, training messages and bars, bad cache files,
NaN game values, a light import."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26_shared.testing import assert_import_is_light, terminal_stderr
from shnap import (
    Bridge,
    BridgeConfig,
    CNNConfig,
    DDPMConfig,
    RePaint,
    TrainConfig,
    exact_sv_sii,
    lmpi_fit,
    train_risk_cnn,
)

README = Path(__file__).resolve().parents[1] / "README.md"
TINY_CNN = CNNConfig(n_cases=16, epochs=1, batch_size=8)
TINY_BRIDGE = (
    TrainConfig(n_crops=8, steps=2, batch_size=4, n_pair_phantoms=2, n_mask_phantoms=2),
    BridgeConfig(steps=2),
)


@pytest.mark.slow
def test_readme_quickstart_runs_verbatim(capsys):
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    scope: dict = {}
    exec(compile(code, str(README), "exec"), scope)
    err = capsys.readouterr().err
    assert "shnap: training" not in err  # the quickstart's CNN and bridge ship trained
    assert scope["record"].get("shipped") and scope["bridge"].record.get("shipped")
    assert np.isfinite(scope["att"].phi).all() and np.isfinite(scope["fit"].slope)


def test_import_loads_no_scipy_stats_sklearn_or_matplotlib():
    assert_import_is_light("shnap", ["scipy.stats", "sklearn", "matplotlib"])


@pytest.mark.parametrize("fn", [exact_sv_sii, lmpi_fit])
def test_nan_game_values_are_refused(fn):
    # both used to return NaN without a word
    with pytest.raises(ValueError, match=r"values must be finite, got nan at coalition 2"):
        fn(np.array([0.0, 1.0, np.nan, 2.0]))


def _corrupt(path: Path) -> None:
    path.write_bytes(b"\x00 not a torch file")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SHNAP_CACHE", str(tmp_path))
    return tmp_path


def test_corrupt_cnn_cache_is_named_and_retrained(cache):
    train_risk_cnn(TINY_CNN, progress=False)
    (path,) = cache.glob("riskcnn-*.pt")
    _corrupt(path)
    with pytest.warns(
        UserWarning, match=rf"{re.escape(path.name)}.*not a readable torch file.*retraining"
    ):
        again, record = train_risk_cnn(TINY_CNN, progress=False)
    assert not record["cached"]
    loaded, record = train_risk_cnn(TINY_CNN, progress=False)  # overwritten, readable
    assert record["cached"]
    x = torch.zeros(1, 1, 32, 32, 32)
    torch.testing.assert_close(loaded(x), again(x))


def test_corrupt_bridge_cache_is_named_and_retrained(cache):
    Bridge.pretrained(*TINY_BRIDGE, progress=False)
    (path,) = cache.glob("bridge-*.pt")
    torch.save({"state": {}}, path)  # a torch file without a config
    with pytest.warns(
        UserWarning, match=rf"{re.escape(path.name)}.*holds no \['config'\].*retraining"
    ):
        assert not Bridge.pretrained(*TINY_BRIDGE, progress=False).record["cached"]
    assert Bridge.pretrained(*TINY_BRIDGE, progress=False).record["cached"]


def test_corrupt_repaint_cache_is_named_and_retrained(cache):
    cfg = DDPMConfig(train_steps=2, batch_size=4, steps=2)
    RePaint.pretrained(cfg, n_crops=8, progress=False)
    (path,) = cache.glob("repaint-*.pt")
    _corrupt(path)
    with pytest.warns(UserWarning, match=rf"{re.escape(path.name)}.*retraining"):
        assert not RePaint.pretrained(cfg, n_crops=8, progress=False).record["cached"]


def test_bridge_load_names_the_file_and_the_fault(tmp_path):
    bad = tmp_path / "bad.pt"
    _corrupt(bad)
    with pytest.raises(ValueError, match=r"bridge file '.*bad\.pt' is not a readable torch file"):
        Bridge.load(bad)
    torch.save({"state": {}}, bad)
    with pytest.raises(ValueError, match=r"bridge file '.*bad\.pt' holds no \['config'\]"):
        Bridge.load(bad)
    torch.save({"state": {"w": torch.zeros(1)}, "config": {"widths": [8, 16, 32]}}, bad)
    with pytest.raises(ValueError, match=r"bridge file '.*bad\.pt' does not match"):
        Bridge.load(bad)
    with pytest.raises(FileNotFoundError, match=r"bridge file '.*nope\.pt' does not exist"):
        Bridge.load(tmp_path / "nope.pt")


@pytest.mark.parametrize(("progress", "tty", "message", "bar"), [
    (None, True, True, True), (None, False, True, False), (False, True, False, False),
    (True, False, True, True),
])  # fmt: skip
def test_training_says_so_and_shows_a_bar_on_a_terminal(
    cache, monkeypatch, progress, tty, message, bar
):
    err = terminal_stderr(monkeypatch, tty=tty)
    train_risk_cnn(TINY_CNN, progress=progress)
    text = err.getvalue()
    assert (
        "shnap: training the risk CNN (zeros padding, 16 phantoms, 1 epochs)" in text
    ) is message
    assert ("it/s" in text or "s/it" in text) is bar
    err.truncate(0)
    train_risk_cnn(TINY_CNN, progress=progress)  # cached: no message, no bar
    assert err.getvalue().strip("\x00") == ""


def test_progress_callback_gets_every_step(cache):
    done = []
    Bridge.pretrained(*TINY_BRIDGE, progress=done.append)
    assert sum(done) == 2 * TINY_BRIDGE[0].steps  # two networks


def test_bad_progress_is_named(cache):
    with pytest.raises(TypeError, match="progress must be None, a bool or a callable"):
        train_risk_cnn(TINY_CNN, progress="yes")
