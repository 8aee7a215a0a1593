"""Classic semi-supervised / supervised baselines for the street benchmark.

* ``label_spreading``: scikit-learn ``LabelSpreading`` (Zhou et al., 2004) on the street
  geometry, training labels only.
* ``logistic_fused``: multinomial logistic regression on fused per-street features
  ``[mean_i v_i, t]`` (mean image vector of the street's images, text embedding), standardised;
  the inverse regularisation ``C`` is chosen on validation weighted F1 (never on test).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import f1_score
from sklearn.preprocessing import StandardScaler
from sklearn.semi_supervised import LabelSpreading

from ._city import CityData

__all__ = ["label_spreading", "logistic_fused"]

C_GRID = (0.01, 0.1, 1.0, 10.0)


def label_spreading(city: CityData, alpha: float = 0.2, n_neighbors: int = 7) -> NDArray:
    """Class scores from ``LabelSpreading`` (kNN kernel on street midpoints, i.e. the graph
    geometry) seeing only training labels (others -1). Returns ``(n_streets, C)`` scores."""
    if city.coords is None:
        raise ValueError("label_spreading needs city.coords")
    y = np.where(city.mask("train"), city.labels, -1)
    ls = LabelSpreading(kernel="knn", n_neighbors=n_neighbors, alpha=alpha, max_iter=200)
    ls.fit(np.asarray(city.coords), y)
    return ls.label_distributions_


def logistic_fused(
    city: CityData, image_seq: NDArray, lengths: NDArray, text_emb: NDArray, n_classes: int
) -> NDArray[np.float64]:
    """Log-probabilities ``(n_streets, n_classes)`` of logistic regression on fused features.

    ``image_seq`` is the padded ``(n_streets, L, D_img)`` image-vector array and ``lengths``
    the number of images per street (a street without images gets zeros); ``text_emb`` is
    ``(n_streets, D_txt)``. Fit on training labels; ``C`` in ``C_GRID`` chosen on validation.
    """
    seq, lens = np.asarray(image_seq, dtype=np.float64), np.asarray(lengths)
    if seq.ndim != 3 or seq.shape[0] != city.n_streets or lens.shape != (city.n_streets,):
        raise ValueError("image_seq must be (n_streets, L, D) with lengths (n_streets,)")
    mean_img = seq.sum(1) / np.maximum(lens, 1)[:, None]
    x = np.hstack([mean_img, np.asarray(text_emb, dtype=np.float64)])
    tr, va = city.mask("train"), city.mask("val")
    scaler = StandardScaler().fit(x[tr])
    xs = scaler.transform(x)
    best: tuple[float, LogisticRegression | None] = (-1.0, None)
    for c in C_GRID:
        lr = LogisticRegression(C=c, max_iter=2000).fit(xs[tr], city.labels[tr])
        f1 = f1_score(city.labels[va], lr.predict(xs[va]), average="weighted", zero_division=0)
        if f1 > best[0]:
            best = (float(f1), lr)
    model = best[1]
    assert model is not None
    out = np.full((city.n_streets, n_classes), -np.inf)
    out[:, model.classes_] = model.predict_log_proba(xs)
    return out
