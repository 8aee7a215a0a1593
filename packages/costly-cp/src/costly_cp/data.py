"""Synthetic streams for timing and testing the stopping rule, and the real classification sets
shipped inside scikit-learn (extra ``data``)."""

from ._data import REAL_SETS as REAL_SETS
from ._data import load_real as load_real
from ._data import never_stopping_stream as never_stopping_stream
from ._data import never_stopping_task as never_stopping_task

__all__ = ["REAL_SETS", "load_real", "never_stopping_stream", "never_stopping_task"]
