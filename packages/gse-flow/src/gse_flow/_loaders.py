"""Loaders for user files: MD17/MD22 ``.npz`` and CMU MoCap (ASF + AMC, or ``.npz``).

Nothing is downloaded: the user points at files they have. Windows follow a protocol of
:data:`gse_flow.PROTOCOLS` (GeoTDM-style by default; see :mod:`gse_flow._data`).

MoCap forward kinematics (the CMU ASF/AMC convention): every bone has a unit ``direction``, a
``length`` and an ``axis`` (Euler angles, degrees, order given by the file) defining
``C = R(axis)``; a frame gives the bone's rotation ``M`` from its ``dof`` angles. Then

.. math::

    L_b = L_{parent}\\, C_b\\, M_b\\, C_b^{-1}, \\qquad
    p_b = p_{parent} + \\text{length}_b\\, L_b\\, \\text{direction}_b,

with the root's ``L = C_root M_root C_root^{-1}`` and position from the ``TX TY TZ`` channels.
Bone lengths are therefore constant over frames by construction (rotations preserve norms).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import check_finite_array, check_positive

from ._data import Protocol, Windows, radius_edges, trajectory_windows

__all__ = ["load_md17", "load_mocap", "mocap_positions", "parse_amc", "parse_asf"]


def _open_npz(path: str | Path) -> Any:
    """``np.load`` of an ``.npz`` archive, with errors that name the file and what is wrong."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"path must be an existing .npz file, got {str(p)!r} (not found)")
    try:
        data = np.load(p)
    except Exception as exc:
        raise ValueError(
            f"path {str(p)!r} is not a readable .npz archive (corrupt, truncated or another "
            f"format): {type(exc).__name__}: {exc}"
        ) from exc
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise ValueError(
            f"path {str(p)!r} must be an .npz archive of named arrays, got a .npy array"
        )
    return data


def load_md17(
    path: str | Path, *, protocol: str | Protocol = "geotdm", cutoff: float = 1.6
) -> tuple[dict[str, Windows], dict[str, NDArray[np.int64]]]:
    """Windows from an MD17/MD22 ``.npz`` with ``R`` (T × N × 3, Å) and ``z`` (N,).

    Hydrogens are kept; the graph joins atoms closer than ``cutoff`` Å in frame 0; node scalars
    are ``z / 10``.

    Returns:
        ``(windows, frames)`` as :func:`gse_flow.trajectory_windows`.

    Raises:
        ValueError: a missing key (named), ``R``/``z`` mismatch, non-finite coordinates, an
            unknown protocol or a window longer than a split.
    """
    with _open_npz(path) as data:
        for name in ("R", "z"):
            if name not in data.files:
                raise ValueError(
                    f"{Path(path).name} must contain key {name!r}, got keys {data.files}"
                )
        R = check_finite_array(data["R"], "R", ndim=3)
        z = np.asarray(data["z"]).ravel()
    if R.shape[2] != 3:
        raise ValueError(f"R must have shape (T, N, 3), got {R.shape}")
    if R.shape[1] != z.shape[0]:
        raise ValueError(
            f"R and z must agree on N atoms, got R with {R.shape[1]} and z with {z.shape[0]}"
        )
    edges = radius_edges(R[0], check_positive(cutoff, "cutoff"))
    return trajectory_windows(R, z[:, None] / 10.0, edges, protocol=protocol)


def parse_asf(text: str) -> dict[str, Any]:
    """Parse an ASF skeleton: root order/axis and bones (direction, length, axis, dof) and the
    hierarchy. Returns ``{"root": {...}, "bones": {name: {...}}, "children": {name: [...]},
    "order": [bone names parent-first]}``."""
    section, bones, children = None, {}, {}
    root = {"order": ["TX", "TY", "TZ", "RX", "RY", "RZ"], "axis": "XYZ"}
    current: dict[str, Any] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(":"):
            section = line.split()[0][1:]
            continue
        parts = line.split()
        if section == "root":
            if parts[0] == "order":
                root["order"] = [p.upper() for p in parts[1:]]
            elif parts[0] == "axis":
                root["axis"] = parts[1].upper()
        elif section == "bonedata":
            if parts[0] == "begin":
                current = {"dof": [], "axis": np.zeros(3), "axis_order": "XYZ"}
            elif parts[0] == "end" and current is not None:
                bones[current["name"]] = current
                current = None
            elif current is not None:
                if parts[0] == "name":
                    current["name"] = parts[1]
                elif parts[0] == "direction":
                    current["direction"] = np.array([float(p) for p in parts[1:4]])
                elif parts[0] == "length":
                    current["length"] = float(parts[1])
                elif parts[0] == "axis":
                    current["axis"] = np.array([float(p) for p in parts[1:4]])
                    current["axis_order"] = parts[4].upper() if len(parts) > 4 else "XYZ"
                elif parts[0] == "dof":
                    current["dof"] = [p.lower() for p in parts[1:]]
        elif section == "hierarchy":
            if parts[0] in ("begin", "end"):
                continue
            children.setdefault(parts[0], []).extend(parts[1:])
    if not bones:
        raise ValueError(
            "text must be an ASF skeleton with bones in a :bonedata section, got none "
            "(empty text or another format)"
        )
    order, stack = [], ["root"]
    while stack:
        b = stack.pop(0)
        for c in children.get(b, []):
            if c not in bones:
                raise ValueError(f"hierarchy must name bones defined in :bonedata, got {c!r}")
            order.append(c)
            stack.append(c)
    return {"root": root, "bones": bones, "children": children, "order": order}


def parse_amc(text: str) -> list[dict[str, NDArray[np.float64]]]:
    """Parse AMC motion: a list of frames, each ``{bone name: values}``."""
    frames: list[dict[str, NDArray[np.float64]]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith(":"):
            continue
        parts = line.split()
        if len(parts) == 1 and parts[0].isdigit():
            frames.append({})
            continue
        if not frames:
            raise ValueError("amc must start each frame with its frame number, got data first")
        frames[-1][parts[0]] = np.array([float(p) for p in parts[1:]])
    return frames


def _rot(axis: str, deg: float) -> NDArray[np.float64]:
    a = np.deg2rad(deg)
    c, s = np.cos(a), np.sin(a)
    if axis == "X":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "Y":
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _euler(angles: dict[str, float], order: str) -> NDArray[np.float64]:
    m = np.eye(3)
    for ax in order:  # ASF convention: apply in the stated order, later axes outermost
        m = _rot(ax, angles.get(ax, 0.0)) @ m
    return m


def mocap_positions(
    skeleton: dict[str, Any], frames: list[dict[str, NDArray]]
) -> tuple[NDArray[np.float64], NDArray[np.int32]]:
    """Forward kinematics: joint positions ``(T, 1 + n_bones, 3)`` (root first, then bones in
    parent-first order; a bone's position is its end point) and bone edges ``(2, 2·n_bones)``."""
    bones, order = skeleton["bones"], skeleton["order"]
    root = skeleton["root"]
    names = ["root", *order]
    index = {n: i for i, n in enumerate(names)}
    parent = {c: p for p, cs in skeleton["children"].items() for c in cs}
    C = {
        n: _euler(dict(zip(b["axis_order"], b["axis"])), b["axis_order"]) for n, b in bones.items()
    }
    out = np.zeros((len(frames), len(names), 3))
    for t, fr in enumerate(frames):
        vals = dict(zip(root["order"], fr.get("root", np.zeros(6))))
        rot_root = _euler({k[1]: v for k, v in vals.items() if k.startswith("R")}, root["axis"])
        L = {"root": rot_root}
        pos = {"root": np.array([vals.get("TX", 0.0), vals.get("TY", 0.0), vals.get("TZ", 0.0)])}
        for n in order:
            b = bones[n]
            angles = {d[1].upper(): v for d, v in zip(b["dof"], fr.get(n, np.zeros(len(b["dof"]))))}
            M = _euler(angles, "XYZ")
            L[n] = L[parent[n]] @ C[n] @ M @ C[n].T
            pos[n] = pos[parent[n]] + b["length"] * (L[n] @ b["direction"])
        out[t] = np.stack([pos[n] for n in names])
    send = [index[parent[n]] for n in order]
    recv = [index[n] for n in order]
    edges = np.array([send + recv, recv + send], dtype=np.int32)
    return out, edges


def load_mocap(
    path: str | Path,
    amc_path: str | Path | None = None,
    *,
    protocol: str | Protocol = "geotdm",
) -> tuple[dict[str, Windows], dict[str, NDArray[np.int64]]]:
    """Windows from CMU MoCap: ``path`` an ASF skeleton with ``amc_path`` its motion, or a
    ``.npz`` with ``positions`` (T × J × 3) and optionally ``edges`` (2 × E; default: none →
    fully connected). The skeleton's bones are the graph; node scalars are ones.

    Raises:
        ValueError: a missing ``positions`` key or AMC file, malformed files, unknown protocol
            or windows longer than a split.
    """
    p = Path(path)
    if p.suffix == ".npz":
        with _open_npz(p) as data:
            if "positions" not in data.files:
                raise ValueError(f"{p.name} must contain key 'positions', got keys {data.files}")
            pos = check_finite_array(data["positions"], "positions", ndim=3)
            edges = np.asarray(data["edges"]) if "edges" in data.files else None
        if edges is None:
            J = pos.shape[1]
            recv, send = np.where(~np.eye(J, dtype=bool))
            edges = np.stack([send, recv]).astype(np.int32)
    else:
        if amc_path is None:
            raise ValueError("amc_path must be given with an ASF skeleton, got None")
        skel = parse_asf(p.read_text())
        pos, edges = mocap_positions(skel, parse_amc(Path(amc_path).read_text()))
    return trajectory_windows(pos, np.ones((pos.shape[1], 1)), edges, protocol=protocol)
