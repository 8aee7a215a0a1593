"""Environments: :class:`GridWorld` (exact value iteration and evaluation), the Pendulum-v1
controller family :class:`PendulumSwingUp` and :func:`make_pendulum` (``r4-rl[gym]``), and
minimal :class:`Discrete` / :class:`Box` spaces."""

from ._envs import Box as Box
from ._envs import Discrete as Discrete
from ._envs import GridWorld as GridWorld
from ._envs import PendulumSwingUp as PendulumSwingUp
from ._envs import make_pendulum as make_pendulum

__all__ = ["Box", "Discrete", "GridWorld", "PendulumSwingUp", "make_pendulum"]
