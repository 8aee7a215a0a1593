"""Shared pieces of the icml26 packages: datasets, metrics, argument checks and the
``reproduce`` protocol. Import the submodules: ``from icml26_shared import metrics``."""

from . import checks as checks
from . import datasets as datasets
from . import experiment as experiment
from . import metrics as metrics

__all__ = ["checks", "datasets", "experiment", "metrics"]
__version__ = "0.1.0"
