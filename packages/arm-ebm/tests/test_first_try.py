"""What a new user meets first: bad samples named as `samples`, progress bars, a light import."""

from __future__ import annotations

import numpy as np
import pytest

import arm_ebm as ae
from icml26_shared.testing import assert_import_is_light, terminal_stderr


@pytest.mark.parametrize(
    ("samples", "error", "match"),
    [
        (np.array([0.0, 1.0, 2.0]), TypeError, r"samples must be a 1-D integer array of indices"),
        (np.array([[0.5, 1.0]]), TypeError, r"samples must hold integer token ids, got dtype"),
        ([(0, 5)], ValueError, r"samples\[0\] must hold token ids in \[0, 3\)"),
        ([(0, 1)], ValueError, r"samples\[0\] is incomplete"),
        ("abc", TypeError, r"samples\[0\] must hold integer token ids, got 'a'"),
        ([], ValueError, r"samples must not be empty"),
    ],
)
def test_fit_mle_names_its_argument_samples(samples, error, match):
    # fit_mle(np.array([0., 1., 2.]), space) used to name an argument "sequences"
    space = ae.SequenceSpace(vocab_size=3, max_len=4, eos=2)
    with pytest.raises(error, match=match):
        ae.fit_mle(samples, space)


def test_other_functions_still_name_sequences():
    space = ae.SequenceSpace(vocab_size=3, max_len=4, eos=2)
    with pytest.raises(ValueError, match=r"sequences\[0\] is incomplete"):
        ae.log_prob_arm(np.zeros(space.shape), space, [(0, 1)])


def test_import_loads_no_scipy_stats_sklearn_matplotlib_or_jax():
    assert_import_is_light("arm_ebm", ["scipy.stats", "sklearn", "matplotlib", "jax"])


@pytest.mark.parametrize(("progress", "tty", "shown"), [
    (None, True, True), (None, False, False), (False, True, False), (True, False, True),
])  # fmt: skip
def test_distill_progress_bar_defaults_to_the_terminal(x64, monkeypatch, progress, tty, shown):
    space = ae.SequenceSpace(2, 2)
    err = terminal_stderr(monkeypatch, tty=tty)
    ae.distill(np.zeros(space.shape), space, hidden=2, steps=3, progress=progress)
    assert ("MLP" in err.getvalue()) is shown
