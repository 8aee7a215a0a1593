"""Graph generators with train/test leaf splits (see :mod:`geomem._graphs`) and a real
connectome cast as one (see :mod:`geomem._connectome`)."""

from ._connectome import drosophila_left as drosophila_left
from ._connectome import load_drosophila_left as load_drosophila_left
from ._graphs import IRREGULAR_EDGES as IRREGULAR_EDGES
from ._graphs import Graph as Graph
from ._graphs import cycle as cycle
from ._graphs import grid as grid
from ._graphs import irregular as irregular
from ._graphs import normalized_laplacian as normalized_laplacian
from ._graphs import path_star as path_star
from ._graphs import star_tree as star_tree

__all__ = [
    "IRREGULAR_EDGES",
    "Graph",
    "cycle",
    "drosophila_left",
    "grid",
    "irregular",
    "load_drosophila_left",
    "normalized_laplacian",
    "path_star",
    "star_tree",
]
