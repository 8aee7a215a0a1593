"""Baselines and ablations: DR best-arm-per-user policy, best single arm, plug-in value/policy.

See :mod:`dlpt._baselines`.
"""

from ._baselines import DRBestArmPolicy as DRBestArmPolicy
from ._baselines import best_single_arm as best_single_arm
from ._baselines import plug_in_policy as plug_in_policy
from ._baselines import plug_in_value as plug_in_value

__all__ = ["DRBestArmPolicy", "best_single_arm", "plug_in_policy", "plug_in_value"]
