"""Figures of ``reproduce``: probes over training, energy by eigen-index, PCA coloured by arm,
and the leaf x first-hop cosine heatmap (matplotlib, ``pip install geomem[plot]``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from icml26_shared.experiment import require_matplotlib, save_figure

from ._graphs import Graph
from ._probes import eigen_energy

__all__ = ["plot_energy", "plot_heatmap", "plot_history", "plot_pca"]


def _plt() -> Any:
    return require_matplotlib("plot", "geomem")


def plot_history(
    histories: dict[str, list[dict[str, float]]], keys: tuple[str, ...], path: Path | str
) -> Path:
    """One panel per probe in ``keys``; one line per model."""
    plt = _plt()
    fig, axes = plt.subplots(1, len(keys), figsize=(3.4 * len(keys), 3.4), squeeze=False)
    colours = {name: f"C{i}" for i, name in enumerate(histories)}
    for ax, key in zip(axes[0], keys):
        for name, hist in histories.items():
            pts = [(h["step"], h[key]) for h in hist if key in h]
            if pts:
                xs, ys = zip(*pts)
                ax.plot(xs, ys, marker=".", label=name, color=colours[name])
        ax.set_xscale("symlog", linthresh=100)
        ax.set_title(key.replace("_", " "))
        ax.set_xlabel("step")
        ax.set_ylim(-0.05, 1.05)
    handles = [plt.Line2D([], [], color=c, marker=".", label=n) for n, c in colours.items()]
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=7)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return save_figure(fig, path)


def plot_energy(embeddings: dict[str, NDArray[np.float64]], graph: Graph, path: Path | str) -> Path:
    """Fraction of centred embedding energy on each Laplacian eigenvector (ascending)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 3.2))
    for name, e in embeddings.items():
        _, energy = eigen_energy(e, graph)
        ax.plot(np.arange(len(energy)), energy / energy.sum(), marker=".", ms=3, label=name)
    ax.axvline(len(graph.leaves) + 0.5, color="grey", ls=":", lw=1)
    ax.set_xlabel("Laplacian eigen-index (ascending eigenvalue)")
    ax.set_ylabel("energy share")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.set_title(f"energy by eigen-index, {graph.name}")
    fig.tight_layout()
    return save_figure(fig, path)


def plot_pca(embeddings: dict[str, NDArray[np.float64]], graph: Graph, path: Path | str) -> Path:
    """First two principal components of each embedding table, coloured by arm."""
    plt = _plt()
    fig, axes = plt.subplots(
        1, len(embeddings), figsize=(3.4 * len(embeddings), 3.2), squeeze=False
    )
    arm = graph.arm_of
    for ax, (name, e) in zip(axes[0], embeddings.items()):
        c = e - e.mean(axis=0)
        u, s, _ = np.linalg.svd(c, full_matrices=False)
        xy = u[:, :2] * s[:2]
        ax.scatter(xy[:, 0], xy[:, 1], c=np.where(arm < 0, -1, arm), cmap="tab20", s=10)
        ax.scatter(*xy[graph.root], marker="*", s=120, c="k")
        ax.set_title(name, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    return save_figure(fig, path)


def plot_heatmap(
    embeddings: dict[str, NDArray[np.float64]], graph: Graph, path: Path | str
) -> Path:
    """Cosine of each leaf (rows, arm order) with each root neighbour (columns, arm order): a
    geometric memory shows a bright diagonal."""
    plt = _plt()
    fig, axes = plt.subplots(
        1, len(embeddings), figsize=(3.6 * len(embeddings) + 1, 3.4), squeeze=False,
        layout="constrained",
    )  # fmt: skip
    leaves = np.array([a[-1] for a in graph.arms])
    hops = np.array([a[0] for a in graph.arms])
    for ax, (name, e) in zip(axes[0], embeddings.items()):
        u = e / np.linalg.norm(e, axis=1, keepdims=True)
        im = ax.imshow(u[leaves] @ u[hops].T, cmap="RdBu_r", vmin=-1, vmax=1)
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("first hop (arm)")
        ax.set_ylabel("leaf (arm)")
    fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8)
    return save_figure(fig, path)
