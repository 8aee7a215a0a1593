"""R4: reward learning from ratings with a ranking mean squared error (rMSE) loss.

Kharyal, Muslimani and Taylor, "Reward Learning through Ranking Mean Squared Error" (Ranked
Return Regression for RL), ICML 2026, arXiv:2601.09236 — a reconstruction from the paper.

Core (torch): a dependency-free batched differentiable :func:`soft_rank` (projection onto the
permutahedron by pool-adjacent-violators, exact backward), :func:`rmse_loss`,
:class:`RewardModel`, :func:`fit_r4`, the simulated :class:`Rater`, planners
(:func:`q_learning`, :func:`cem_search`) and :func:`kendall_tau`. Submodules: :mod:`r4_rl.envs`
(GridWorld with exact value iteration, the Pendulum controller family), :mod:`r4_rl.data`
(trajectory containers and pools), :mod:`r4_rl.baselines` (RbRL, Bradley–Terry, regression).
:class:`LearnedRewardWrapper` needs ``pip install r4-rl[gym]`` and is imported on first use.

Start with :class:`RewardModel` and :func:`fit_r4` on rated trajectories (e.g.
``r4_rl.data.gridworld_pool`` rated by a :class:`Rater`), then read the learned reward with
``model.reward_table()`` or ``model.returns(trajs)``.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from ._data import Trajectories as Trajectories
from ._metrics import kendall_tau as kendall_tau
from ._model import FitResult as FitResult
from ._model import RewardModel as RewardModel
from ._planners import CEMResult as CEMResult
from ._planners import cem_search as cem_search
from ._planners import q_learning as q_learning
from ._planners import rollout as rollout
from ._r4 import fit_r4 as fit_r4
from ._rater import Rater as Rater
from ._softrank import rmse_loss as rmse_loss
from ._softrank import soft_rank as soft_rank

__version__ = importlib.metadata.version("r4-rl")

__all__ = [
    "CEMResult",
    "FitResult",
    "LearnedRewardWrapper",
    "Rater",
    "RewardModel",
    "Trajectories",
    "cem_search",
    "fit_r4",
    "kendall_tau",
    "q_learning",
    "rmse_loss",
    "rollout",
    "soft_rank",
]


def __getattr__(name: str) -> Any:
    if name == "LearnedRewardWrapper":
        from ._wrapper import LearnedRewardWrapper

        return LearnedRewardWrapper
    raise AttributeError(f"module 'r4_rl' has no attribute {name!r}")
