"""LJ13 with ase (issue 14 item 5): the cluster, its known minimum, windows."""

from __future__ import annotations

import numpy as np
import pytest

import gse_flow as g

pytest.importorskip("ase")


def test_start_structure_relaxes_to_the_known_lj13_minimum():
    """The r_min icosahedron relaxes to the LJ13 global minimum, −44.326801 ε
    (Wales & Doye 1997, Cambridge Cluster Database)."""
    from ase.calculators.lj import LennardJones
    from ase.optimize import BFGS

    from gse_flow._lj13 import _start_cluster

    atoms = _start_cluster()  # the structure lj13_trajectory starts from
    atoms.calc = LennardJones(sigma=1.0, epsilon=1.0, rc=100.0)  # shift 4e-12 per pair
    BFGS(atoms, logfile=None).run(fmax=1e-6)
    assert atoms.get_potential_energy() == pytest.approx(-44.326801, abs=1e-4)


def test_trajectory_stays_a_cluster_and_is_reproducible():
    x = g.lj13_trajectory(100, burn_in=200, seed=1)
    assert x.shape == (100, 13, 3) and np.all(np.isfinite(x))
    np.testing.assert_allclose(x.mean(axis=1), 0.0, atol=1e-10)
    d = np.linalg.norm(x[:, :, None] - x[:, None], axis=-1)[:, *np.triu_indices(13, 1)]
    assert d.min() > 0.8  # no overlap (the LJ wall)
    assert np.linalg.norm(x, axis=-1).max() < 2.5  # no atom evaporated
    step = np.sqrt(np.mean(np.diff(x, axis=0) ** 2))
    assert 1e-3 < step < 0.2  # it moves, smoothly
    np.testing.assert_array_equal(x[:10], g.lj13_trajectory(10, burn_in=200, seed=1))
    assert not np.allclose(x[:10], g.lj13_trajectory(10, burn_in=200, seed=2))


def test_windows_shapes_and_overlap():
    w = g.lj13_windows(5, n_history=4, n_future=3, spacing=2, n_trajectories=2, seed=0)
    assert w.history.shape == (5, 4, 13, 3) and w.future.shape == (5, 3, 13, 3)
    assert w.node_attr.shape == (5, 13, 1) and w.edges.shape == (2, 13 * 12)
    # windows 0 and 1 come from the same trajectory, 2 frames apart
    np.testing.assert_array_equal(w.history[0, 2:], w.history[1, :2])


@pytest.mark.parametrize(
    ("kw", "name"),
    [({"n_windows": 0}, "n_windows"), ({"n_windows": 2, "spacing": 0}, "spacing")],
)
def test_bad_arguments_are_named(kw, name):
    with pytest.raises(ValueError, match=name):
        g.lj13_windows(**kw)
