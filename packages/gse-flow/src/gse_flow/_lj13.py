"""LJ13: Langevin dynamics of a 13-atom Lennard-Jones cluster, simulated with ``ase``.

The classic flow benchmark (Köhler, Klein & Noé 2020 use LJ13 for equivariant flows) as a
trajectory task: reduced units ``ε = σ = m = 1`` (ase's eV, Å and amu, so ase's time unit
``Å·√(amu/eV)`` is the LJ time ``τ_LJ``), start from the ``r_min = 2^{1/6}σ`` icosahedron,
Langevin at ``kT = temperature·ε``. Each trajectory is burnt in, then windows of ``H + F``
frames are cut from it every ``spacing`` frames. Needs the ``ase`` extra
(``pip install gse-flow[ase]``).
"""

from __future__ import annotations

import numpy as np

from icml26_shared.checks import (
    SeedLike,
    check_positive,
    check_positive_int,
    int_from_seed,
    rng_from_seed,
)

from ._data import Windows, fully_connected_edges, make_windows

N_ATOMS = 13


def _start_cluster():
    """The ``r_min = 2^{1/6}σ`` icosahedron (an fcc lattice constant of ``r_min·√2``), in
    vacuum, unit masses, LJ calculator ``sigma = epsilon = 1, rc = 3, smooth``."""
    try:
        from ase.calculators.lj import LennardJones
        from ase.cluster import Icosahedron
    except ImportError as err:  # pragma: no cover - the extra is installed in the dev env
        raise ImportError("lj13_windows needs ase: pip install 'gse-flow[ase]'") from err
    atoms = Icosahedron("Ar", noshells=2, latticeconstant=2 ** (1 / 6) * np.sqrt(2))
    atoms.set_masses(np.ones(N_ATOMS))
    atoms.center(vacuum=10.0)
    atoms.set_pbc(False)
    atoms.calc = LennardJones(sigma=1.0, epsilon=1.0, rc=3.0, smooth=True)
    return atoms


def lj13_trajectory(
    n_frames: int,
    *,
    temperature: float = 0.3,
    dt: float = 0.005,
    steps_per_frame: int = 10,
    friction: float = 1.0,
    burn_in: int = 1000,
    seed: SeedLike = 0,
) -> np.ndarray:
    """``(n_frames, 13, 3)`` positions of one LJ13 Langevin trajectory (ase ``Langevin``,
    ``LennardJones(sigma=1, epsilon=1, rc=3, smooth=True)``), a frame every
    ``steps_per_frame`` steps of ``dt`` after ``burn_in`` steps; the centre of mass is fixed
    (``FixCom``) and removed. About 2.4 ms per step on one CPU core (ase's Python LJ)."""
    atoms = _start_cluster()  # raises the install hint first when ase is missing
    from ase import units
    from ase.constraints import FixCom
    from ase.md import velocitydistribution as vd
    from ase.md.langevin import Langevin

    # thermalize_momenta replaces MaxwellBoltzmannDistribution in recent ase (same arguments)
    thermalize = getattr(vd, "thermalize_momenta", None) or vd.MaxwellBoltzmannDistribution
    T = check_positive_int(n_frames, "n_frames")
    kT = check_positive(temperature, "temperature")
    dt = check_positive(dt, "dt")
    spf = check_positive_int(steps_per_frame, "steps_per_frame")
    gamma = check_positive(friction, "friction")
    burn = check_positive_int(burn_in, "burn_in", minimum=0)
    rng = rng_from_seed(seed)
    atoms.positions += 0.01 * rng.standard_normal((N_ATOMS, 3))
    thermalize(atoms, temperature_K=kT / units.kB, rng=rng)
    atoms.set_constraint(FixCom())  # ase's advice over Langevin(fixcm=True) for small systems
    dyn = Langevin(
        atoms, timestep=dt, temperature_K=kT / units.kB, friction=gamma, fixcm=False, rng=rng
    )
    if burn:
        dyn.run(burn)
    out = np.empty((T, N_ATOMS, 3))
    for t in range(T):
        dyn.run(spf)
        x = atoms.get_positions()
        out[t] = x - x.mean(axis=0)
    return out


def lj13_windows(
    n_windows: int,
    *,
    n_history: int = 10,
    n_future: int = 20,
    spacing: int = 10,
    n_trajectories: int = 4,
    temperature: float = 0.3,
    seed: SeedLike = 0,
) -> Windows:
    """``n_windows`` windows of ``n_history + n_future`` frames, cut every ``spacing`` frames
    from ``n_trajectories`` independent LJ13 trajectories (:func:`lj13_trajectory`); node
    scalar 1 for every atom, fully connected graph."""
    B = check_positive_int(n_windows, "n_windows")
    H = check_positive_int(n_history, "n_history", minimum=2)
    F = check_positive_int(n_future, "n_future")
    gap = check_positive_int(spacing, "spacing")
    R = check_positive_int(n_trajectories, "n_trajectories")
    seed = int_from_seed(seed, bits=52)
    per = -(-B // R)
    windows = []
    for r in range(R):
        traj = lj13_trajectory(
            (per - 1) * gap + H + F, temperature=temperature, seed=seed * 1000 + r
        )
        windows += [traj[i * gap : i * gap + H + F] for i in range(per)]
    pos = np.stack(windows[:B])
    return make_windows(
        pos[:, :H], pos[:, H:], np.ones((B, N_ATOMS, 1)), fully_connected_edges(N_ATOMS)
    )
