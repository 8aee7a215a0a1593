"""Data for the experiments and tests: synthetic human/AI classifiers, digits, regression, streams.

Everything is seeded and generated locally (digits ship inside scikit-learn, the ``data`` extra).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import SeedLike, check_seed, rng_from_seed
from icml26_shared.datasets import dirichlet_classifier, load_digits

from ._sets import human_sets

#: the synthetic model used throughout: Dirichlet(0.1) truths over K = 10 classes, the AI sees
#: log-probabilities with N(0, 1.5²) noise, the (noisier) human with N(0, 2²) noise. With a much
#: sharper AI (noise 0.5 vs 1.5) the human's sets carry almost no information the AI lacks and the
#: collaborative sets are as large as AI alone at matched coverage (see the README, "Measured").
SYNTHETIC = {"n_classes": 10, "concentration": 0.1, "ai_noise": 1.5, "human_noise": 2.0}


@dataclass(frozen=True)
class CollabData:
    """Labels with AI probabilities, human probabilities and the human's sets."""

    y: NDArray[np.int64]
    probs: NDArray[np.float64]
    human_probs: NDArray[np.float64]
    human: NDArray[np.bool_]
    true_probs: NDArray[np.float64] | None = None


def synthetic_collaboration(
    n: int,
    policy: str = "top_k",
    *,
    seed: SeedLike = 0,
    ai_noise: float | None = None,
    **policy_kw: float,
) -> CollabData:
    """The synthetic model of :data:`SYNTHETIC` with human sets from ``policy`` (see
    :func:`collab_cp.human_sets`); ``ai_noise`` overrides the AI's noise level."""
    seed = check_seed(seed)
    cfg = dict(SYNTHETIC)
    if ai_noise is not None:
        cfg["ai_noise"] = ai_noise
    d = dirichlet_classifier(n, seed=seed, **cfg)  # type: ignore[arg-type]
    assert d.human_probs is not None
    H = human_sets(d.human_probs, policy, **policy_kw)  # type: ignore[arg-type]
    return CollabData(d.y, d.probs, d.human_probs, H, d.true_probs)


def shifting_stream(length: int = 10_000, *, seed: SeedLike = 0) -> CollabData:
    """A stream whose first half has a top-1 human and the synthetic AI, and whose second half a
    top-3 human and an AI with doubled noise (1.5 → 3.0)."""
    half = length // 2
    seed = check_seed(seed)
    if isinstance(seed, int):
        seeds: tuple[SeedLike, SeedLike] = (seed, seed + 1)
    else:  # a Generator (or None): two independent draws of it
        gen = rng_from_seed(seed)
        seeds = (int(gen.integers(2**63)), int(gen.integers(2**63)))
    first = synthetic_collaboration(half, "top_k", k=1, seed=seeds[0])
    second = synthetic_collaboration(
        length - half, "top_k", k=3, seed=seeds[1], ai_noise=2 * SYNTHETIC["ai_noise"]
    )
    return CollabData(
        np.concatenate([first.y, second.y]),
        np.concatenate([first.probs, second.probs]),
        np.concatenate([first.human_probs, second.human_probs]),
        np.concatenate([first.human, second.human]),
    )


def digits_collaboration(
    *,
    seed: SeedLike = 0,
    n_train: int = 600,
    ai_pixel_noise: float = 6.0,
    human_pixel_noise: float = 8.0,
    k: int = 2,
) -> CollabData:
    """scikit-learn digits: an AI (logistic regression) and a weaker "human" (Gaussian naive Bayes)
    each trained on ``n_train`` images seen through their own pixel noise (pixels are 0..16); the
    human proposes its top-``k`` labels. Returns the remaining images (the calibration/test pool)."""
    try:
        from sklearn.linear_model import LogisticRegression
        from sklearn.naive_bayes import GaussianNB
    except ImportError as exc:  # pragma: no cover - only without the extra
        raise ImportError("digits needs scikit-learn: `pip install collab-cp[data]`") from exc
    X, y = load_digits()
    rng = rng_from_seed(seed)
    order = rng.permutation(y.size)
    train, pool = order[:n_train], order[n_train:]
    Xa = (X + ai_pixel_noise * rng.standard_normal(X.shape)) / 16.0
    Xh = (X + human_pixel_noise * rng.standard_normal(X.shape)) / 16.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ai = LogisticRegression(C=0.2, max_iter=2000).fit(Xa[train], y[train])
    human = GaussianNB().fit(Xh[train], y[train])
    probs = ai.predict_proba(Xa[pool])
    hp = np.clip(human.predict_proba(Xh[pool]), 1e-12, None)
    hp /= hp.sum(axis=1, keepdims=True)
    probs = probs / probs.sum(axis=1, keepdims=True)
    return CollabData(y[pool], probs, hp, human_sets(hp, "top_k", k=k))


#: name -> description of the real sets of :func:`real_collaboration` (shipped in scikit-learn).
REAL_SETS = {
    "breast_cancer": "Wisconsin diagnostic breast cancer, 569 x 30, 2 classes (UCI, CC BY 4.0)",
    "wine": "UCI wine recognition, 178 x 13, 3 classes (CC BY 4.0)",
}


def real_collaboration(
    name: str,
    *,
    seed: SeedLike = 0,
    train_fraction: float = 0.4,
    ai_noise: float = 1.0,
    human_noise: float = 2.0,
    k: int = 1,
) -> CollabData:
    """A real scikit-learn set (nothing downloads) with an AI and a weaker "human".

    Features are standardised; the AI (logistic regression) and the human (Gaussian naive Bayes)
    are trained on ``train_fraction`` of the rows, each seeing the features through its own
    Gaussian noise (standard deviations ``ai_noise`` and ``human_noise``); the human proposes its
    top-``k`` labels. Returns the remaining rows (the calibration/test pool).

    Args:
        name: a key of :data:`REAL_SETS`.
    """
    if name not in REAL_SETS:
        raise ValueError(f"name must be one of {sorted(REAL_SETS)}, got {name!r}")
    try:
        from sklearn import datasets
        from sklearn.linear_model import LogisticRegression
        from sklearn.naive_bayes import GaussianNB
    except ImportError as exc:  # pragma: no cover - only without the extra
        raise ImportError(f"{name} needs scikit-learn: `pip install collab-cp[data]`") from exc
    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    y = np.asarray(y, dtype=np.int64)
    rng = rng_from_seed(seed)
    order = rng.permutation(y.size)
    n_train = round(train_fraction * y.size)
    train, pool = order[:n_train], order[n_train:]
    Xa = X + ai_noise * rng.standard_normal(X.shape)
    Xh = X + human_noise * rng.standard_normal(X.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ai = LogisticRegression(C=0.5, max_iter=5000).fit(Xa[train], y[train])
    human = GaussianNB().fit(Xh[train], y[train])
    probs = ai.predict_proba(Xa[pool])
    probs = probs / probs.sum(axis=1, keepdims=True)
    hp = np.clip(human.predict_proba(Xh[pool]), 1e-12, None)
    hp /= hp.sum(axis=1, keepdims=True)
    return CollabData(y[pool], probs, hp, human_sets(hp, "top_k", k=k))


@dataclass(frozen=True)
class RegressionData:
    """A regression task with AI prediction and scale and a human interval per point."""

    y: NDArray[np.float64]
    y_pred: NDArray[np.float64]
    sigma: NDArray[np.float64]
    human_lower: NDArray[np.float64]
    human_upper: NDArray[np.float64]


def heteroscedastic_regression(n: int, *, seed: SeedLike = 0) -> RegressionData:
    """x ~ U(−2, 2), y = sin(2x) + σ(x)·ξ with σ(x) = 0.2 + 0.6|x| and ξ ~ N(0, 1).

    The AI predicts ŷ = sin(2x) + 0.1x (a small bias) with scale σ̂ = σ(x)·exp(0.2ξ'). The human
    sees part of the noise the AI cannot: centre = sin(2x) + 0.8σ(x)ξ + 0.8σ(x)ν (ν ~ N(0, 1)),
    half-width σ(x)·U(0.5, 1.5). All noises are independent standard normals.
    """
    rng = rng_from_seed(seed)
    x = rng.uniform(-2, 2, n)
    sig = 0.2 + 0.6 * np.abs(x)
    xi = rng.standard_normal(n)
    y = np.sin(2 * x) + sig * xi
    y_pred = np.sin(2 * x) + 0.1 * x
    sigma = sig * np.exp(0.2 * rng.standard_normal(n))
    centre = np.sin(2 * x) + 0.8 * sig * xi + 0.8 * sig * rng.standard_normal(n)
    half = sig * rng.uniform(0.5, 1.5, n)
    return RegressionData(y, y_pred, sigma, centre - half, centre + half)
