"""The shipped MD trajectories: checksums and shapes, blocks of time, physics against reference
values, corrupted copies refused, the bond-length W1 against its definition, the generator."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import wasserstein_distance

import gse_flow as g
from gse_flow.md import DATA_DIR, MANIFEST, MOLECULES, bond_lengths, md_trajectory


@pytest.mark.parametrize("molecule", MOLECULES)
def test_shipped_trajectories_verify_and_carry_their_provenance(molecule):
    t = md_trajectory(molecule)
    x, z, b, meta = t["positions"], t["atomic_numbers"], t["bonds"], t["metadata"]
    assert x.dtype == np.float32 and x.ndim == 3 and x.shape[0] >= 3000
    assert z.shape == (x.shape[1],) and b.shape[1] == 2
    assert meta["timestep_fs"] == 0.5 and meta["frame_spacing_fs"] == 5.0
    assert meta["thermostat"] == "Langevin" and meta["seed"] == 0
    if molecule == "alanine_dipeptide":
        assert meta["engine"] == "openmm" and meta["temperature_k"] == 300.0
        assert "ff14SB" in meta["level_of_theory"] and "GBn2" in meta["level_of_theory"]
        assert x.shape[1] == 22 and len(b) == 21  # ACE-ALA-NME with hydrogens: a tree
    else:
        assert meta["engine"] == "tblite" and meta["temperature_k"] == 500.0
        assert "GFN2-xTB" in meta["level_of_theory"]
    # every atom is bonded, the bond graph is connected (one molecule)
    reach, frontier = {0}, {0}
    while frontier:
        frontier = {int(j) for i, j in np.concatenate([b, b[:, ::-1]]) if i in frontier} - reach
        reach |= frontier
    assert reach == set(range(x.shape[1]))


def _mean_length(molecule: str, za: int, zb: int) -> float:
    t = md_trajectory(molecule)
    z, b = t["atomic_numbers"], t["bonds"]
    pick = [(z[i], z[j]) in ((za, zb), (zb, za)) for i, j in b]
    return float(bond_lengths(t["positions"], b[np.array(pick)]).mean())


@pytest.mark.parametrize(
    ("molecule", "pair", "lo", "hi"),
    [  # mean bond lengths (Å) against textbook values (C–H 1.09, O–H 0.96, C–C 1.40–1.53, C–O 1.43)
        ("ethanol", (6, 1), 1.08, 1.13),
        ("ethanol", (8, 1), 0.95, 1.00),
        ("ethanol", (6, 8), 1.40, 1.47),
        ("toluene", (6, 6), 1.38, 1.45),
        ("naphthalene", (6, 6), 1.38, 1.45),
        ("alanine_dipeptide", (6, 1), 1.08, 1.12),
        ("alanine_dipeptide", (6, 7), 1.32, 1.48),
    ],
)
def test_bond_lengths_match_reference_values(molecule, pair, lo, hi):
    assert lo < _mean_length(molecule, *pair) < hi


def test_alanine_dipeptide_is_l_alanine_with_trans_peptides():
    t = md_trajectory("alanine_dipeptide")
    x = t["positions"][::100].astype(np.float64)
    # atom order of the generator: ACE CH3 H H H C O, ALA N H CA HA C O CB HB×3, NME N H C H×3
    n, ca, c, cb = x[:, 6], x[:, 8], x[:, 10], x[:, 12]
    vol = np.einsum("ij,ij->i", np.cross(c - ca, cb - ca), n - ca)
    assert np.all(vol > 0)  # L: looking down H→CA, CO → R → N runs clockwise

    def dihedral(a, b, c_, d):
        b1 = c_ - b
        b1 /= np.linalg.norm(b1, axis=-1, keepdims=True)
        v = (a - b) - np.sum((a - b) * b1, -1, keepdims=True) * b1
        w = (d - c_) - np.sum((d - c_) * b1, -1, keepdims=True) * b1
        return np.degrees(np.arctan2(np.sum(np.cross(b1, v) * w, -1), np.sum(v * w, -1)))

    omega = dihedral(x[:, 0], x[:, 4], n, ca)  # CH3–C–N–CA of the acetyl cap
    assert np.all(np.abs(omega) > 140.0)


@pytest.mark.parametrize("molecule", ["ethanol", "alanine_dipeptide"])
def test_md_windows_are_blocks_of_time(molecule):
    windows, frames = g.md_windows(molecule)
    T = md_trajectory(molecule)["positions"].shape[0]
    p = g.Protocol(10, 20, 1)
    assert tuple(windows[s].n_windows for s in ("train", "val", "test")) == p.n_windows(T)
    bounds = p.bounds(T)
    for (a, b), s in zip(bounds, ("train", "val", "test")):
        f = frames[s]
        assert f.min() >= a and f.max() < b  # no window crosses a block boundary
        assert np.all(np.diff(f, axis=1) == 1)
        assert windows[s].history.shape[1:3] == (10, md_trajectory(molecule)["positions"].shape[1])
        assert windows[s].future.shape[1] == 20
    assert frames["train"].max() < frames["val"].min() <= frames["val"].max() < frames["test"].min()
    # the windows are the stored frames themselves, and the graph is the topology's bonds
    x = md_trajectory(molecule)["positions"]
    np.testing.assert_array_equal(windows["test"].future[3], x[frames["test"][3, 10:]])
    b = md_trajectory(molecule)["bonds"]
    assert windows["test"].edges.shape == (2, 2 * len(b))


def test_md_windows_caps_and_lengths():
    w, frames = g.md_windows("ethanol", n_history=5, n_future=10, step=2, caps=(50, 20, 10))
    assert (w["train"].n_windows, w["val"].n_windows, w["test"].n_windows) == (50, 20, 10)
    assert np.all(np.diff(frames["val"], axis=1) == 2)
    with pytest.raises(ValueError, match="molecule must be one of"):
        g.md_windows("aspirin")
    with pytest.raises(ValueError, match="caps must be three positive"):
        g.md_windows("ethanol", caps=(10, 0, 10))
    with pytest.raises(ValueError, match="n_history must be >= 2"):
        g.md_windows("ethanol", n_history=1)


@pytest.fixture()
def data_copy(tmp_path):
    for name in ("ethanol.npz", MANIFEST):
        shutil.copy(DATA_DIR / name, tmp_path / name)
    manifest = json.loads((tmp_path / MANIFEST).read_text())
    (tmp_path / MANIFEST).write_text(json.dumps({"ethanol": manifest["ethanol"]}))
    return tmp_path


def test_a_verified_copy_loads_and_a_corrupted_one_is_refused_by_name(data_copy):
    assert g.md_windows("ethanol", data_dir=data_copy)[0]["test"].n_windows > 0
    raw = bytearray((data_copy / "ethanol.npz").read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    (data_copy / "ethanol.npz").write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"ethanol\.npz has sha256 .* corrupt"):
        g.md_windows("ethanol", data_dir=data_copy)


def test_a_file_of_the_wrong_shape_is_refused_even_with_a_matching_checksum(data_copy):
    t = md_trajectory("ethanol")
    path = data_copy / "ethanol.npz"
    np.savez(
        path,
        positions=t["positions"][:100],  # truncated
        atomic_numbers=t["atomic_numbers"],
        bonds=t["bonds"],
        metadata=np.array(json.dumps(t["metadata"])),
    )
    manifest = json.loads((data_copy / MANIFEST).read_text())
    import hashlib

    manifest["ethanol"]["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (data_copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=r"ethanol\.npz: positions must be float32 of shape"):
        g.md_windows("ethanol", data_dir=data_copy)
    (data_copy / "ethanol.npz").unlink()
    with pytest.raises(FileNotFoundError, match=r"ethanol\.npz is listed"):
        g.md_windows("ethanol", data_dir=data_copy)
    with pytest.raises(FileNotFoundError, match=r"data_dir must hold manifest\.json"):
        g.md_windows("ethanol", data_dir=data_copy / "nowhere")


def test_load_md17_still_reads_md17_files_such_as_a_shipped_trajectory(tmp_path):
    t = md_trajectory("ethanol")
    path = tmp_path / "md17_ethanol.npz"
    np.savez(path, R=t["positions"], z=t["atomic_numbers"])
    windows, frames = g.load_md17(path)  # GeoTDM: every 10th frame (MD17 is at 0.5 fs)
    assert windows["train"].history.shape[1:] == (10, 9, 3)
    assert np.all(np.diff(frames["test"], axis=1) == 10)


def test_bond_length_w1_against_its_definition(rng):
    target = rng.normal(size=(6, 4, 3, 3))
    bonds = np.array([[0, 1], [1, 2]])
    same = np.repeat(target[:, None], 2, axis=1)
    np.testing.assert_allclose(g.bond_length_w1(same, target, bonds), 0.0, atol=1e-12)
    samples = target[:, None] + 0.1 * rng.normal(size=(6, 2, 4, 3, 3))
    w1 = g.bond_length_w1(samples, target, bonds)
    ls = bond_lengths(samples, bonds).reshape(-1, 2)
    lt = bond_lengths(target, bonds).reshape(-1, 2)
    for e in range(2):  # equal sizes after repeating the target K times: mean |sorted − sorted|
        ref = np.mean(np.abs(np.sort(ls[:, e]) - np.sort(np.repeat(lt[:, e], 2))))
        assert (
            w1[e] == pytest.approx(ref) == pytest.approx(wasserstein_distance(ls[:, e], lt[:, e]))
        )
    # rigid motions of a sample leave bond lengths, hence W1, unchanged
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    np.testing.assert_allclose(g.bond_length_w1(samples @ R.T + 2.0, target, bonds), w1)
    with pytest.raises(ValueError, match="bonds must be integer atom indices in"):
        g.bond_length_w1(samples, target, np.array([[0, 3]]))
    with pytest.raises(ValueError, match=r"bonds must have shape \(E, 2\)"):
        g.bond_length_w1(samples, target, np.array([0, 1]))


def test_openmm_generator_is_seeded_and_writes_a_verifiable_file(tmp_path):
    pytest.importorskip("openmm")
    from gse_flow._simulate import SPECS, simulate, write_trajectory

    spec = replace(SPECS["alanine_dipeptide"], n_equilibration=20, n_frames=4, stride=5)
    a, b = simulate(spec, seed=3), simulate(spec, seed=3)
    np.testing.assert_array_equal(a["positions"], b["positions"])
    assert not np.array_equal(a["positions"], simulate(spec, seed=4)["positions"])
    entry = write_trajectory(a, tmp_path)
    (tmp_path / MANIFEST).write_text(json.dumps({"alanine_dipeptide": entry}))
    t = md_trajectory("alanine_dipeptide", data_dir=tmp_path)
    np.testing.assert_array_equal(t["positions"], a["positions"])
    assert t["metadata"]["stride"] == 5 and t["metadata"]["frame_spacing_fs"] == 2.5


@pytest.mark.slow  # GFN2-xTB: a relaxation and a few hundred steps (about 5 s)
def test_xtb_generator_is_seeded():
    pytest.importorskip("tblite")
    from gse_flow._simulate import SPECS, simulate

    spec = replace(SPECS["ethanol"], n_equilibration=10, n_frames=3, stride=5)
    a, b = simulate(spec, seed=1), simulate(spec, seed=1)
    np.testing.assert_array_equal(a["positions"], b["positions"])
    assert len(a["bonds"]) == 8  # CH3–CH2–OH
