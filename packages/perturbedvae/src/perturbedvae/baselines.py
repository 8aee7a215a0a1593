"""Peers on the same splits: control mean, additive singles, ridge on u, and a CPA-like
autoencoder (adversarial basal latent + perturbation embeddings), and the ablation without the
background / perturbation split (:class:`NoSeparationVAE`). PerturbedVAE with α = 0 is
``PerturbedVAE(..., alpha=0)``."""

from ._baselines import Additive as Additive
from ._baselines import ControlMean as ControlMean
from ._baselines import CPALike as CPALike
from ._baselines import NoSeparationVAE as NoSeparationVAE
from ._baselines import Ridge as Ridge

__all__ = ["Additive", "CPALike", "ControlMean", "NoSeparationVAE", "Ridge"]
