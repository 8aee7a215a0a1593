"""Public API and bad-input messages."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import gse_flow as g

EXPECTED = [
    "EGNN", "PRIOR_NOISES", "PROTOCOLS", "SOLVERS", "EquivariantGNN", "GSEFlow", "Graph",
    "HistoryCache", "NoiseFit", "Protocol", "TrainResult", "Windows", "bond_length_w1",
    "centered_noise", "cfm_loss", "check_equivariance", "constant_velocity", "correlate_noise",
    "count_parameters", "data_mesh", "energy_score", "enhance", "evaluate", "fit_noise",
    "flow_config", "flow_matching_loss", "fully_connected_edges", "integrate", "lj13_trajectory",
    "lj13_windows", "load_md17", "load_mocap", "make_graph", "make_windows", "md_windows",
    "mocap_positions", "mse_loss", "nbody_windows", "noise_pass_through", "noisy_samples",
    "out_of_fold", "parse_amc", "parse_asf", "predict", "prior_scale", "radius_edges", "sample",
    "sample_from_noise", "select_temperature", "shard_batch", "spread_skill", "toy_md",
    "toy_md_windows", "train", "train_step", "trajectory_windows", "window_scores",
]  # fmt: skip


def test_all_is_exact():
    assert g.__all__ == EXPECTED
    for name in EXPECTED:
        assert hasattr(g, name)


def test_history_needs_two_frames():
    with pytest.raises(ValueError, match=r"history must have >= 2 frames \(H\), got 1"):
        g.make_windows(np.zeros((2, 1, 3, 3)), np.zeros((2, 4, 3, 3)))
    with pytest.raises(ValueError, match="n_history must be an integer >= 2, got 1"):
        g.GSEFlow(n_history=1, key=jax.random.PRNGKey(0))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_coordinates(bad):
    h = np.zeros((2, 3, 3, 3))
    h[1, 2, 0, 1] = bad
    with pytest.raises(ValueError, match=r"history must be finite, got .* at index"):
        g.make_windows(h, np.zeros((2, 4, 3, 3)))


def test_edge_index_out_of_range():
    with pytest.raises(ValueError, match=r"edges must index nodes in \[0, 2\], got range \[0, 3\]"):
        g.make_graph(np.array([[0, 3], [1, 0]]), 3)
    with pytest.raises(ValueError, match=r"edges must be an integer array of shape \(2, E\)"):
        g.make_graph(np.zeros((3, 2), int), 3)


def test_sampler_arguments(light_model, tiny_windows):
    h = tiny_windows.history[0]
    key = jax.random.PRNGKey(0)
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        g.sample(light_model, h, key, k=0)
    with pytest.raises(ValueError, match="n_steps must be an integer >= 1, got 0"):
        g.sample(light_model, h, key, n_steps=0)
    with pytest.raises(ValueError, match="solver must be one of 'euler', 'heun', got 'rk4'"):
        g.sample(light_model, h, key, solver="rk4")
    with pytest.raises(ValueError, match="history must have 3 frames"):
        g.sample(light_model, tiny_windows.history[0, :2], key)
    with pytest.raises(ValueError, match="solver must be one of"):
        g.integrate(lambda x, t: x, np.zeros(3), solver="midpoint")


def test_unknown_protocol_and_prior():
    with pytest.raises(
        ValueError, match="protocol must be one of 'geotdm', 'eqmotion', 'egno', got 'x'"
    ):
        g.trajectory_windows(np.zeros((500, 3, 3)), np.ones((3, 1)), None, protocol="x")
    with pytest.raises(ValueError, match="prior must be one of 'last', 'cv', got 'zero'"):
        g.GSEFlow(prior="zero", key=jax.random.PRNGKey(0))


def test_window_longer_than_trajectory():
    with pytest.raises(
        ValueError, match=r"window .* must fit in every split .* needs >= 1500 frames, got 200"
    ):
        g.trajectory_windows(np.zeros((200, 3, 3)), np.ones((3, 1)), g.fully_connected_edges(3))


def test_md17_bad_files(tmp_path):
    p = tmp_path / "bad.npz"
    np.savez(p, R=np.zeros((10, 3, 3)))
    with pytest.raises(ValueError, match=r"bad\.npz must contain key 'z', got keys"):
        g.load_md17(p)
    np.savez(p, R=np.zeros((10, 3, 3)), z=np.ones(4))
    with pytest.raises(
        ValueError, match="R and z must agree on N atoms, got R with 3 and z with 4"
    ):
        g.load_md17(p)
    R = np.zeros((10, 3, 3))
    R[4, 1, 1] = np.nan
    np.savez(p, R=R, z=np.ones(3))
    with pytest.raises(ValueError, match="R must be finite"):
        g.load_md17(p)


def test_constant_velocity_and_enhance_checks():
    with pytest.raises(ValueError, match="history must have >= 2 frames"):
        g.constant_velocity(np.zeros((1, 4, 3)), 3)
    w = g.nbody_windows(4, n_history=3, n_future=4, n_particles=3)
    with pytest.raises(TypeError, match="baseline_fn must be callable, got int"):
        g.enhance(3, w)
    with pytest.raises(ValueError, match="baseline_fn\\(windows\\) must have shape"):
        g.enhance(lambda ww: np.zeros((4, 2, 3, 3)), w)
