"""gse-flow: equivariant flow matching for 3D trajectory prediction (JAX, e3nn-jax, equinox).

Our reconstruction of GSE-Flow (Wu, Liu, Yu, Sun, "Flow for Future: Geometric SE(3)-Equivariant
Flow Matching for 3D Trajectory Prediction", ICML 2026) from the paper's abstract; not the
authors' code.

Start with :func:`md_windows` (shipped molecular dynamics: MD17's molecules under GFN2-xTB,
alanine dipeptide under amber14), :func:`nbody_windows` (or :func:`make_windows` on your own ``(B, H, N, 3)``
trajectories) for data, build a :class:`GSEFlow` with ``sigma=prior_scale(windows)``, fit it
with :func:`train` (``optax.adam(1e-3)``, a PRNG key), then draw futures with :func:`sample`
and score them with :func:`evaluate`. The first call to ``train`` and to ``sample`` compiles
(tens of seconds on a small CPU); both print a line per stage when stderr is piped.
"""

from importlib import metadata as _metadata

from ._baselines import EGNN as EGNN
from ._baselines import EquivariantGNN as EquivariantGNN
from ._baselines import NoiseFit as NoiseFit
from ._baselines import constant_velocity as constant_velocity
from ._baselines import count_parameters as count_parameters
from ._baselines import fit_noise as fit_noise
from ._baselines import noisy_samples as noisy_samples
from ._data import PROTOCOLS as PROTOCOLS
from ._data import Protocol as Protocol
from ._data import Windows as Windows
from ._data import fully_connected_edges as fully_connected_edges
from ._data import make_windows as make_windows
from ._data import nbody_windows as nbody_windows
from ._data import radius_edges as radius_edges
from ._data import toy_md as toy_md
from ._data import toy_md_windows as toy_md_windows
from ._data import trajectory_windows as trajectory_windows
from ._evaluate import bond_length_w1 as bond_length_w1
from ._evaluate import check_equivariance as check_equivariance
from ._evaluate import energy_score as energy_score
from ._evaluate import evaluate as evaluate
from ._evaluate import spread_skill as spread_skill
from ._evaluate import window_scores as window_scores
from ._flow import SOLVERS as SOLVERS
from ._flow import centered_noise as centered_noise
from ._flow import cfm_loss as cfm_loss
from ._flow import enhance as enhance
from ._flow import flow_config as flow_config
from ._flow import flow_matching_loss as flow_matching_loss
from ._flow import integrate as integrate
from ._flow import mse_loss as mse_loss
from ._flow import noise_pass_through as noise_pass_through
from ._flow import out_of_fold as out_of_fold
from ._flow import prior_scale as prior_scale
from ._flow import sample as sample
from ._flow import sample_from_noise as sample_from_noise
from ._flow import select_temperature as select_temperature
from ._layers import Graph as Graph
from ._layers import make_graph as make_graph
from ._lj13 import lj13_trajectory as lj13_trajectory
from ._lj13 import lj13_windows as lj13_windows
from ._loaders import load_md17 as load_md17
from ._loaders import load_mocap as load_mocap
from ._loaders import mocap_positions as mocap_positions
from ._loaders import parse_amc as parse_amc
from ._loaders import parse_asf as parse_asf
from ._model import PRIOR_NOISES as PRIOR_NOISES
from ._model import GSEFlow as GSEFlow
from ._model import HistoryCache as HistoryCache
from ._model import correlate_noise as correlate_noise
from ._train import TrainResult as TrainResult
from ._train import data_mesh as data_mesh
from ._train import predict as predict
from ._train import shard_batch as shard_batch
from ._train import train as train
from ._train import train_step as train_step
from .md import md_windows as md_windows

__all__ = [
    "EGNN",
    "PRIOR_NOISES",
    "PROTOCOLS",
    "SOLVERS",
    "EquivariantGNN",
    "GSEFlow",
    "Graph",
    "HistoryCache",
    "NoiseFit",
    "Protocol",
    "TrainResult",
    "Windows",
    "bond_length_w1",
    "centered_noise",
    "cfm_loss",
    "check_equivariance",
    "constant_velocity",
    "correlate_noise",
    "count_parameters",
    "data_mesh",
    "energy_score",
    "enhance",
    "evaluate",
    "fit_noise",
    "flow_config",
    "flow_matching_loss",
    "fully_connected_edges",
    "integrate",
    "lj13_trajectory",
    "lj13_windows",
    "load_md17",
    "load_mocap",
    "make_graph",
    "make_windows",
    "md_windows",
    "mocap_positions",
    "mse_loss",
    "nbody_windows",
    "noise_pass_through",
    "noisy_samples",
    "out_of_fold",
    "parse_amc",
    "parse_asf",
    "predict",
    "prior_scale",
    "radius_edges",
    "sample",
    "sample_from_noise",
    "select_temperature",
    "shard_batch",
    "spread_skill",
    "toy_md",
    "toy_md_windows",
    "train",
    "train_step",
    "trajectory_windows",
    "window_scores",
]
__version__ = _metadata.version("gse-flow")
