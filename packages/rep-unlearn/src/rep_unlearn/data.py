"""Data containers, unlearning tasks and loaders.

:func:`from_tensors` wraps any inputs and labels; :func:`digits_task` (scikit-learn digits, class
or random forgetting, MLP or CNN encoder) and :func:`gaussian_clusters` (a Gaussian mixture with
a 2-D representation) build complete :class:`Task` objects; :func:`image_folder` reads
``root/<class>/<image>`` files (extra ``rep-unlearn[images]``, Pillow).
"""

from ._data import Task as Task
from ._data import TensorData as TensorData
from ._data import digits_task as digits_task
from ._data import from_tensors as from_tensors
from ._data import gaussian_clusters as gaussian_clusters
from ._data import image_folder as image_folder
from ._data import parse_forget as parse_forget

__all__ = [
    "Task",
    "TensorData",
    "digits_task",
    "from_tensors",
    "gaussian_clusters",
    "image_folder",
    "parse_forget",
]
