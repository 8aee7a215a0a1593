"""What a new user meets first: the README's example, a training bar on a terminal, the import."""

from __future__ import annotations

import re
from pathlib import Path

import jax
import optax
import pytest

import gse_flow as g
from icml26_shared.testing import assert_import_is_light, terminal_stderr

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow
def test_readme_first_example_runs_verbatim(capsys):
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    exec(compile(code, str(README), "exec"), {})
    assert "ade" in capsys.readouterr().out.lower()


def test_import_loads_no_sklearn_or_matplotlib():
    # scipy.stats comes with e3nn-jax (through scipy.signal), which the layers are built on
    assert_import_is_light("gse_flow", ["sklearn", "matplotlib"])


# None: a bar on a terminal, a start and an end line when stderr is piped; False: silent
@pytest.mark.parametrize(("progress", "tty", "shown"), [
    (None, True, True), (None, False, True), (False, True, False), (True, False, True),
])  # fmt: skip
@pytest.mark.slow  # each train call compiles the model (about 25 s)
def test_train_progress_bar_defaults_to_the_terminal(
    light_model, tiny_windows, monkeypatch, progress, tty, shown
):
    err = terminal_stderr(monkeypatch, tty=tty)
    g.train(
        light_model, tiny_windows, optax.adam(1e-3), 2, key=jax.random.PRNGKey(0),
        batch_size=8, progress=progress,
    )  # fmt: skip
    assert ("train" in err.getvalue()) is shown
    if progress is None and not tty:  # piped: lines, not a bar's carriage returns
        assert "\r" not in err.getvalue() and err.getvalue().count("\n") == 2


@pytest.mark.parametrize("loader", [g.load_md17, g.load_mocap])
def test_loaders_name_a_bad_file(loader, tmp_path):
    bad = tmp_path / "traj.npz"
    bad.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(ValueError, match=r"path '.*traj\.npz' is not a readable \.npz archive"):
        loader(bad)
    with pytest.raises(FileNotFoundError, match=r"nope\.npz"):
        loader(tmp_path / "nope.npz")
