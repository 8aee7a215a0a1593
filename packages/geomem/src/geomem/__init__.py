"""geomem: geometric versus associative memory of graphs in sequence models, at CPU scale.

Noroozizadeh, Nagarajan, Rosenfeld & Kumar, "Deep sequence models tend to memorize
geometrically; it is unclear why", ICML 2026, arXiv:2510.26745.

Submodules: :mod:`geomem.graphs` (path-star, star-tree, grid, cycle, irregular; Laplacian),
:mod:`geomem.tasks` (edge memorisation and path queries, as tokens and text),
:mod:`geomem.models` (``GPT``, ``Node2Vec``, ``AssociativeControl``), :mod:`geomem.probes`
(navigation, edge recovery, geometric score, spectral share/alignment, first-step and exact-path
accuracy), :mod:`geomem.incontext` (the in-context contrast) and :mod:`geomem.plots`.
:func:`train` trains any of the models on a graph.

Start with a graph, ``geomem.graphs.path_star(20, 5, seed=0)``, a model,
``geomem.models.Node2Vec(g.n_nodes, dim=100)``, and :func:`train` ``(model, g)``; then read
the memory's geometry with :mod:`geomem.probes` (``navigation``, ``spectral_share``).
"""

import importlib.metadata

from . import graphs as graphs
from . import incontext as incontext
from . import models as models
from . import plots as plots
from . import probes as probes
from . import tasks as tasks
from ._reproduce import FULL, QUICK
from ._reproduce import Config as ReproduceConfig
from ._train import RECIPES as RECIPES
from ._train import TrainResult as TrainResult
from ._train import evaluate as evaluate
from ._train import train as train

__version__ = importlib.metadata.version("geomem")

#: The sizes of ``python -m geomem reproduce`` (``"full"``) and of its ``--quick`` mode.
REPRODUCE_CONFIGS: dict[str, ReproduceConfig] = {"quick": QUICK, "full": FULL}

__all__ = [
    "RECIPES",
    "REPRODUCE_CONFIGS",
    "ReproduceConfig",
    "TrainResult",
    "evaluate",
    "graphs",
    "incontext",
    "models",
    "plots",
    "probes",
    "tasks",
    "train",
]
