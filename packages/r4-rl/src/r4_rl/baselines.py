"""Peers at equal feedback budget: RbRL (White et al., AAAI 2024), Bradley–Terry preferences
and naive rating regression."""

from ._baselines import fit_bt as fit_bt
from ._baselines import fit_rbrl as fit_rbrl
from ._baselines import fit_regression as fit_regression
from ._baselines import rbrl_loss as rbrl_loss

__all__ = ["fit_bt", "fit_rbrl", "fit_regression", "rbrl_loss"]
