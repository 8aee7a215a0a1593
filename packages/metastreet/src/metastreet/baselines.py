"""Classic semi-supervised baseline: scikit-learn ``LabelSpreading`` on the street graph."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from sklearn.semi_supervised import LabelSpreading

from ._city import CityData

__all__ = ["label_spreading"]


def label_spreading(city: CityData, alpha: float = 0.2, n_neighbors: int = 7) -> NDArray:
    """Class scores from ``LabelSpreading`` (kNN kernel on street midpoints, i.e. the graph
    geometry) seeing only training labels (others -1). Returns ``(n_streets, C)`` scores."""
    if city.coords is None:
        raise ValueError("label_spreading needs city.coords")
    y = np.where(city.mask("train"), city.labels, -1)
    ls = LabelSpreading(kernel="knn", n_neighbors=n_neighbors, alpha=alpha, max_iter=200)
    ls.fit(np.asarray(city.coords), y)
    return ls.label_distributions_
