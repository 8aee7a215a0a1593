"""Trajectory windows: the container, the charged N-body and toy-MD generators, the protocols.

A *window* is ``H`` observed frames followed by ``F`` future frames of the same ``N`` nodes.
All windows of one :class:`Windows` share a graph (edge index ``(2, E)``) and node scalars have
the shape ``(B, N, S)``.

Protocols (for user trajectories, :func:`trajectory_windows`):

* ``"geotdm"`` (default, GeoTDM-style): chronological 60/20/20 split of the frames, keep every
  10th frame inside each split, windows of 10 + 20 kept frames sliding by one kept frame, at most
  5000/1000/1000 windows (evenly spaced when capped). A window never crosses a split boundary:
  split ``s`` of ``L_s`` raw frames has ``L'_s = ceil(L_s / 10)`` kept frames and
  ``min(cap_s, max(0, L'_s − 30 + 1))`` windows.
* ``"eqmotion"``: the same with 10 + 10 frames.
* ``"egno"``: Δ-frame variant, 2 observed frames then 8 future frames, every 10th frame.

Protocols are never mixed in one table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_finite_array,
    check_positive,
    check_positive_int,
    check_seed,
    rng_from_seed,
)
from icml26_shared.datasets import nbody_trajectories

from ._layers import Graph, make_graph

__all__ = [
    "PROTOCOLS",
    "Protocol",
    "Windows",
    "fully_connected_edges",
    "make_windows",
    "nbody_windows",
    "radius_edges",
    "toy_md",
    "toy_md_windows",
    "trajectory_windows",
]


class Windows(NamedTuple):
    """A batch of trajectory windows sharing one graph.

    Attributes:
        history: ``(B, H, N, 3)`` observed frames.
        future: ``(B, F, N, 3)`` frames to predict.
        node_attr: ``(B, N, S)`` node scalars (charges, atom types, ...).
        edges: ``(2, E)`` int edge index (sender, receiver), shared by all windows.
        prior_mean: optional ``(B, F, N, 3)`` prior mean of x0 (set by :func:`gse_flow.enhance`).
    """

    history: Any
    future: Any
    node_attr: Any
    edges: Any
    prior_mean: Any = None

    @property
    def n_windows(self) -> int:
        """B, the number of windows."""
        return int(self.history.shape[0])

    @property
    def graph(self) -> Graph:
        """Padded neighbour lists of :attr:`edges` (see :func:`gse_flow.make_graph`)."""
        return make_graph(self.edges, int(self.history.shape[2]))

    def take(self, index: Any) -> Windows:
        """The windows at ``index`` (numpy indexing on the batch axis)."""
        pm = None if self.prior_mean is None else self.prior_mean[index]
        return Windows(
            self.history[index], self.future[index], self.node_attr[index], self.edges, pm
        )


def make_windows(
    history: Any, future: Any, node_attr: Any = None, edges: Any = None, prior_mean: Any = None
) -> Windows:
    """Validate arrays and build :class:`Windows` (float32, edges int32).

    ``node_attr`` defaults to ones ``(B, N, 1)``; ``edges`` to the fully connected graph.

    Raises:
        ValueError: fewer than 2 history frames, non-finite coordinates, mismatched shapes, or an
            edge index out of range.
    """
    hist = check_finite_array(history, "history", ndim=4)
    fut = check_finite_array(future, "future", ndim=4)
    B, H, N, D = hist.shape
    if D != 3:
        raise ValueError(f"history must have shape (B, H, N, 3), got {hist.shape}")
    if H < 2:
        raise ValueError(f"history must have >= 2 frames (H), got {H}")
    if fut.shape[0] != B or fut.shape[2:] != (N, 3):
        raise ValueError(f"future must have shape ({B}, F, {N}, 3), got {fut.shape}")
    if node_attr is None:
        attr = np.ones((B, N, 1))
    else:
        attr = check_finite_array(node_attr, "node_attr", ndim=(2, 3))
        if attr.ndim == 2:
            attr = np.broadcast_to(attr[None], (B, *attr.shape))
        if attr.shape[:2] != (B, N):
            raise ValueError(f"node_attr must have shape ({B}, {N}, S), got {attr.shape}")
    e = fully_connected_edges(N) if edges is None else np.asarray(edges)
    make_graph(e, N)  # validates
    pm = None
    if prior_mean is not None:
        pm = check_finite_array(prior_mean, "prior_mean", ndim=4)
        if pm.shape != fut.shape:
            raise ValueError(f"prior_mean must have shape {fut.shape}, got {pm.shape}")
        pm = pm.astype(np.float32)
    return Windows(
        hist.astype(np.float32),
        fut.astype(np.float32),
        np.ascontiguousarray(attr, np.float32),
        e.astype(np.int32),
        pm,
    )


def fully_connected_edges(n_nodes: int) -> NDArray[np.int32]:
    """All ordered pairs ``i ≠ j`` as a ``(2, N(N−1))`` edge index."""
    n = check_positive_int(n_nodes, "n_nodes", minimum=2)
    recv, send = np.where(~np.eye(n, dtype=bool))
    return np.stack([send, recv]).astype(np.int32)


def radius_edges(positions: Any, cutoff: float) -> NDArray[np.int32]:
    """Edges between nodes closer than ``cutoff`` in one frame ``(N, 3)`` (both directions)."""
    x = check_finite_array(positions, "positions", ndim=2)
    c = check_positive(cutoff, "cutoff")
    d = np.linalg.norm(x[:, None] - x[None], axis=-1)
    recv, send = np.where((d < c) & ~np.eye(len(x), dtype=bool))
    return np.stack([send, recv]).astype(np.int32)


def nbody_windows(
    n_windows: int,
    *,
    n_history: int = 10,
    n_future: int = 20,
    n_particles: int = 5,
    seed: SeedLike = 0,
) -> Windows:
    """Charged N-body windows: one ``H + F`` frame window per simulated trajectory.

    Trajectories come from :func:`icml26_shared.datasets.nbody_trajectories` (NRI/EGNN
    constants: charges ±1, positions N(0, I), speed 0.5, leapfrog Δt = 0.001, a frame every 100
    steps); node scalars are the charges, the graph is fully connected.
    """
    B = check_positive_int(n_windows, "n_windows")
    H = check_positive_int(n_history, "n_history", minimum=2)
    F = check_positive_int(n_future, "n_future")
    check_seed(seed)
    pos, _, charges = nbody_trajectories(B, H + F, n_particles=n_particles, seed=seed)
    return make_windows(
        pos[:, :H], pos[:, H:], charges[..., None], fully_connected_edges(n_particles)
    )


@dataclass(frozen=True)
class Protocol:
    """A windowing protocol: frame step, window lengths, split fractions and window caps."""

    n_history: int
    n_future: int
    step: int
    splits: tuple[float, float, float] = (0.6, 0.2, 0.2)
    caps: tuple[int, int, int] = (5000, 1000, 1000)

    def n_windows(self, n_frames: int) -> tuple[int, int, int]:
        """Window counts of the train/val/test splits for a trajectory of ``n_frames`` frames."""
        return tuple(
            min(cap, max(0, -(-(b - a) // self.step) - (self.n_history + self.n_future) + 1))
            for (a, b), cap in zip(self.bounds(n_frames), self.caps)
        )

    def bounds(self, n_frames: int) -> list[tuple[int, int]]:
        """Raw-frame ``[start, stop)`` of each chronological split."""
        cuts = np.round(np.cumsum((0.0, *self.splits)) * n_frames).astype(int)
        cuts[-1] = n_frames
        return [(int(cuts[i]), int(cuts[i + 1])) for i in range(3)]


PROTOCOLS = {
    "geotdm": Protocol(10, 20, 10),
    "eqmotion": Protocol(10, 10, 10),
    "egno": Protocol(2, 8, 10),
}


def trajectory_windows(
    positions: Any,
    node_attr: Any,
    edges: Any,
    *,
    protocol: str | Protocol = "geotdm",
) -> tuple[dict[str, Windows], dict[str, NDArray[np.int64]]]:
    """Cut one long trajectory ``(T, N, 3)`` into train/val/test windows by ``protocol`` (a name
    of :data:`PROTOCOLS` or a :class:`Protocol`).

    Returns:
        ``(windows, frames)``: dicts keyed ``"train"``, ``"val"``, ``"test"``; ``frames[s]`` holds
        the raw frame indices ``(n_s, H + F)`` of every window (for audits: no window crosses a
        split boundary).

    Raises:
        ValueError: unknown protocol, or a window longer than a split of the trajectory.
    """
    if isinstance(protocol, Protocol):
        p = protocol
    else:
        p = PROTOCOLS[check_choice(protocol, "protocol", list(PROTOCOLS))]
    x = check_finite_array(positions, "positions", ndim=3)
    T, _, _ = x.shape
    length = p.n_history + p.n_future
    counts = p.n_windows(T)
    if min(counts) < 1:
        need = int(np.ceil(length * p.step / min(p.splits)))
        raise ValueError(
            f"window ({length} frames every {p.step}) must fit in every split of the trajectory: "
            f"positions needs >= {need} frames, got {T}"
        )
    attr = check_finite_array(node_attr, "node_attr", ndim=2)
    out, frames = {}, {}
    for name, (a, b), n in zip(("train", "val", "test"), p.bounds(T), counts):
        kept = np.arange(a, b, p.step)
        starts = np.arange(len(kept) - length + 1)
        if len(starts) > n:
            starts = starts[np.linspace(0, len(starts) - 1, n).round().astype(int)]
        idx = kept[starts[:, None] + np.arange(length)[None]]
        w = x[idx]
        out[name] = make_windows(w[:, : p.n_history], w[:, p.n_history :], attr, edges)
        frames[name] = idx
    return out, frames


# ---------------------------------------------------------------------------- toy MD
def _toy_topology() -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """A fixed 21-atom (aspirin-sized: 13 heavy atoms, 8 hydrogens) bonded topology."""
    heavy = [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (5, 0),  # ring
        (0, 6),
        (6, 7),
        (6, 8),
        (1, 9),
        (9, 10),
        (10, 11),
        (10, 12),
    ]
    hydro = [(2, 13), (3, 14), (4, 15), (5, 16), (8, 17), (11, 18), (11, 19), (11, 20)]
    bonds = np.array(heavy + hydro)
    z = np.array([6] * 6 + [6, 8, 8, 8, 6, 6, 8] + [1] * 8, dtype=np.float64)
    return bonds, z


def _angles(bonds: NDArray[np.int64], n: int) -> NDArray[np.int64]:
    nbrs: list[list[int]] = [[] for _ in range(n)]
    for a, b in bonds:
        nbrs[a].append(b)
        nbrs[b].append(a)
    return np.array(
        [(i, j, k) for j in range(n) for ii, i in enumerate(nbrs[j]) for k in nbrs[j][ii + 1 :]]
    )


def _toy_forces(
    x: NDArray, bonds, angles, pairs, k_b=200.0, r0=1.0, k_a=40.0, th0=2.0, eps=0.2, sig=1.4
):
    f = np.zeros_like(x)
    d = x[:, bonds[:, 0]] - x[:, bonds[:, 1]]
    r = np.linalg.norm(d, axis=-1, keepdims=True)
    fb = -k_b * (r - r0) * d / r
    np.add.at(f, (slice(None), bonds[:, 0]), fb)
    np.add.at(f, (slice(None), bonds[:, 1]), -fb)
    a = x[:, angles[:, 0]] - x[:, angles[:, 1]]
    c = x[:, angles[:, 2]] - x[:, angles[:, 1]]
    na, nc = np.linalg.norm(a, axis=-1, keepdims=True), np.linalg.norm(c, axis=-1, keepdims=True)
    cos = np.clip(np.sum(a * c, -1, keepdims=True) / (na * nc), -0.999, 0.999)
    th = np.arccos(cos)
    dE = k_a * (th - th0) * (-1.0 / np.sqrt(1 - cos**2))  # dE/dcos
    ga = dE * (c / (na * nc) - cos * a / na**2)
    gc = dE * (a / (na * nc) - cos * c / nc**2)
    np.add.at(f, (slice(None), angles[:, 0]), -ga)
    np.add.at(f, (slice(None), angles[:, 2]), -gc)
    np.add.at(f, (slice(None), angles[:, 1]), ga + gc)
    d = x[:, pairs[:, 0]] - x[:, pairs[:, 1]]
    r2 = np.maximum(np.sum(d * d, -1, keepdims=True), 0.5)
    s6 = (sig**2 / r2) ** 3
    fl = 24 * eps * (2 * s6**2 - s6) / r2 * d
    np.add.at(f, (slice(None), pairs[:, 0]), fl)
    np.add.at(f, (slice(None), pairs[:, 1]), -fl)
    return f


def toy_md(
    n_trajectories: int,
    n_frames: int,
    *,
    dt: float = 0.005,
    steps_per_frame: int = 10,
    temperature: float = 0.3,
    friction: float = 1.0,
    seed: SeedLike = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int32]]:
    """Toy molecular dynamics of a fixed 21-atom molecule (numpy, BAOAB Langevin).

    Energy: harmonic bonds ``k_b (r − r0)²/2`` (r0 = 1), harmonic angles ``k_a (θ − θ0)²/2``
    (θ0 = 2 rad), Lennard-Jones between atoms not joined by a bond or an angle; unit masses,
    BAOAB splitting (Leimkuhler & Matthews 2013) at temperature ``kT`` with friction γ.

    Returns:
        ``(positions (B, T, 21, 3), z (21,), bond edges (2, 2·n_bonds))``.
    """
    B = check_positive_int(n_trajectories, "n_trajectories")
    T = check_positive_int(n_frames, "n_frames")
    dt = check_positive(dt, "dt")
    kT = check_positive(temperature, "temperature")
    rng = rng_from_seed(seed)
    bonds, z = _toy_topology()
    n = len(z)
    angles = _angles(bonds, n)
    excluded = {tuple(sorted(b)) for b in bonds} | {tuple(sorted((a[0], a[2]))) for a in angles}
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if (i, j) not in excluded])
    # initial structure: a random walk along the bond tree, then relaxation
    x = np.zeros((B, n, 3))
    for a, b in bonds:
        step = rng.standard_normal((B, 3))
        x[:, b] = x[:, a] + step / np.linalg.norm(step, axis=-1, keepdims=True)
    for _ in range(300):
        x = x + 1e-3 * np.clip(_toy_forces(x, bonds, angles, pairs), -100, 100)
    v = np.sqrt(kT) * rng.standard_normal(x.shape)
    c1 = np.exp(-friction * dt)
    c2 = np.sqrt((1 - c1**2) * kT)
    out = np.empty((B, T, n, 3))
    f = _toy_forces(x, bonds, angles, pairs)
    for t in range(-20, T):  # 20 frames of burn-in
        for _ in range(steps_per_frame):
            v = v + 0.5 * dt * f
            x = x + 0.5 * dt * v
            v = c1 * v + c2 * rng.standard_normal(v.shape)
            x = x + 0.5 * dt * v
            f = _toy_forces(x, bonds, angles, pairs)
            v = v + 0.5 * dt * f
        if t >= 0:
            out[:, t] = x
    edges = np.concatenate([bonds.T, bonds.T[::-1]], axis=1).astype(np.int32)
    return out, z, edges


def toy_md_windows(
    n_windows: int, *, n_history: int = 10, n_future: int = 20, seed: SeedLike = 0
) -> Windows:
    """One ``H + F`` window per toy-MD trajectory (node scalar: atomic number / 10)."""
    H = check_positive_int(n_history, "n_history", minimum=2)
    F = check_positive_int(n_future, "n_future")
    pos, z, edges = toy_md(n_windows, H + F, seed=seed)
    return make_windows(
        pos[:, :H], pos[:, H:], np.broadcast_to(z[None, :, None] / 10, (len(pos), len(z), 1)), edges
    )
