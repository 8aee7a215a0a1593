"""MetaStreet: semi-supervised multimodal street-level prediction on the street graph
(ICML 2026), reconstructed: segmentation-map features, task-aware text, a plain-torch GAT,
geography-aware contrast with pseudo-labels, validation-only model selection.

Start with :func:`make_city` (a synthetic city with known truth) or your own
:class:`CityData`, build a :class:`MetaStreet` model and call ``MetaStreet.fit(city)``; then
``evaluate(city, "test")`` scores it on the held-out streets.
"""

import importlib.metadata

from ._city import CityData as CityData
from ._city import describe as describe
from ._city import make_city as make_city
from ._city import with_label_rate as with_label_rate
from ._features import adjacency_matrix as adjacency_matrix
from ._features import image_features as image_features
from ._features import proportions as proportions
from ._graph import GATLayer as GATLayer
from ._graph import info_nce as info_nce
from ._graph import knn_edges as knn_edges
from ._graph import morans_i as morans_i
from ._graph import pseudo_labels as pseudo_labels
from ._model import MetaStreet as MetaStreet
from ._model import classification_metrics as classification_metrics
from ._model import street_features as street_features
from ._text import HashingEncoder as HashingEncoder
from ._text import MiniLMEncoder as MiniLMEncoder
from ._text import TextEncoder as TextEncoder
from ._text import encode_texts as encode_texts

__version__ = importlib.metadata.version("metastreet")

__all__ = [
    "CityData",
    "GATLayer",
    "HashingEncoder",
    "MetaStreet",
    "MiniLMEncoder",
    "TextEncoder",
    "__version__",
    "adjacency_matrix",
    "classification_metrics",
    "describe",
    "encode_texts",
    "image_features",
    "info_nce",
    "knn_edges",
    "make_city",
    "morans_i",
    "proportions",
    "pseudo_labels",
    "street_features",
    "with_label_rate",
]
