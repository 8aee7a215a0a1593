"""What a new user meets first: the README's example, bad inputs, progress bars, import cost."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from icml26_shared.testing import terminal_stderr
from r4_rl import Rater, RewardModel, fit_r4, soft_rank
from r4_rl.baselines import fit_bt, fit_rbrl, fit_regression
from r4_rl.data import gridworld_pool
from r4_rl.envs import GridWorld

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow
def test_readme_first_example_runs_verbatim(capsys):
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    exec(compile(code, str(README), "exec"), {})
    lines = capsys.readouterr().out.split("\n")
    assert lines[0] == "tensor([1.9333, 2.7833, 1.2833])"
    assert float(lines[1]) > 0.9  # Kendall tau held out
    assert float(lines[2]) > 4.0  # true return of the plan (optimum 5.06)


@pytest.mark.parametrize("reference", [np.ones(10), np.array([0.0] * 9 + [1.0])])
def test_rater_refuses_a_reference_pool_without_distinct_quantiles(reference):
    # a constant pool used to rate [0.5, 1.0, 2.0] as [0, 4, 4] without a word
    with pytest.raises(ValueError, match=r"reference_returns must give 4 increasing quantile"):
        Rater(n_bins=5, noise=0.0).fit(reference)


def test_rater_with_explicit_edges_needs_no_varied_pool():
    rater = Rater(n_bins=3, noise=0.0, edges=[0.0, 1.5]).fit(np.ones(10))
    assert rater.rate(np.array([-1.0, 1.0, 2.0])).tolist() == [0, 1, 2]


@pytest.fixture(scope="module")
def small():
    env = GridWorld()
    trajs, g = gridworld_pool(env, 30, seed=0)
    return env, trajs, g


@pytest.mark.parametrize("fit", [fit_r4, fit_rbrl, fit_regression])
def test_constant_ratings_are_named_not_n_bins(small, fit):
    env, trajs, _ = small
    model = RewardModel(env.observation_space, env.action_space, seed=0)
    with pytest.raises(
        ValueError, match="ratings must hold at least two distinct ratings, got only 0"
    ):
        fit(model, trajs, np.zeros(30, int), epochs=1)


@pytest.mark.parametrize("n_bins", [1, 2.5, True])
def test_bad_n_bins_is_named(small, n_bins):
    env, trajs, _ = small
    model = RewardModel(env.observation_space, env.action_space, seed=0)
    with pytest.raises(ValueError, match=r"n_bins must be an integer >= 2, got"):
        fit_r4(model, trajs, np.arange(30) % 2, epochs=1, n_bins=n_bins)


def test_float64_model_trains_in_float64(small):
    env, trajs, g = small
    ratings = np.digitize(g, np.quantile(g, [1 / 3, 2 / 3]))
    model = RewardModel(env.observation_space, env.action_space, seed=0).double()
    assert model.dtype == torch.float64
    for fit in (fit_r4, fit_rbrl, fit_regression):
        res = fit(model, trajs, ratings, epochs=2)
        assert np.isfinite(res.losses).all()
    pairs = np.stack([np.arange(29), np.arange(1, 30)], axis=1)
    res = fit_bt(model, trajs, pairs, (g[:-1] > g[1:]).astype(float), epochs=2)
    assert np.isfinite(res.losses).all()
    assert model.returns(trajs).dtype == torch.float64
    assert model.step_rewards(trajs.obs[0].numpy(), trajs.acts[0].numpy()).dtype == np.float64


def test_soft_rank_of_a_meta_tensor_is_refused():
    with pytest.raises(ValueError, match=r"v must hold data .* got device 'meta'"):
        soft_rank(torch.zeros(3, device="meta"))


@pytest.mark.parametrize(("progress", "tty", "shown"), [
    (None, True, True), (None, False, True), (False, True, False), (True, False, True),
])  # fmt: skip
def test_training_progress_bar_defaults_to_the_terminal(small, monkeypatch, progress, tty, shown):
    """``None``: a bar on a terminal, a start and an end line when piped; ``False``: silent."""
    env, trajs, _ = small
    err = terminal_stderr(monkeypatch, tty=tty)
    model = RewardModel(env.observation_space, env.action_space, seed=0)
    fit_r4(model, trajs, np.arange(30) % 3, epochs=2, progress=progress)
    assert ("R4" in err.getvalue()) is shown
    if progress is None and not tty:  # piped: plain lines, no bar
        assert "R4:" in err.getvalue() and "done in" in err.getvalue()
