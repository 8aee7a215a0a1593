"""What a new user meets first: the README's example, bad inputs named, a light import."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from dlpt import DLPT
from dlpt.data import simulate_rct
from icml26_shared.testing import assert_import_is_light

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_first_example_runs_verbatim(capsys):
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # q = K - 1, stated in the README
        exec(compile(code, str(README), "exec"), {})
    out = capsys.readouterr().out
    assert re.search(r"V\(1\.1\): 3\.9\d\d ± 0\.0\d\d, truth 3\.970", out)


def test_import_loads_no_scipy_stats_sklearn_or_matplotlib():
    assert_import_is_light("dlpt", ["scipy.stats", "sklearn", "matplotlib"])


@pytest.mark.parametrize("hidden", [32, "32", 32.0, None])
def test_hidden_as_a_single_number_is_named(hidden):
    # DLPT(hidden=32) used to fail with "'int' object is not iterable"
    with pytest.raises(ValueError, match=r"hidden must be a sequence of layer widths .*got"):
        DLPT(hidden=hidden)


@pytest.fixture(scope="module")
def fitted():
    data = simulate_rct(300, seed=0)
    model = DLPT(degree=1, hidden=(4,), folds=2, epochs=3, seed=0)
    return model.fit(data.X, data.t, data.y, data.arms, data.probs), data


def test_learn_policy_hidden_as_a_number_is_named(fitted):
    with pytest.raises(ValueError, match=r"hidden must be a sequence of layer widths"):
        fitted[0].learn_policy(hidden=8)


def test_value_of_an_array_of_doses_equals_the_same_policy_as_a_callable(fitted):
    model, data = fitted
    doses = np.linspace(0.7, 1.3, len(data.y))
    by_array = model.value(doses)  # used to raise "only 0-dimensional arrays can be converted"
    by_callable = model.value(lambda X: doses)
    assert by_array.v == by_callable.v and by_array.se == by_callable.se
    assert model.value(np.full(len(data.y), 1.1)).v == model.value(1.1).v
    assert model.contrast(doses, 1.1).v == model.contrast(lambda X: doses, 1.1).v


@pytest.mark.parametrize(
    ("policy", "match"),
    [
        (
            np.full(5, 1.1),
            r"policy as an array must hold the doses of the 300 training units .*\(5,\)",
        ),
        (np.full((300, 1), 1.1), r"policy must be a callable .* got ndarray of shape \(300, 1\)"),
        (np.array(["a"] * 300), r"policy as an array .* dtype <U1"),
        ("1.1", r"policy must be a callable .* got str"),
        (None, r"policy must be a callable X -> doses \(n,\) or a constant dose, got NoneType"),
        (np.full(300, np.nan), r"policy must be finite"),
    ],
)
def test_bad_policies_are_named(fitted, policy, match):
    with pytest.raises(ValueError, match=match):
        fitted[0].value(policy)
