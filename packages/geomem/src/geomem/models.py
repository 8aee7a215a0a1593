"""Models: the small GPT, the paper's Node2Vec-style model and the associative control."""

from ._gpt import GPT as GPT
from ._node2vec import AssociativeControl as AssociativeControl
from ._node2vec import Node2Vec as Node2Vec

__all__ = ["GPT", "AssociativeControl", "Node2Vec"]
