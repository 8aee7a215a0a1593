"""Flow matching for trajectories: loss, ODE sampler, enhance mode (our reconstruction).

Conditional flow matching with the independent (straight-line) coupling:

.. math::

    x_0 = μ(\\text{history}) + σ_p ε,\\quad ε \\sim N(0, I)\\ \\text{(node mean removed)},\\qquad
    x_τ = (1 − τ) x_0 + τ x_1,\\qquad u = x_1 − x_0,

    \\mathcal{L}(θ) = \\mathbb{E}_{τ \\sim U(0,1), ε}\\,
        \\lVert v_θ(x_τ, τ \\mid \\text{history}) − u \\rVert^2,

with μ the last observed frame repeated (``prior="last"``), a constant-velocity extrapolation
(``prior="cv"``) or, in *enhance* mode, any deterministic predictor's output. Sampling integrates
``dx/dτ = v_θ(x, τ)`` from τ = 0 to 1 with Euler or Heun on a uniform grid; the history
encoding is computed once and reused at every step. Because ``v_θ`` is equivariant and ε is
drawn isotropically, the sampled law is equivariant too: ``f(g·history, R ε) = g·f(history, ε)``.

References:
    Lipman, Chen, Ben-Hamu, Nickel, Le. "Flow Matching for Generative Modeling". ICLR 2023.
    Liu, Gong, Liu. "Flow Straight and Fast: Rectified Flow". ICLR 2023.
    Wu, Liu, Yu, Sun. "Flow for Future" (GSE-Flow). ICML 2026 (OpenReview EBujA4tldV).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_finite_array,
    check_positive_int,
    rng_from_seed,
)
from icml26_shared.experiment import progress as progress_bar

from ._data import Windows, make_windows
from ._evaluate import energy_score
from ._layers import Graph, make_graph
from ._model import GSEFlow, check_key, precondition

__all__ = [
    "SOLVERS",
    "centered_noise",
    "cfm_loss",
    "enhance",
    "flow_matching_loss",
    "integrate",
    "mse_loss",
    "noise_pass_through",
    "out_of_fold",
    "prior_scale",
    "sample",
    "sample_from_noise",
    "select_temperature",
]

SOLVERS = ("euler", "heun")
#: candidate sampling temperatures of :func:`select_temperature`
TEMPERATURES = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)


def centered_noise(key: jax.Array, shape: tuple[int, ...], dtype: Any = jnp.float32) -> jax.Array:
    """Standard normal noise ``(..., N, 3)`` with the mean over nodes (axis −2) removed."""
    eps = jax.random.normal(key, shape, dtype)
    return eps - jnp.mean(eps, axis=-2, keepdims=True)


def cfm_loss(
    field: Callable[[jax.Array, jax.Array], jax.Array],
    x0: jax.Array,
    x1: jax.Array,
    tau: jax.Array,
) -> jax.Array:
    """Conditional flow-matching loss ``mean ‖field(x_τ, τ) − (x1 − x0)‖²`` (sum over the last
    axis, mean over the rest), with ``x_τ = (1 − τ) x0 + τ x1`` and one τ per leading item."""
    t = tau.reshape(tau.shape + (1,) * (x0.ndim - tau.ndim))
    xt = (1.0 - t) * x0 + t * x1
    v = field(xt, tau)
    return jnp.mean(jnp.sum((v - (x1 - x0)) ** 2, axis=-1))


def _prior(model: GSEFlow, batch: Windows) -> jax.Array:
    if batch.prior_mean is not None:
        return jnp.asarray(batch.prior_mean)
    return jax.vmap(model.prior_mean)(jnp.asarray(batch.history))


def flow_matching_loss(
    model: GSEFlow, batch: Windows, key: jax.Array, *, regress: jax.Array | float = 0.0
) -> jax.Array:
    """Flow-matching loss of ``model`` on a batch of windows (τ ~ U(0, 1), ε centred).

    With ``parametrization="velocity"`` it is ``mean ‖v_θ(x_τ, τ) − (x1 − x0)‖²``. With
    ``"x1"`` (preconditioned, ``v_θ = a(τ)(x_τ − μ) + b(τ) r``, ``b = ρ/√D``) it is the
    velocity loss weighted by ``1/(b²σ²)``, which equals ``mean ‖r − r*‖²/σ²`` with the
    readout's target of unit variance at every τ when the residual has scale ρσ (the EDM
    weighting; for ρ = 1, ``b² ∈ [1, 2]``). With σ the residual RMS (:func:`prior_scale`,
    as :func:`flow_config` sets it) the consistent choice is ρ = 1; a ρ < 1 with that σ gives
    the target variance ``1/ρ²`` at τ = 0 (16 for ρ = 0.25). With one σ per
    future frame the divisor is their mean square ``mean_f σ_f²``: the loss stays in data
    units, weighting every frame as ADE does. With
    ``"x1-plain"`` (0.2.0) it is the endpoint loss ``mean ‖x̂₁(x_τ, τ) − x1‖²``, the velocity
    loss weighted by ``(1 − τ)²``.

    With ``regress = 1`` τ = 0 and ε = 0, and the loss is the squared error
    ``mean ‖μ + v_θ(μ, 0) − x1‖²`` of the network's noise-free τ = 0 prediction: the
    :class:`gse_flow.EquivariantGNN` objective (:func:`mse_loss`). As a traced value it lets
    the flow and the deterministic GNN share one compiled train loop.

    Args:
        model: the velocity network.
        batch: :class:`gse_flow.Windows` (its ``prior_mean``, if set, replaces the model's prior).
        key: PRNG key for τ and ε.
        regress: 0 (flow matching, default) or 1 (regression of the τ = 0 prediction).

    Returns:
        The scalar loss.
    """
    check_key(key)
    hist = jnp.asarray(batch.history)
    x1 = jnp.asarray(batch.future)
    graph = (
        make_graph(batch.edges, hist.shape[2])
        if not isinstance(batch.edges, Graph)
        else batch.edges
    )
    k_tau, k_eps = jax.random.split(key)
    keep = 1.0 - jnp.asarray(regress, x1.dtype)  # 1: flow matching, 0: regression
    tau = keep * jax.random.uniform(k_tau, (hist.shape[0],), x1.dtype)
    mean = _prior(model, batch)
    sig = model.noise_scale(x1.dtype)
    x0 = mean + sig * model.correlate(keep * centered_noise(k_eps, x1.shape, x1.dtype))
    attr = jnp.asarray(batch.node_attr)
    if model.parametrization in ("x1", "x1-plain"):
        t = tau[:, None, None, None]
        xt = (1.0 - t) * x0 + t * x1
        pm = None if batch.prior_mean is None else mean
        plain = model.parametrization == "x1-plain"

        def one(x, s, h, a, m):
            cache = model.encode_history(h, a, graph)
            return (model.denoise if plain else model.velocity)(cache, x, s, m)

        axes = (0, 0, 0, 0, None if pm is None else 0)
        pred = jax.vmap(one, in_axes=axes)(xt, tau, hist, attr, pm)
        if plain:
            return jnp.mean(jnp.sum((pred - x1) ** 2, axis=-1))
        _, b = precondition(t, model.data_scale)
        unit = keep + (1.0 - keep) * b[..., 0] ** 2 * jnp.mean(sig**2)  # regression: data units
        err = jnp.sum((pred - (x1 - x0)) ** 2, axis=-1) / (b[..., 0] ** 2 * jnp.mean(sig**2))
        return jnp.mean(err * unit)

    def field(xt: jax.Array, t: jax.Array) -> jax.Array:
        return jax.vmap(model, in_axes=(0, 0, 0, 0, None))(xt, t, hist, attr, graph)

    return cfm_loss(field, x0, x1, tau)


def mse_loss(model: Any, batch: Windows, key: jax.Array) -> jax.Array:
    """Mean squared displacement ``mean ‖model.predict(history) − future‖²`` for deterministic
    baselines (``key`` is unused; it keeps the trainer's signature)."""
    del key
    hist = jnp.asarray(batch.history)
    graph = (
        make_graph(batch.edges, hist.shape[2])
        if not isinstance(batch.edges, Graph)
        else batch.edges
    )
    pred = jax.vmap(model.predict, in_axes=(0, 0, None))(hist, jnp.asarray(batch.node_attr), graph)
    return jnp.mean(jnp.sum((pred - jnp.asarray(batch.future)) ** 2, axis=-1))


def integrate(
    field: Callable[[jax.Array, jax.Array], jax.Array],
    x0: jax.Array,
    *,
    n_steps: int | jax.Array = 10,
    solver: str = "euler",
) -> jax.Array:
    """Integrate ``dx/dτ = field(x, τ)`` from τ = 0 to 1 on a uniform grid of ``n_steps``
    (a Python int, or a traced integer so one compiled sampler serves every step count).

    Euler: ``x ← x + h f(x, τ)``; Heun: ``x ← x + h/2 (f(x, τ) + f(x + h f(x, τ), τ + h))``.
    """
    if isinstance(n_steps, int | np.integer):
        check_positive_int(n_steps, "n_steps")
    check_choice(solver, "solver", SOLVERS)
    x0 = jnp.asarray(x0)
    n = jnp.asarray(n_steps, jnp.int32)
    h = 1.0 / n.astype(x0.dtype)

    def step(i: jax.Array, x: jax.Array) -> jax.Array:
        t = i.astype(x.dtype) * h
        k1 = field(x, t)
        if solver == "euler":
            return x + h * k1
        k2 = field(x + h * k1, t + h)
        return x + 0.5 * h * (k1 + k2)

    return jax.lax.fori_loop(0, n, step, x0)


def sample_from_noise(
    model: GSEFlow,
    history: jax.Array,
    eps: jax.Array,
    *,
    node_attr: jax.Array,
    graph: Graph,
    n_steps: int = 10,
    solver: str = "euler",
    prior_mean: jax.Array | None = None,
    use_cache: bool = True,
) -> jax.Array:
    """Deterministic map from noise ``eps`` ``(F, N, 3)`` to one future ``(F, N, 3)``.

    ``x0 = μ(history) + σ_p ε̃`` (ε̃ = ``model.correlate(eps)``, ε itself for the default
    white prior noise; ``eps = 0`` gives the noise-free, temperature-0 output) is integrated to τ = 1. With ``use_cache`` the history encoding
    is computed once; without it, it is requested at every velocity evaluation (same result).
    Inside one jitted loop (as in :func:`sample`) XLA hoists that loop-invariant encoder, so
    ``use_cache=False`` is not measurably slower there (README, "History cache"); the explicit
    cache matters when the field is called outside one compiled loop.
    """
    mean = model.prior_mean(history) if prior_mean is None else prior_mean
    eps = jnp.asarray(eps)
    x0 = mean + model.noise_scale(eps.dtype) * model.correlate(eps)
    if use_cache:
        cache = model.encode_history(history, node_attr, graph)

        def field(x: jax.Array, t: jax.Array) -> jax.Array:
            return model.velocity(cache, x, t, prior_mean)
    else:

        def field(x: jax.Array, t: jax.Array) -> jax.Array:
            return model.velocity(model.encode_history(history, node_attr, graph), x, t, prior_mean)

    return integrate(field, x0, n_steps=n_steps, solver=solver)


@eqx.filter_jit
def _sample_batch(
    model: GSEFlow, history, node_attr, graph, eps, prior_mean, n_steps, solver, use_cache
) -> jax.Array:
    def one(h, a, e, pm):
        return sample_from_noise(
            model,
            h,
            e,
            node_attr=a,
            graph=graph,
            n_steps=n_steps,
            solver=solver,
            prior_mean=pm,
            use_cache=use_cache,
        )

    over_k = jax.vmap(one, in_axes=(None, None, 0, None))
    pm_axis = None if prior_mean is None else 0
    return jax.vmap(over_k, in_axes=(0, 0, 0, pm_axis))(history, node_attr, eps, prior_mean)


def sample(
    model: GSEFlow,
    history: Any,
    key: jax.Array,
    *,
    node_attr: Any = None,
    edges: Any = None,
    k: int = 5,
    n_steps: int = 10,
    solver: str = "euler",
    prior_mean: Any = None,
    use_cache: bool = True,
    batch_size: int = 64,
    temperature: float = 1.0,
    progress: bool | None = None,
) -> NDArray[np.float32]:
    """Sample ``k`` futures per history by integrating the learned flow.

    Args:
        model: trained :class:`gse_flow.GSEFlow`.
        history: ``(H, N, 3)`` one window or ``(B, H, N, 3)`` a batch.
        key: PRNG key; the same key gives bitwise identical samples on CPU.
        node_attr: ``(N, S)`` or ``(B, N, S)`` node scalars (default ones).
        edges: ``(2, E)`` edge index (default fully connected).
        k: samples per window K.
        n_steps: uniform ODE steps.
        solver: ``"euler"`` or ``"heun"``.
        prior_mean: optional ``(B, F, N, 3)`` prior mean (enhance mode).
        use_cache: reuse the history encoding across ODE steps.
        batch_size: at most this many windows per compiled call; the batch is split into
            equal chunks (the last one padded, not recompiled).
        temperature: factor on the prior noise ε (``0``: the noise-free output, the same
            for every sample; ``1``: the trained model's law).
        progress: a bar over the chunks of ``batch_size`` windows; ``None`` (default): a bar
            on a terminal, one line when sampling starts and one when it ends when stderr is
            piped (the first call compiles, which takes seconds); ``False``: silent.

    Returns:
        ``(K, F, N, 3)`` for one window, ``(B, K, F, N, 3)`` for a batch (numpy float32).
    """
    check_key(key)
    k = check_positive_int(k, "k")
    check_positive_int(n_steps, "n_steps")
    check_choice(solver, "solver", SOLVERS)
    batch_size = check_positive_int(batch_size, "batch_size")
    if not (np.ndim(temperature) == 0 and np.isfinite(temperature) and temperature >= 0):
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature!r}")
    hist = check_finite_array(history, "history", ndim=(3, 4))
    single = hist.ndim == 3
    if single:
        hist = hist[None]
        if prior_mean is not None:
            prior_mean = np.asarray(prior_mean)[None]
    B, H, N, _ = hist.shape
    # equal chunks of at most batch_size windows (96 windows: 2 x 48, not 64 + 32 padded to 64)
    n_chunks = math.ceil(B / batch_size)
    batch_size = math.ceil(B / n_chunks)
    if H != model.n_history:
        raise ValueError(f"history must have {model.n_history} frames (H), got {H}")
    dummy = np.zeros((B, model.n_future, N, 3))
    w = make_windows(hist, dummy, node_attr, edges, prior_mean)
    graph = w.graph
    F = model.n_future
    eps = float(temperature) * centered_noise(key, (B, k, F, N, 3))
    out = []
    chunks = range(0, B, batch_size)
    desc = f"sample: {B} window(s) x {k} futures, {n_steps} {solver} steps"
    for start in progress_bar(chunks, enabled=progress, total=len(chunks), desc=desc):
        idx = np.arange(start, start + batch_size).clip(max=B - 1)
        pm = None if w.prior_mean is None else jnp.asarray(w.prior_mean[idx])
        res = _sample_batch(
            model,
            jnp.asarray(w.history[idx]),
            jnp.asarray(w.node_attr[idx]),
            graph,
            eps[idx],
            pm,
            jnp.asarray(n_steps, jnp.int32),
            solver,
            use_cache,
        )
        out.append(np.asarray(res)[: min(batch_size, B - start)])
    samples = np.concatenate(out, axis=0)
    return samples[0] if single else samples


def select_temperature(
    model: GSEFlow,
    windows: Windows,
    *,
    key: jax.Array,
    k: int = 5,
    temperatures: tuple[float, ...] = TEMPERATURES,
    n_steps: int = 10,
    solver: str = "euler",
    prior_mean: Any = None,
) -> tuple[float, dict[float, float]]:
    """Choose the sampling temperature on validation windows by the energy score.

    For each candidate ``T`` the ``k`` samples start from ``T·ε`` with one fixed draw of ε
    (the comparison is paired), and the temperature whose samples have the lowest energy score
    against ``windows.future`` wins. The energy score is proper, so samples drawn too close
    together (``T`` too low) or too far apart both score worse than calibrated ones; this is
    the rule by which :func:`gse_flow.fit_noise` sets a deterministic baseline's noise scale.

    Args:
        model: trained :class:`gse_flow.GSEFlow`.
        windows: validation windows (history, future, node attributes, edges).
        key: PRNG key of the noise draw.
        k: samples per window K.
        temperatures: candidate factors on the prior noise (positive).
        n_steps: ODE steps of the sampler.
        solver: ``"euler"`` or ``"heun"``.
        prior_mean: optional ``(B, F, N, 3)`` prior mean (enhance mode).

    Returns:
        ``(temperature, {T: energy score})``.
    """
    check_key(key)
    if not temperatures or any(not (np.isfinite(t) and t > 0) for t in temperatures):
        raise ValueError(f"temperatures must be positive finite numbers, got {temperatures!r}")
    if not isinstance(windows, Windows):
        raise TypeError(f"windows must be gse_flow.Windows, got {type(windows).__name__}")
    scores = {}
    for t in temperatures:
        s = sample_windows(
            model,
            windows,
            key,
            k=k,
            n_steps=n_steps,
            solver=solver,
            prior_mean=prior_mean,
            temperature=float(t),
            progress=False,
        )
        scores[float(t)] = energy_score(s, windows.future)
    return min(scores, key=scores.__getitem__), scores


def sample_windows(model: GSEFlow, windows: Windows, key: jax.Array, **kwargs: Any) -> NDArray:
    """:func:`sample` on the histories of ``windows`` with their node attributes and edges."""
    return sample(
        model, windows.history, key, node_attr=windows.node_attr, edges=windows.edges, **kwargs
    )


def noise_pass_through(
    model: GSEFlow,
    windows: Windows,
    key: jax.Array,
    *,
    n_steps: int = 10,
    solver: str = "euler",
    prior_mean: Any = None,
) -> float:
    """Fraction of the prior noise the sampler carries into its samples (issue 14 diagnostic):
    ``‖x̂(ε₁) − x̂(ε₂)‖ / ‖σ(ε₁ − ε₂)‖`` over ``windows`` for two centred noise draws.

    0 for a sampler that ignores the noise (a deterministic map), 1 when the noise goes
    through unchanged (the ``"x1"`` field with ``r = 0`` and ρ = 1 in the limit of many
    steps); on deterministic dynamics the trained sampler should keep it small.
    """
    check_key(key)
    w = windows
    graph = w.graph
    F, N = model.n_future, w.history.shape[2]
    eps = centered_noise(key, (2, w.n_windows, F, N, 3))
    pm = None if prior_mean is None else jnp.asarray(prior_mean)

    @eqx.filter_jit
    def run(model, e, pm):
        def one(h, a, x, m):
            return sample_from_noise(
                model, h, x, node_attr=a, graph=graph, n_steps=n_steps, solver=solver, prior_mean=m
            )

        return jax.vmap(one, in_axes=(0, 0, 0, None if pm is None else 0))(
            jnp.asarray(w.history), jnp.asarray(w.node_attr), e, pm
        )

    num = jnp.linalg.norm(run(model, eps[0], pm) - run(model, eps[1], pm))
    den = jnp.linalg.norm(model.noise_scale(eps.dtype) * model.correlate(eps[0] - eps[1]))
    return float(num / den)


def prior_scale(
    windows: Windows, prior: str = "last", *, per_frame: bool = False
) -> float | tuple[float, ...]:
    """σ_p: RMS per-coordinate residual ``x1 − μ(history)`` on the training windows.

    With ``per_frame=True`` one RMS per future frame ``f`` (over windows, nodes and
    coordinates), ``σ_f``: the prior noise then grows with the horizon as the residual does
    (on charged N-body the constant-velocity residual grows about linearly in f, 0.03 to
    0.82 over 20 frames, so one global σ puts far too much noise on the first frames and too
    little on the last).
    """
    check_choice(prior, "prior", ("last", "cv"))
    hist = np.asarray(windows.history, np.float64)
    fut = np.asarray(windows.future, np.float64)
    last = hist[:, -1:]
    if prior == "cv":
        steps = np.arange(1, fut.shape[1] + 1)[None, :, None, None]
        mean = last + steps * (hist[:, -1:] - hist[:, -2:-1])
    else:
        mean = last
    if windows.prior_mean is not None:
        mean = np.asarray(windows.prior_mean, np.float64)
    return _residual_rms(fut, mean, per_frame)


def flow_config(
    windows: Windows, prior: str = "cv", *, sigma: float | tuple[float, ...] | None = None
) -> dict[str, Any]:
    """Keyword arguments of :class:`GSEFlow` (and :class:`EquivariantGNN`) sized to the
    training ``windows``, as ``reproduce`` builds them: frame counts and node-feature size
    from the data, 16 scalar + 8 vector hidden channels, l ≤ 1, 2 layers, cutoff 8,
    ``length_scale`` = √3 × the RMS frame displacement of the histories (the EGNN baseline's
    rule too), zero readout init (training starts at the Gaussian field: prior mean plus
    calibrated noise), and ``sigma`` = the per-frame :func:`prior_scale` unless given.

    Examples:
        >>> import gse_flow as g
        >>> sorted(g.flow_config(g.nbody_windows(8, seed=0)))[:3]
        ['cutoff', 'irreps_hidden', 'length_scale']
    """
    check_choice(prior, "prior", ("last", "cv"))
    disp = np.sqrt(np.mean(np.diff(np.asarray(windows.history), axis=1) ** 2)) * np.sqrt(3)
    return dict(
        n_history=windows.history.shape[1],
        n_future=windows.future.shape[1],
        node_attr_dim=windows.node_attr.shape[-1],
        irreps_hidden="16x0e+8x1o",
        sh_lmax=1,
        n_layers=2,
        cutoff=8.0,
        sigma=prior_scale(windows, prior, per_frame=True) if sigma is None else sigma,
        prior=prior,
        length_scale=float(disp),
        readout_init=0.0,
    )


def _residual_rms(future: Any, pred: Any, per_frame: bool) -> float | tuple[float, ...]:
    """RMS of ``future − pred`` (``(B, F, N, 3)``): one value, or one per future frame ``f``
    (over windows, nodes and coordinates)."""
    sq = (np.asarray(future, np.float64) - np.asarray(pred, np.float64)) ** 2
    if per_frame:
        return tuple(float(v) for v in np.sqrt(np.mean(sq, axis=(0, 2, 3))))
    return float(np.sqrt(np.mean(sq)))


def out_of_fold(
    fit: Callable[[Windows], Callable[[Windows], Any]],
    windows: Windows,
    *,
    n_folds: int = 2,
    seed: SeedLike = 0,
) -> np.ndarray:
    """Out-of-fold predictions ``(B, F, N, 3)`` of a deterministic predictor on ``windows``.

    The windows are split at random into ``n_folds`` folds; ``fit(train_windows)`` returns a
    predictor ``f(windows) -> (B', F, N, 3)`` trained without the held-out fold, which it then
    predicts. Every window's prediction thus comes from a model that never saw it, as the
    test windows' predictions will: the input :func:`enhance` should train on.
    """
    if not callable(fit):
        raise TypeError(f"fit must be callable, got {type(fit).__name__}")
    n_folds = check_positive_int(n_folds, "n_folds", minimum=2)
    B = windows.n_windows
    if n_folds > B:
        raise ValueError(f"n_folds must be <= the {B} windows, got {n_folds}")
    folds = np.array_split(rng_from_seed(seed).permutation(B), n_folds)
    out = np.empty(np.shape(windows.future), np.float32)
    for held in folds:
        keep = np.setdiff1d(np.arange(B), held)
        predictor = fit(windows.take(keep))
        out[held] = check_finite_array(predictor(windows.take(held)), "fit(...)(windows)", ndim=4)
    return out


def enhance(
    baseline_fn: Callable[[Windows], Any],
    windows: Windows,
    *,
    validation: Windows | None = None,
    per_frame: bool = False,
    train_predictions: Any = None,
) -> tuple[Windows, float | tuple[float, ...]]:
    """Enhance mode: make a deterministic predictor's output the flow's prior mean.

    ``x0 = f(history) + σ_e ε`` with σ_e the RMS residual of ``f`` on ``validation`` (or on
    the training windows if none is given), so the flow only learns the correction; with
    ``per_frame=True`` one σ_e per future frame. Any predictor
    ``f(windows) -> (B, F, N, 3)`` can be wrapped: a trained EGNN, constant velocity, a
    physics model.

    A predictor trained on ``windows`` fits them better than it will fit new ones, so a flow
    trained around ``f(windows)`` learns too small a correction. Pass
    ``train_predictions`` = :func:`out_of_fold` predictions to train on those instead (and,
    without ``validation``, to take σ_e from their residuals, consistent with the prior means
    the flow trains on).

    Returns:
        ``(windows with prior_mean set, σ_e)``: train a :class:`GSEFlow` with ``sigma=σ_e`` on
        them and sample with ``prior_mean=f(test windows)``.
    """
    if not callable(baseline_fn):
        raise TypeError(f"baseline_fn must be callable, got {type(baseline_fn).__name__}")
    if train_predictions is None:
        pred = check_finite_array(baseline_fn(windows), "baseline_fn(windows)", ndim=4)
        name = "baseline_fn(windows)"
    else:
        pred = check_finite_array(train_predictions, "train_predictions", ndim=4)
        name = "train_predictions"
    if pred.shape != np.shape(windows.future):
        raise ValueError(f"{name} must have shape {np.shape(windows.future)}, got {pred.shape}")
    ref = windows if validation is None else validation
    ref_pred = pred if validation is None else np.asarray(baseline_fn(validation))
    sigma = _residual_rms(ref.future, ref_pred, per_frame)
    out = windows._replace(prior_mean=pred.astype(np.float32))
    return out, sigma
