"""PerturbedVAE: sparse causal perturbation latents beside a dominant background.

Jiang, Liu, Cai, Gao, Dong, Abbasnejad, Yao, Shi, "What Makes a Representation Good for
Single-Cell Perturbation Prediction?", ICML 2026 (arXiv 2605.19343); reconstructed from the
paper's description (no code was available).

Core: :class:`PerturbedVAE` (``fit`` / ``predict`` unseen combinations / ``background`` /
``programs``), :class:`Prediction`, :class:`Programs`, the metrics used by ``reproduce``.
Submodules: :mod:`perturbedvae.data` (``read_screen``, ``simulate_screen``,
``semisynthetic_pbmc``) and :mod:`perturbedvae.baselines` (control mean, additive, ridge,
CPA-like).

Start with :func:`perturbedvae.data.simulate_screen` (or ``read_screen`` for your own
data), fit a :class:`PerturbedVAE` on the split's ``train`` screen, then call
``PerturbedVAE.predict`` on held-out combinations and score them with the metrics.
"""

import importlib.metadata

from ._metrics import background_r2 as background_r2
from ._metrics import energy_distance as energy_distance
from ._metrics import pearson_delta as pearson_delta
from ._metrics import probe_accuracy as probe_accuracy
from ._perturbedvae import PerturbedVAE as PerturbedVAE
from ._perturbedvae import Prediction as Prediction
from ._perturbedvae import Programs as Programs

__version__ = importlib.metadata.version("perturbedvae")

__all__ = [
    "PerturbedVAE",
    "Prediction",
    "Programs",
    "background_r2",
    "energy_distance",
    "pearson_delta",
    "probe_accuracy",
]
