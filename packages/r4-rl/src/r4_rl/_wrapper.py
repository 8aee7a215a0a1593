"""A gymnasium wrapper that swaps the environment's reward for a learned one.

``step`` returns ``r̂(s_t, a_t)`` of the observation the action was taken in, and keeps the
environment's reward in ``info["true_reward"]``; usable with any gymnasium agent.
Needs ``pip install r4-rl[gym]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

try:
    import gymnasium
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError("LearnedRewardWrapper needs gymnasium: `pip install r4-rl[gym]`") from exc

from ._envs import space_kind
from ._model import RewardModel

__all__ = ["LearnedRewardWrapper"]


class LearnedRewardWrapper(gymnasium.Wrapper):
    """Replace ``env``'s reward by ``model``'s ``r̂(s_t, a_t)``; the true one goes to ``info``.

    Args:
        env: a gymnasium env with Box or Discrete spaces matching ``model``.
        model: a fitted :class:`~r4_rl.RewardModel`.
    """

    def __init__(self, env: gymnasium.Env, model: RewardModel) -> None:
        if not isinstance(model, RewardModel):
            raise ValueError(f"model must be a RewardModel, got {type(model).__name__}")
        for name, kind, dim in (
            ("observation_space", model.obs_kind, model.obs_dim),
            ("action_space", model.act_kind, model.act_dim),
        ):
            got = space_kind(getattr(env, name), f"env.{name}")
            if got != (kind, dim):
                raise ValueError(f"env.{name} must be {kind} of size {dim} like model, got {got}")
        super().__init__(env)
        self.model = model
        self._last_obs: Any = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self._last_obs = obs
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._last_obs is None:
            raise ValueError("reset must be called before step")
        obs, reward, terminated, truncated, info = self.env.step(action)
        o = torch.as_tensor(np.asarray(self._last_obs))[None]
        a = torch.as_tensor(np.asarray(action))[None]
        with torch.no_grad():
            learned = float(self.model(o, a, lead=1)[0])
        info = {**info, "true_reward": float(reward)}
        self._last_obs = obs
        return obs, learned, terminated, truncated, info
