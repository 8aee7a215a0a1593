"""The in-context path-star contrast: dataset and training/evaluation of the same GPT."""

from ._incontext import InContextBatch as InContextBatch
from ._incontext import make_dataset as make_dataset
from ._incontext import sequence_length as sequence_length
from ._incontext_train import evaluate_incontext as evaluate_incontext
from ._incontext_train import train_incontext as train_incontext

__all__ = [
    "InContextBatch",
    "evaluate_incontext",
    "make_dataset",
    "sequence_length",
    "train_incontext",
]
