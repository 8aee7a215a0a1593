"""Trajectory containers and the benchmark pools (generated, no downloads)."""

from ._data import Trajectories as Trajectories
from ._data import gridworld_pool as gridworld_pool
from ._data import pendulum_pool as pendulum_pool

__all__ = ["Trajectories", "gridworld_pool", "pendulum_pool"]
