"""Generate the shipped molecular-dynamics trajectories (extra ``gse-flow[md]``).

Two engines, one output format (see :mod:`gse_flow.md` for the loader):

* **GFN2-xTB** (``tblite``'s ASE calculator) for molecules of MD17: the structure is built
  (ethanol from ASE's g2 collection; toluene and naphthalene from ideal ring geometry), relaxed
  with BFGS under GFN2-xTB, given Maxwell–Boltzmann velocities and run with ASE's Langevin
  integrator (500 K, 0.5 fs, MD17's temperature and step).
* **OpenMM** for alanine dipeptide (ACE-ALA-NME, 22 atoms): heavy atoms from standard internal
  coordinates (L-alanine, β-region φ/ψ), hydrogens added by ``openmm.app.Modeller`` from the
  amber14 templates, energy minimised, then Langevin (``LangevinMiddleIntegrator``) under
  amber14 ``protein.ff14SB`` with GBn2 implicit solvent at 300 K, no constraints, 0.5 fs.

An equilibration stretch is run and discarded; then one frame is stored every ``stride`` steps
(10 by default: 5 fs between frames, the spacing of GeoTDM's MD17 protocol, which keeps every
10th frame of MD17's 0.5 fs trajectories). Everything is seeded: the same seed and
:class:`MDSpec` give the same file on the same machine and library versions (floating-point
reductions in the engines may differ across builds).

The engines are imported only here and only when called; ``reproduce`` reads the shipped arrays.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["SPECS", "MDSpec", "build_structure", "simulate", "write_trajectory"]


@dataclass(frozen=True)
class MDSpec:
    """One trajectory's recipe.

    Attributes:
        name: the molecule (file name ``<name>.npz``).
        engine: ``"tblite"`` (GFN2-xTB through ASE) or ``"openmm"`` (amber14 + GBn2).
        temperature_k: thermostat temperature (K).
        timestep_fs: integration step (fs).
        friction_per_ps: Langevin friction (1/ps).
        n_equilibration: steps run and discarded before the first stored frame.
        n_frames: stored frames.
        stride: steps between stored frames.
    """

    name: str
    engine: str
    temperature_k: float
    timestep_fs: float = 0.5
    friction_per_ps: float = 5.0
    n_equilibration: int = 2000
    n_frames: int = 3000
    stride: int = 10


#: the shipped trajectories (``make_md_data.py`` runs these)
SPECS = {
    "ethanol": MDSpec("ethanol", "tblite", 500.0, n_frames=4000),
    "toluene": MDSpec("toluene", "tblite", 500.0),
    "naphthalene": MDSpec("naphthalene", "tblite", 500.0),
    "alanine_dipeptide": MDSpec(
        "alanine_dipeptide", "openmm", 300.0, n_equilibration=20000, n_frames=6000
    ),
}


# ----------------------------------------------------------------------------- structures
def _ring(radius: float, angles_deg) -> NDArray[np.float64]:
    a = np.deg2rad(np.asarray(angles_deg, dtype=float))
    return radius * np.stack([np.cos(a), np.sin(a), np.zeros_like(a)], axis=1)


def _toluene() -> tuple[list[str], NDArray[np.float64]]:
    """Benzene ring (C–C 1.39 Å, C–H 1.08 Å) with one H replaced by a methyl (C–C 1.51 Å,
    C–H 1.09 Å, tetrahedral)."""
    ang = np.arange(6) * 60.0
    ring, hyd = _ring(1.39, ang), _ring(1.39 + 1.08, ang[1:])
    u = np.array([1.0, 0.0, 0.0])
    cm = (1.39 + 1.51) * u
    t = np.deg2rad(180.0 - 109.47)
    phis = np.deg2rad([90.0, 210.0, 330.0])
    hm = [
        cm + 1.09 * (np.cos(t) * u + np.sin(t) * np.array([0, np.cos(p), np.sin(p)])) for p in phis
    ]
    symbols = ["C"] * 7 + ["H"] * 8
    return symbols, np.concatenate([ring, cm[None], hyd, np.array(hm)])


def _naphthalene() -> tuple[list[str], NDArray[np.float64]]:
    """Two fused hexagons (C–C 1.40 Å) sharing the bond on the y axis; C–H 1.08 Å."""
    a = 1.40
    cx = a * np.cos(np.deg2rad(30.0))
    pos, symbols = [], []
    for sign in (1.0, -1.0):
        centre = np.array([sign * cx, 0.0, 0.0])
        for th in (30.0, 90.0, 270.0, 330.0):  # the non-shared carbons of this ring
            d = _ring(1.0, [th])[0] * np.array([sign, 1.0, 1.0])
            pos += [centre + a * d, centre + (a + 1.08) * d]
            symbols += ["C", "H"]
    pos += [np.array([0.0, a / 2, 0.0]), np.array([0.0, -a / 2, 0.0])]
    symbols += ["C", "C"]
    return symbols, np.array(pos)


def build_structure(name: str) -> Any:
    """The starting ``ase.Atoms`` of an xTB molecule (``ethanol``, ``toluene``,
    ``naphthalene``, ``benzene``), before relaxation."""
    from ase import Atoms
    from ase.build import molecule

    if name == "ethanol":
        return molecule("CH3CH2OH")
    if name == "benzene":
        return molecule("C6H6")
    if name == "toluene":
        return Atoms(*_toluene())
    if name == "naphthalene":
        return Atoms(*_naphthalene())
    raise ValueError(
        f"name must be one of ethanol, benzene, toluene, naphthalene for GFN2-xTB, got {name!r}"
    )


def _place(a, b, c, bond: float, angle: float, torsion: float) -> NDArray[np.float64]:
    """NeRF: the atom bonded to ``c`` at ``bond`` Å, angle b–c–new ``angle`` degrees and
    torsion a–b–c–new ``torsion`` degrees."""
    bc = c - b
    bc /= np.linalg.norm(bc)
    n = np.cross(b - a, bc)
    n /= np.linalg.norm(n)
    m = np.cross(n, bc)
    th, ph = np.deg2rad(angle), np.deg2rad(torsion)
    d = np.array([-np.cos(th), np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph)])
    return c + bond * (d[0] * bc + d[1] * m + d[2] * n)


def _dipeptide_heavy(phi: float = -80.0, psi: float = 150.0) -> dict[str, NDArray[np.float64]]:
    """Heavy atoms of ACE-ALA-NME (Å) from standard internal coordinates; trans peptides,
    L-alanine (the CB side chosen by the sign of (C−CA)×(CB−CA)·(N−CA) > 0)."""
    p: dict[str, NDArray[np.float64]] = {}
    p["ACE:CH3"] = np.zeros(3)
    p["ACE:C"] = np.array([1.52, 0.0, 0.0])
    p["ALA:N"] = p["ACE:C"] + 1.33 * np.array(
        [-np.cos(np.deg2rad(116.0)), np.sin(np.deg2rad(116.0)), 0.0]
    )
    p["ALA:CA"] = _place(p["ACE:CH3"], p["ACE:C"], p["ALA:N"], 1.46, 122.0, 180.0)
    p["ALA:C"] = _place(p["ACE:C"], p["ALA:N"], p["ALA:CA"], 1.52, 111.0, phi)
    p["NME:N"] = _place(p["ALA:N"], p["ALA:CA"], p["ALA:C"], 1.33, 116.0, psi)
    p["NME:C"] = _place(p["ALA:CA"], p["ALA:C"], p["NME:N"], 1.46, 122.0, 180.0)
    p["ACE:O"] = _place(p["ALA:CA"], p["ALA:N"], p["ACE:C"], 1.23, 123.0, 0.0)
    p["ALA:O"] = _place(p["NME:C"], p["NME:N"], p["ALA:C"], 1.23, 123.0, 0.0)
    for tors in (-122.0, 122.0):
        cb = _place(p["ALA:C"], p["ALA:N"], p["ALA:CA"], 1.53, 110.0, tors)
        ca = p["ALA:CA"]
        if np.dot(np.cross(p["ALA:C"] - ca, cb - ca), p["ALA:N"] - ca) > 0:
            p["ALA:CB"] = cb
    return p


def _dipeptide_system(seed: int) -> tuple[Any, Any, Any]:
    """(topology, positions, system) of alanine dipeptide with hydrogens, amber14 + GBn2."""
    from openmm import Platform, unit
    from openmm.app import ForceField, Modeller, NoCutoff, Topology, element

    heavy = _dipeptide_heavy()
    top = Topology()
    chain = top.addChain()
    pos = []
    for res_name, atoms in (
        ("ACE", ("CH3", "C", "O")),
        ("ALA", ("N", "CA", "C", "O", "CB")),
        ("NME", ("N", "C")),
    ):
        res = top.addResidue(res_name, chain)
        for atom in atoms:
            el = {"C": element.carbon, "N": element.nitrogen, "O": element.oxygen}[atom[0]]
            top.addAtom(atom, el, res)
            pos.append(heavy[f"{res_name}:{atom}"])
    top.createStandardBonds()
    ff = ForceField("amber14/protein.ff14SB.xml", "implicit/gbn2.xml")
    modeller = Modeller(top, np.array(pos) * unit.angstrom)
    state = random.getstate()  # Modeller places new hydrogens with Python's `random`
    random.seed(seed)
    try:
        modeller.addHydrogens(ff, platform=Platform.getPlatformByName("Reference"))
    finally:
        random.setstate(state)
    system = ff.createSystem(modeller.topology, nonbondedMethod=NoCutoff, constraints=None)
    return modeller.topology, modeller.positions, system


# ----------------------------------------------------------------------------- engines
def _run_tblite(spec: MDSpec, seed: int) -> dict[str, Any]:
    from ase import units
    from ase.constraints import FixCom
    from ase.data import covalent_radii
    from ase.md.langevin import Langevin
    from ase.md.velocitydistribution import MaxwellBoltzmannDistribution, Stationary, ZeroRotation
    from ase.optimize import BFGS
    from tblite.ase import TBLite

    atoms = build_structure(spec.name)
    atoms.calc = TBLite(method="GFN2-xTB", verbosity=0)
    BFGS(atoms, logfile=None).run(fmax=0.01, steps=500)
    # bonds: pairs closer than 1.2 × the sum of covalent radii in the relaxed structure
    x, r = atoms.get_positions(), covalent_radii[atoms.get_atomic_numbers()]
    i, j = np.triu_indices(len(atoms), k=1)
    close = np.linalg.norm(x[i] - x[j], axis=1) < 1.2 * (r[i] + r[j])
    bonds = np.stack([i[close], j[close]], axis=1)
    atoms.set_constraint(FixCom())  # the centre of mass stays put (as in MD17's frames)
    rng = np.random.RandomState(seed)
    MaxwellBoltzmannDistribution(atoms, temperature_K=spec.temperature_k, rng=rng)
    Stationary(atoms)
    ZeroRotation(atoms)
    dyn = Langevin(
        atoms,
        spec.timestep_fs * units.fs,
        temperature_K=spec.temperature_k,
        friction=spec.friction_per_ps / (1000.0 * units.fs),
        fixcm=False,
        rng=rng,
    )
    t0 = time.perf_counter()
    dyn.run(spec.n_equilibration)
    frames = np.empty((spec.n_frames, len(atoms), 3), dtype=np.float32)
    for f in range(spec.n_frames):
        dyn.run(spec.stride)
        frames[f] = atoms.get_positions()
    steps = spec.n_equilibration + spec.n_frames * spec.stride
    return {
        "positions": frames,
        "atomic_numbers": atoms.get_atomic_numbers().astype(np.int32),
        "bonds": bonds.astype(np.int32),
        "level_of_theory": "GFN2-xTB (tblite, ASE calculator)",
        "ms_per_step": 1000.0 * (time.perf_counter() - t0) / steps,
    }


def _run_openmm(spec: MDSpec, seed: int) -> dict[str, Any]:
    import openmm
    from openmm import unit

    topology, positions, system = _dipeptide_system(seed)
    integrator = openmm.LangevinMiddleIntegrator(
        spec.temperature_k * unit.kelvin,
        spec.friction_per_ps / unit.picosecond,
        spec.timestep_fs * unit.femtosecond,
    )
    integrator.setRandomNumberSeed(seed + 1)  # OpenMM treats 0 as "pick one at random"
    platform = openmm.Platform.getPlatformByName("CPU")
    ctx = openmm.Context(system, integrator, platform, {"Threads": "1"})
    ctx.setPositions(positions)
    openmm.LocalEnergyMinimizer.minimize(ctx, 1.0, 0)
    ctx.setVelocitiesToTemperature(spec.temperature_k * unit.kelvin, seed + 1)
    t0 = time.perf_counter()
    integrator.step(spec.n_equilibration)
    frames = np.empty((spec.n_frames, topology.getNumAtoms(), 3), dtype=np.float32)
    for f in range(spec.n_frames):
        integrator.step(spec.stride)
        state = ctx.getState(getPositions=True)
        frames[f] = state.getPositions(asNumpy=True).value_in_unit(unit.angstrom)
    steps = spec.n_equilibration + spec.n_frames * spec.stride
    bonds = np.array(sorted(sorted((b[0].index, b[1].index)) for b in topology.bonds()))
    return {
        "positions": frames,
        "atomic_numbers": np.array([a.element.atomic_number for a in topology.atoms()], np.int32),
        "bonds": bonds.astype(np.int32),
        "atom_names": np.array([f"{a.residue.name}:{a.name}" for a in topology.atoms()]),
        "level_of_theory": "amber14 protein.ff14SB + GBn2 implicit solvent (OpenMM "
        f"{openmm.__version__}), no constraints",
        "ms_per_step": 1000.0 * (time.perf_counter() - t0) / steps,
    }


def simulate(spec: MDSpec, seed: int = 0) -> dict[str, Any]:
    """Run ``spec`` from ``seed``: positions ``(n_frames, N, 3)`` float32 (Å), atomic numbers,
    bonds ``(E, 2)`` from the topology and the run's metadata."""
    if spec.engine == "tblite":
        out = _run_tblite(spec, seed)
    elif spec.engine == "openmm":
        out = _run_openmm(spec, seed)
    else:
        raise ValueError(f"spec.engine must be one of 'tblite', 'openmm', got {spec.engine!r}")
    out["metadata"] = {
        **asdict(spec),
        "seed": seed,
        "level_of_theory": out.pop("level_of_theory"),
        "frame_spacing_fs": spec.timestep_fs * spec.stride,
        "ms_per_step": round(out.pop("ms_per_step"), 3),
        "thermostat": "Langevin",
    }
    return out


def write_trajectory(out: dict[str, Any], directory: str | Path) -> dict[str, Any]:
    """Write ``out`` (from :func:`simulate`) to ``directory/<name>.npz`` and return its
    manifest entry (sha256 of the file, shapes, metadata)."""
    meta = out["metadata"]
    path = Path(directory) / f"{meta['name']}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = {k: v for k, v in out.items() if k != "metadata"}
    with open(path, "wb") as fh:
        np.savez_compressed(fh, metadata=np.array(json.dumps(meta, sort_keys=True)), **arrays)
    return {
        "file": path.name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "positions_shape": list(out["positions"].shape),
        "n_bonds": int(out["bonds"].shape[0]),
        "metadata": meta,
    }
