"""Seeded data generators used by several packages, and loaders for data shipped on PyPI.

Every generator takes ``seed`` (the seed rule of :func:`icml26_shared.checks.check_seed`) and is deterministic given
it. Nothing here downloads: the real-data loaders read files that ship inside PyPI packages
(scikit-learn's digits) and need the ``data`` extra: ``pip install icml26-shared[data]``.

Moved home (0.1.x; deprecated aliases here warn and go in 0.2): ``regression_scores`` and
``load_diabetes`` to :mod:`rsa_cp.data`, ``load_sp500_returns`` to :mod:`up_ocp.data`, the only
packages that use them.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .checks import (
    SeedLike,
    check_choice,
    check_in_interval,
    check_positive,
    check_positive_int,
    rng_from_seed,
)

__all__ = [
    "REAL_CLASSIFICATION_SETS",
    "SCORE_STREAM_KINDS",
    "ClassifierSample",
    "ScoreStream",
    "dirichlet_classifier",
    "load_digits",
    "load_real_classification",
    "nbody_trajectories",
    "score_stream",
]

SCORE_STREAM_KINDS = (
    "stationary",
    "change_point",
    "sinusoid",
    "mixture",
    "cauchy",
    "always_miss",
    "always_cover",
    "alternating",
)


def _rng(seed: SeedLike) -> np.random.Generator:
    return rng_from_seed(seed)


@dataclass(frozen=True)
class ScoreStream:
    """A stream of nonconformity scores.

    Attributes:
        scores: ``(T,)`` or ``(n_streams, T)`` non-negative scores.
        sigma: the scale of the generating law at each step (same shape), ``nan`` where the
            stream is adversarial and has no law.
        kind: the generator's name.
    """

    scores: NDArray[np.float64]
    sigma: NDArray[np.float64]
    kind: str


def score_stream(
    kind: str,
    length: int,
    *,
    n_streams: int | None = None,
    scale: float = 1.0,
    seed: SeedLike = 0,
) -> ScoreStream:
    """Generate a score stream s_t = scale · σ_t · |ε_t| for online conformal prediction.

    Kinds (ε_t ~ N(0, 1) unless stated):
        * ``stationary``: σ_t = 1.
        * ``change_point``: σ_t = 1, 5, 0.5 on the three thirds of the stream.
        * ``sinusoid``: σ_t = 1 + 0.8 sin(2π t / 500).
        * ``mixture``: regimes of geometric length (mean 400) with σ drawn from {0.5, 1, 3}.
        * ``cauchy``: s_t = |standard Cauchy| (heavy tail, infinite mean).
        * ``always_miss`` / ``always_cover`` / ``alternating``: adversarial sequences built to be
          huge (1e6 · scale), tiny (0) or alternating between the two; they do not depend on the
          predictor, so the same sequence defeats and then rewards a threshold.

    Args:
        kind: one of :data:`SCORE_STREAM_KINDS`.
        length: T, the number of steps.
        n_streams: if given, return ``(n_streams, T)`` independent streams.
        scale: multiply every score (the scale-free tests use 1e3 and 1e6).
        seed: seed or generator.
    """
    check_choice(kind, "kind", SCORE_STREAM_KINDS)
    T = check_positive_int(length, "length")
    scale = check_positive(scale, "scale")
    shape = (T,) if n_streams is None else (check_positive_int(n_streams, "n_streams"), T)
    rng = _rng(seed)
    t = np.arange(T)
    sigma = np.ones(shape)
    if kind == "change_point":
        sigma = np.broadcast_to(
            np.select([t < T // 3, t < 2 * T // 3], [1.0, 5.0], 0.5), shape
        ).copy()
    elif kind == "sinusoid":
        sigma = np.broadcast_to(1.0 + 0.8 * np.sin(2 * np.pi * t / 500), shape).copy()
    elif kind == "mixture":
        flat = sigma.reshape(-1, T)
        for row in flat:
            start = 0
            while start < T:
                stop = start + int(rng.geometric(1 / 400))
                row[start:stop] = rng.choice([0.5, 1.0, 3.0])
                start = stop
    if kind == "cauchy":
        scores = np.abs(rng.standard_cauchy(shape))
    elif kind in ("always_miss", "always_cover", "alternating"):
        big = np.full(shape, 1e6)
        if kind == "always_cover":
            big[:] = 0.0
        elif kind == "alternating":
            big[..., 1::2] = 0.0
        scores = big
        sigma = np.full(shape, np.nan)
    else:
        scores = sigma * np.abs(rng.standard_normal(shape))
    return ScoreStream(scores=scale * scores, sigma=scale * sigma, kind=kind)


@dataclass(frozen=True)
class ClassifierSample:
    """Labels with an AI's and a (noisier) human's predicted probabilities.

    Attributes:
        y: ``(n,)`` integer labels in ``[0, K)``.
        probs: ``(n, K)`` AI probabilities (rows sum to 1).
        human_probs: ``(n, K)`` human probabilities, or ``None``.
        true_probs: ``(n, K)`` the law y was drawn from.
    """

    y: NDArray[np.int64]
    probs: NDArray[np.float64]
    human_probs: NDArray[np.float64] | None
    true_probs: NDArray[np.float64]


def _softmax(z: NDArray[np.float64]) -> NDArray[np.float64]:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def dirichlet_classifier(
    n: int,
    n_classes: int = 10,
    *,
    concentration: float = 0.3,
    ai_noise: float = 0.5,
    human_noise: float | None = 1.5,
    seed: SeedLike = 0,
) -> ClassifierSample:
    """Synthetic classifier: p ~ Dirichlet(c·1_K), y ~ Categorical(p), and noisy views of p.

    The AI sees ``softmax(log p + ai_noise·ε)`` and the human ``softmax(log p + human_noise·ε')``
    with independent standard normal ε, ε'. Small ``concentration`` gives confident points.
    """
    n = check_positive_int(n, "n")
    K = check_positive_int(n_classes, "n_classes", minimum=2)
    c = check_positive(concentration, "concentration")
    ai_noise = check_positive(ai_noise, "ai_noise", strict=False)
    rng = _rng(seed)
    p = rng.dirichlet(np.full(K, c), size=n)
    p = np.clip(p, 1e-12, None)
    p /= p.sum(axis=1, keepdims=True)
    u = rng.random(n)[:, None]
    y = np.minimum((u > np.cumsum(p, axis=1)).sum(axis=1), K - 1).astype(np.int64)
    logp = np.log(p)
    probs = _softmax(logp + ai_noise * rng.standard_normal((n, K)))
    human = None
    if human_noise is not None:
        hn = check_positive(human_noise, "human_noise", strict=False)
        human = _softmax(logp + hn * rng.standard_normal((n, K)))
    return ClassifierSample(y=y, probs=probs, human_probs=human, true_probs=p)


def _regression_scores(
    law: str,
    n: int,
    *,
    shift: float = 0.0,
    scale: float = 1.0,
    shock_prob: float = 0.0,
    shock_scale: float = 10.0,
    df: float = 3.0,
    seed: SeedLike = 0,
) -> NDArray[np.float64]:
    """Non-negative regression scores (e.g. |residuals|) from a named law, optionally shifted,
    scaled and contaminated.

    Laws: ``lognormal`` (exp N(0, 1)), ``student_t`` (|t_df|), ``gamma`` (Gamma(2, 1)),
    ``halfnormal`` (|N(0, 1)|). Then s ← shift + scale·s, and with probability ``shock_prob``
    a score gets an extra positive shock ``shock_scale · Exp(1)`` (reference-only contamination).
    """
    check_choice(law, "law", ("lognormal", "student_t", "gamma", "halfnormal"))
    n = check_positive_int(n, "n")
    scale = check_positive(scale, "scale")
    check_in_interval(shock_prob, "shock_prob", 0, 1, closed=(True, True))
    rng = _rng(seed)
    if law == "lognormal":
        s = rng.lognormal(0.0, 1.0, n)
    elif law == "student_t":
        s = np.abs(rng.standard_t(check_positive(df, "df"), n))
    elif law == "gamma":
        s = rng.gamma(2.0, 1.0, n)
    else:
        s = np.abs(rng.standard_normal(n))
    s = shift + scale * s
    if shock_prob > 0:
        hit = rng.random(n) < shock_prob
        s = s + hit * shock_scale * rng.exponential(1.0, n)
    return s


def nbody_trajectories(
    n_trajectories: int,
    n_frames: int = 30,
    *,
    n_particles: int = 5,
    dt: float = 1e-3,
    steps_per_frame: int = 100,
    initial_speed: float = 0.5,
    interaction_strength: float = 1.0,
    seed: SeedLike = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Charged N-body trajectories in 3-D with the NRI/EGNN constants.

    Particles carry charges q ∈ {−1, +1}; with unit masses the acceleration is
    a_i = k Σ_{j≠i} q_i q_j (x_i − x_j)/‖x_i − x_j‖³ (like charges repel), each component
    clipped to ±0.1/dt, integrated by leapfrog (kick-drift-kick) with step ``dt`` and one frame
    kept every ``steps_per_frame`` steps. Positions start N(0, I); velocities have a random
    direction and norm ``initial_speed``.

    Returns:
        ``(positions, velocities, charges)`` of shapes ``(B, F, N, 3)``, ``(B, F, N, 3)``, ``(B, N)``.
    """
    B = check_positive_int(n_trajectories, "n_trajectories")
    F = check_positive_int(n_frames, "n_frames")
    N = check_positive_int(n_particles, "n_particles", minimum=2)
    dt = check_positive(dt, "dt")
    spf = check_positive_int(steps_per_frame, "steps_per_frame")
    rng = _rng(seed)
    charges = rng.choice([-1.0, 1.0], size=(B, N))
    x = rng.standard_normal((B, N, 3))
    v = rng.standard_normal((B, N, 3))
    v *= initial_speed / np.linalg.norm(v, axis=-1, keepdims=True)
    qq = charges[:, :, None] * charges[:, None, :]
    clip = 0.1 / dt
    eye = np.eye(N, dtype=bool)

    def accel(pos: NDArray[np.float64]) -> NDArray[np.float64]:
        diff = pos[:, :, None, :] - pos[:, None, :, :]
        r2 = np.sum(diff**2, axis=-1)
        r2[:, eye] = 1.0
        w = interaction_strength * qq / r2**1.5
        w[:, eye] = 0.0
        return np.clip(np.einsum("bij,bijd->bid", w, diff), -clip, clip)

    pos = np.empty((B, F, N, 3))
    vel = np.empty((B, F, N, 3))
    a = accel(x)
    for f in range(F):
        pos[:, f], vel[:, f] = x, v
        for _ in range(spf):
            v = v + 0.5 * dt * a
            x = x + dt * v
            a = accel(x)
            v = v + 0.5 * dt * a
    return pos, vel, charges


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            f"this loader needs {module!r}: install it with `pip install icml26-shared[data]`"
        ) from exc


def load_digits() -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """scikit-learn's 8×8 handwritten digits (1,797 images, 10 classes; ships with sklearn)."""
    ds = _require("sklearn.datasets")
    X, y = ds.load_digits(return_X_y=True)
    return X.astype(np.float64), y.astype(np.int64)


#: name -> description of the real classification sets of :func:`load_real_classification`
#: (all ship inside scikit-learn; the conformal packages' real-data tables draw on them).
REAL_CLASSIFICATION_SETS = {
    "breast_cancer": "Wisconsin diagnostic breast cancer, 569 x 30, 2 classes (UCI, CC BY 4.0)",
    "wine": "UCI wine recognition, 178 x 13, 3 classes (CC BY 4.0)",
    "iris": "Fisher's iris, 150 x 4, 3 classes (UCI, CC BY 4.0)",
    "digits": "UCI optical handwritten digits (8x8), 1,797 x 64, 10 classes (CC BY 4.0)",
}


def load_real_classification(name: str) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """``(X, y)`` of a real classification set shipped inside scikit-learn (nothing downloads).

    Args:
        name: a key of :data:`REAL_CLASSIFICATION_SETS`.
    """
    check_choice(name, "name", REAL_CLASSIFICATION_SETS)
    ds = _require("sklearn.datasets")
    X, y = getattr(ds, f"load_{name}")(return_X_y=True)
    return np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.int64)


def _load_diabetes() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """scikit-learn's diabetes regression data (442 patients, 10 features; ships with sklearn)."""
    ds = _require("sklearn.datasets")
    X, y = ds.load_diabetes(return_X_y=True)
    return X.astype(np.float64), y.astype(np.float64)


def _load_sp500_returns() -> tuple[NDArray[np.float64], NDArray[np.datetime64]]:
    """Daily S&P 500 log returns in percent (1999–2018), from the series shipped by ``arch``.

    Returns:
        ``(returns, dates)``: ``100·log(P_t / P_{t−1})`` of the adjusted close, and the dates.
    """
    sp500 = _require("arch.data.sp500")
    frame = sp500.load()
    close = frame["Adj Close"].to_numpy(dtype=np.float64)
    dates = frame.index.to_numpy()
    return 100.0 * np.diff(np.log(close)), dates[1:]


_MOVED = {
    "regression_scores": ("rsa_cp.data", _regression_scores),
    "load_diabetes": ("rsa_cp.data", _load_diabetes),
    "load_sp500_returns": ("up_ocp.data", _load_sp500_returns),
}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        home, fn = _MOVED[name]
        warnings.warn(
            f"icml26_shared.datasets.{name} is deprecated and will be removed in icml26-shared "
            f"0.2: use {home}.{name}",
            DeprecationWarning,
            stacklevel=2,
        )
        return fn
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
