"""The figures of ``reproduce`` (see :mod:`geomem._plots`); matplotlib is imported on first use
(``pip install geomem[plot]``)."""

from ._plots import plot_energy as plot_energy
from ._plots import plot_heatmap as plot_heatmap
from ._plots import plot_history as plot_history
from ._plots import plot_pca as plot_pca

__all__ = ["plot_energy", "plot_heatmap", "plot_history", "plot_pca"]
