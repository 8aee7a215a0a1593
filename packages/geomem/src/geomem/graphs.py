"""Graph generators with train/test leaf splits (see :mod:`geomem._graphs`)."""

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
    "grid",
    "irregular",
    "normalized_laplacian",
    "path_star",
    "star_tree",
]
