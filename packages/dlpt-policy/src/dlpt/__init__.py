"""Personalised continuous policies from discrete-arm randomised trials, debiased.

DLPT (Zhang, Zeng, Zhan, Zhang, "Personalized Policy Learning through Discrete
Experimentation", ICML 2026; reconstructed, no public code): a structured network
θ̂(x) with response μ̂(x, t) = θ̂(x)ᵀφ(t), cross-fitted, and a Neyman-orthogonal score with the
known design matrix Λ(x) = Σ_k p_k(x)φ(t_k)φ(t_k)ᵀ, giving debiased values with confidence
intervals for any policy, untested dose levels included, and a learned personalised policy.

Start with ``DLPT().fit(X, t, y, arms, probs)`` on your trial (or ``dlpt.data.simulate_rct``),
then ``model.value(dose_or_policy)`` for a debiased value with its confidence interval and
``model.learn_policy()`` for a personalised policy.
"""

import importlib.metadata

from ._basis import DesignReport as DesignReport
from ._basis import design_report as design_report
from ._dlpt import DLPT as DLPT
from ._dlpt import Policy as Policy
from ._dlpt import ValueEstimate as ValueEstimate

__version__ = importlib.metadata.version("dlpt-policy")

__all__ = ["DLPT", "DesignReport", "Policy", "ValueEstimate", "design_report"]
