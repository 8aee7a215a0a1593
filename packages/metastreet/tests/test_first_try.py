"""A new user's needs: a light import, save/load of a fitted model, progress on a terminal."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml26_shared.testing import assert_import_is_light, terminal_stderr
from metastreet import MetaStreet, make_city

SMALL = dict(epochs=6, hidden=16, d=16, heads=2, head_dim=8, n_categories=12)


@pytest.fixture(scope="module")
def city():
    return make_city(6, seed=3, images_per_street=(1, 3), split=(0.2, 0.2))


@pytest.fixture(scope="module")
def fitted(city):
    return MetaStreet(4, w=0.5, progress=False, **SMALL).fit(city, seed=0)


def test_import_loads_no_scipy_stats_sklearn_or_matplotlib():
    assert_import_is_light("metastreet", ["scipy.stats", "sklearn", "matplotlib"])


def test_save_load_round_trip(fitted, city, tmp_path):
    path = tmp_path / "model.pt"
    fitted.save(path)
    loaded = MetaStreet.load(path)
    np.testing.assert_array_equal(loaded.predict_logits(), fitted.predict_logits())
    assert loaded.evaluate(city) == fitted.evaluate(city)
    assert (loaded.w_, loaded.val_f1_, loaded.history_) == (
        fitted.w_,
        fitted.val_f1_,
        fitted.history_,
    )
    np.testing.assert_array_equal(loaded.state_vector(), fitted.state_vector())
    assert loaded._settings() == fitted._settings()


def test_save_before_fit_is_refused(tmp_path):
    with pytest.raises(RuntimeError, match="call fit"):
        MetaStreet(4).save(tmp_path / "m.pt")


def test_load_names_a_bad_file(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"garbage")
    with pytest.raises(ValueError, match=r"path '.*bad\.pt' is not a readable MetaStreet file"):
        MetaStreet.load(bad)
    torch.save({"state": {}}, bad)
    with pytest.raises(
        ValueError, match=r"path '.*bad\.pt' must be a file written by MetaStreet.save"
    ):
        MetaStreet.load(bad)
    with pytest.raises(FileNotFoundError, match=r"nope\.pt"):
        MetaStreet.load(tmp_path / "nope.pt")


# progress=None: a bar on a terminal, and (issue 66) a start and an end line when piped
@pytest.mark.parametrize(("progress", "tty", "shown"), [
    (None, True, True), (None, False, True), (False, True, False), (True, False, True),
])  # fmt: skip
def test_fit_progress_bar_defaults_to_the_terminal(city, monkeypatch, progress, tty, shown):
    err = terminal_stderr(monkeypatch, tty=tty)
    MetaStreet(4, w=0.5, progress=progress, **{**SMALL, "epochs": 2}).fit(city, seed=0)
    assert ("w=0.5" in err.getvalue()) is shown


@pytest.mark.slow  # a 40-epoch fit on 180 streets
def test_readme_first_example_runs_verbatim(capsys):
    import re
    from pathlib import Path

    readme = Path(__file__).resolve().parents[1] / "README.md"
    code = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)[0]
    exec(compile(code, str(readme), "exec"), {})
    out = capsys.readouterr().out
    assert "Moran's I of labels:" in out
