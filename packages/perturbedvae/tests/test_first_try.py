"""What a new user meets first: the README's example, bad files and inputs, progress, imports."""

from __future__ import annotations

import dataclasses
import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from icml26_shared.testing import assert_import_is_light, terminal_stderr
from perturbedvae import PerturbedVAE
from perturbedvae.data import read_screen, simulate_screen

anndata = pytest.importorskip("anndata")

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow
def test_readme_first_example_runs_verbatim(capsys):
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    exec(compile(code, str(README), "exec"), {})
    out = capsys.readouterr().out
    assert "(2, 100) (2, 500, 100)" in out


def test_import_loads_no_scipy_stats_sklearn_matplotlib_or_anndata():
    assert_import_is_light("perturbedvae", ["scipy.stats", "sklearn", "matplotlib", "anndata"])


@pytest.mark.parametrize(
    "content",
    [b"not an hdf5 file\n", b"\x89HDF\r\n\x1a\n" + b"\x00" * 40],  # text; truncated HDF5 header
)
def test_read_screen_names_a_corrupt_file(tmp_path, content):
    path = tmp_path / "screen.h5ad"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"source '.*screen\.h5ad' is not a readable \.h5ad"):
        read_screen(path)


def test_read_screen_names_a_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"source must be an existing .*nope\.h5ad"):
        read_screen(tmp_path / "nope.h5ad")


@pytest.fixture(scope="module")
def small():
    return simulate_screen(n_cells=10, n_controls=40, n_doubles=2, n_mc=100, seed=0)


@pytest.fixture(scope="module")
def counts():
    return simulate_screen(n_cells=10, n_controls=40, n_doubles=2, noise="poisson", n_mc=20)


def test_nb_on_non_integer_x_warns(counts):
    lognorm = dataclasses.replace(counts.train, X=np.log1p(counts.train.X), counts=False)
    model = PerturbedVAE(100, 12, likelihood="nb", hidden=8)
    with pytest.warns(UserWarning, match=r"screen\.X holds non-integer values .*likelihood='nb'"):
        model.fit(lognorm, epochs=1)


def test_nb_on_counts_does_not_warn(counts):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        PerturbedVAE(100, 12, likelihood="nb", hidden=8).fit(counts.train, epochs=1)


def _adata(screen, key="condition"):
    adata = anndata.AnnData(screen.X, obs={key: list(screen.conditions)})
    adata.var_names = list(screen.genes)
    return adata


def test_fit_takes_an_anndata_like_its_screen(small):
    from_screen = PerturbedVAE(100, 12, hidden=8).fit(small.train, epochs=2, seed=0)
    from_adata = PerturbedVAE(100, 12, hidden=8).fit(_adata(small.train), epochs=2, seed=0)
    assert from_adata.perturbations == from_screen.perturbations
    np.testing.assert_allclose(from_adata.history, from_screen.history, rtol=1e-6)
    np.testing.assert_allclose(
        from_adata.background(_adata(small.test)), from_screen.background(small.test), rtol=1e-6
    )


def test_fit_on_an_anndata_without_the_condition_column_says_what_to_do(small):
    with pytest.raises(
        ValueError, match=r"condition_key 'condition' is not an obs column.*read_screen\(adata"
    ):
        PerturbedVAE(100, 12, hidden=8).fit(_adata(small.train, key="perturbation"), epochs=1)


def test_fit_refuses_other_types_naming_both_accepted():
    with pytest.raises(TypeError, match="Screen or an AnnData, got ndarray"):
        PerturbedVAE(100, 12).fit(np.zeros((3, 100)))


@pytest.mark.parametrize(("progress", "tty", "shown"), [
    (None, True, True), (None, False, False), (False, True, False), (True, False, True),
])  # fmt: skip
def test_fit_progress_bar_defaults_to_the_terminal(small, monkeypatch, progress, tty, shown):
    err = terminal_stderr(monkeypatch, tty=tty)
    PerturbedVAE(100, 12, hidden=8).fit(small.train, epochs=1, progress=progress)
    assert ("PerturbedVAE" in err.getvalue()) is shown
