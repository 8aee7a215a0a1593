"""Monte Carlo evaluation over random calibration/test splits (what ``reproduce`` and the
benchmarks run): :func:`split_evaluation` and the (ε, δ) :func:`frontier`."""

from ._experiments import SplitResults as SplitResults
from ._experiments import frontier as frontier
from ._experiments import split_evaluation as split_evaluation

__all__ = ["SplitResults", "frontier", "split_evaluation"]
