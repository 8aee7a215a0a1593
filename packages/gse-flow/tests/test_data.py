"""Data generators, protocols and loaders (acceptance item 9)."""

from __future__ import annotations

import numpy as np
import pytest

import gse_flow as g

ASF = """# tiny 3-bone skeleton
:version 1.10
:name tiny
:units
  length 1.0
:root
  order TX TY TZ RX RY RZ
  axis XYZ
  position 0 0 0
  orientation 0 0 0
:bonedata
  begin
    id 1
    name lhip
    direction 0 -1 0
    length 2.0
    axis 0 0 20 XYZ
    dof rx ry rz
  end
  begin
    id 2
    name lknee
    direction 0.6 -0.8 0
    length 1.5
    axis 10 0 0 XYZ
    dof rx
  end
  begin
    id 3
    name spine
    direction 0 1 0
    length 1.2
    axis 0 30 0 XYZ
    dof rx rz
  end
:hierarchy
  begin
    root lhip spine
    lhip lknee
  end
"""


def _amc(n_frames: int, rng: np.random.Generator) -> str:
    lines = [":FULLY-SPECIFIED", ":DEGREES"]
    for t in range(1, n_frames + 1):
        lines.append(str(t))
        lines.append("root " + " ".join(f"{v:.4f}" for v in rng.uniform(-30, 30, 6)))
        lines.append("lhip " + " ".join(f"{v:.4f}" for v in rng.uniform(-60, 60, 3)))
        lines.append("lknee " + f"{rng.uniform(-90, 0):.4f}")
        lines.append("spine " + " ".join(f"{v:.4f}" for v in rng.uniform(-40, 40, 2)))
    return "\n".join(lines) + "\n"


def test_nbody_windows_shapes():
    w = g.nbody_windows(6, seed=1)
    assert w.history.shape == (6, 10, 5, 3)
    assert w.future.shape == (6, 20, 5, 3)
    assert set(np.unique(w.node_attr)) <= {-1.0, 1.0}
    assert w.edges.shape == (2, 20)
    # history and future continue one trajectory: the first future step is a small move
    gap = np.linalg.norm(w.future[:, 0] - w.history[:, -1], axis=-1).mean()
    assert gap < 0.2


def test_toy_md_bonds_stay_near_length_one():
    pos, z, edges = g.toy_md(2, 20, seed=0)
    assert pos.shape == (2, 20, 21, 3) and z.shape == (21,)
    assert np.isfinite(pos).all()
    d = np.linalg.norm(pos[:, :, edges[0]] - pos[:, :, edges[1]], axis=-1)
    assert 0.8 < d.mean() < 1.2 and d.max() < 1.6


def test_md17_window_counts_match_protocol(tmp_path, rng):
    T, N = 200, 6
    R = np.cumsum(0.01 * rng.standard_normal((T, N, 3)), axis=0) + 1.2 * np.arange(N)[None, :, None]
    np.savez(tmp_path / "mol.npz", R=R, z=np.array([6, 6, 8, 1, 1, 1]))
    proto = g.Protocol(3, 2, 2, caps=(30, 5, 100))
    windows, frames = g.load_md17(tmp_path / "mol.npz", protocol=proto, cutoff=1.5)
    bounds = proto.bounds(T)
    assert bounds == [(0, 120), (120, 160), (160, 200)]
    expected = [
        min(cap, int(np.ceil((b - a) / 2)) - 5 + 1) for (a, b), cap in zip(bounds, (30, 5, 100))
    ]
    assert [windows[s].n_windows for s in ("train", "val", "test")] == expected == [30, 5, 16]
    for s, (a, b) in zip(("train", "val", "test"), bounds):
        assert frames[s].min() >= a and frames[s].max() < b  # no window crosses a split
        assert np.all(np.diff(frames[s], axis=1) == 2)
        np.testing.assert_allclose(windows[s].history[0], R[frames[s][0, :3]], rtol=1e-6)
    assert windows["train"].node_attr.shape == (30, N, 1)


def test_mocap_bone_lengths_constant(tmp_path, rng):
    (tmp_path / "tiny.asf").write_text(ASF)
    (tmp_path / "tiny.amc").write_text(_amc(5, rng))
    skel = g.parse_asf(ASF)
    pos, edges = g.mocap_positions(skel, g.parse_amc(_amc(5, rng)))
    assert pos.shape == (5, 4, 3)
    lengths = np.linalg.norm(pos[:, edges[0, :3]] - pos[:, edges[1, :3]], axis=-1)
    np.testing.assert_allclose(lengths, np.broadcast_to([2.0, 1.2, 1.5], (5, 3)), atol=1e-6)
    assert np.ptp(lengths, axis=0).max() <= 1e-6
    # the root moves between frames, so this is not a static skeleton
    assert np.ptp(pos[:, 0], axis=0).max() > 1.0


def test_load_mocap_npz_and_asf(tmp_path, rng):
    pos = rng.standard_normal((120, 4, 3))
    np.savez(tmp_path / "walk.npz", positions=pos)
    proto = g.Protocol(2, 2, 1)
    windows, _ = g.load_mocap(tmp_path / "walk.npz", protocol=proto)
    assert [windows[s].n_windows for s in ("train", "val", "test")] == list(proto.n_windows(120))
    (tmp_path / "tiny.asf").write_text(ASF)
    (tmp_path / "tiny.amc").write_text(_amc(50, rng))
    windows, _ = g.load_mocap(tmp_path / "tiny.asf", tmp_path / "tiny.amc", protocol=proto)
    assert windows["train"].history.shape[1:] == (2, 4, 3)
    with pytest.raises(ValueError, match="amc_path must be given"):
        g.load_mocap(tmp_path / "tiny.asf")
    np.savez(tmp_path / "bad.npz", xyz=pos)
    with pytest.raises(ValueError, match="must contain key 'positions'"):
        g.load_mocap(tmp_path / "bad.npz")
