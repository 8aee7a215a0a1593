"""Synthetic streams for timing and testing the stopping rule."""

from ._data import never_stopping_stream as never_stopping_stream
from ._data import never_stopping_task as never_stopping_task

__all__ = ["never_stopping_stream", "never_stopping_task"]
