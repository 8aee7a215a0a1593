"""Representation unlearning: forget by rewiring representations, not by editing weights.

Almudévar & Ortega, "Representation Unlearning: Forgetting through Information Compression",
ICML 2026, arXiv:2601.21564 (implemented here from the paper's equations).

Split a trained classifier into a frozen encoder ``h`` and a linear head ``(W, b)``
(:class:`SplitModel`), then :class:`Unlearner` learns an identity-initialised :class:`Adapter`
``f_φ`` so that the deployed path ``x ↦ W f_φ(h(x)) + b`` (:class:`RewiredModel`) forgets a
class or a random subset, with retain data (:meth:`Unlearner.fit`) or from the forget samples
and the head alone (:meth:`Unlearner.fit_zero_shot`). :func:`evaluate` reports forgetting,
utility and a loss-based membership-inference AUC against retraining. Submodules:
:mod:`rep_unlearn.data` (tasks and loaders), :mod:`rep_unlearn.baselines` (retrain, fine-tune,
NegGrad+, SCRUB).

Start with a task, ``rep_unlearn.data.gaussian_clusters("class:0")`` or
``rep_unlearn.data.digits_task()``, train the model to unlearn from with
``task.fit_original(seed=0)``, then call ``Unlearner().fit(model, task.retain, task.forget,
task.val)`` and score the result with :func:`evaluate`.
"""

import importlib.metadata

from . import baselines as baselines
from . import data as data
from ._adapter import Adapter as Adapter
from ._evaluate import UnlearnReport as UnlearnReport
from ._evaluate import evaluate as evaluate
from ._evaluate import js_divergence as js_divergence
from ._evaluate import mia_auc as mia_auc
from ._split import RewiredModel as RewiredModel
from ._split import SplitModel as SplitModel
from ._train import TrainRecipe as TrainRecipe
from ._train import train_classifier as train_classifier
from ._unlearn import BETA_GRID as BETA_GRID
from ._unlearn import Unlearner as Unlearner
from ._unlearn import standard_loss as standard_loss
from ._unlearn import zero_shot_loss as zero_shot_loss
from ._unlearn import zero_shot_targets as zero_shot_targets

__version__ = importlib.metadata.version("rep-unlearn")

__all__ = [
    "BETA_GRID",
    "Adapter",
    "RewiredModel",
    "SplitModel",
    "TrainRecipe",
    "UnlearnReport",
    "Unlearner",
    "baselines",
    "data",
    "evaluate",
    "js_divergence",
    "mia_auc",
    "standard_loss",
    "train_classifier",
    "zero_shot_loss",
    "zero_shot_targets",
]
