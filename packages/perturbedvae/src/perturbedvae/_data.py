"""Perturbation screens: the :class:`Screen` record, AnnData reading, synthetic and semi-synthetic data.

A screen holds cells ``X`` (n × G, log-normalised expression, or integer counts for the
negative-binomial likelihood), one condition label per cell in canonical form (``"ctrl"``, ``"A"``,
``"A+B"`` with names sorted) and the perturbation vocabulary that fixes the columns of the multi-hot
``u`` ∈ {0, 1}^P.

Generators (reconstructed from the PerturbedVAE paper's description, arXiv 2605.19343; the exact
numbers are the package spec's):

* :func:`simulate_screen`: z_ι ~ N(0, I), z_ν from a linear SCM over a random DAG with sparse
  single-perturbation shifts, x = g*(z_ι, z_ν) through an injective two-layer leaky-ReLU map.
* :func:`semisynthetic_pbmc`: real background biology (``pbmc68k_reduced`` shipped inside the
  scanpy wheel) with sparse, cell-type dependent shifts planted on top.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import (
    SeedLike,
    check_finite_array,
    check_positive_int,
    int_from_seed,
    rng_from_seed,
)

CONTROL = "ctrl"


def canonical_condition(perturbations: list[str] | tuple[str, ...]) -> str:
    """``"ctrl"`` for no perturbation, else the sorted names joined by ``"+"``."""
    return CONTROL if not perturbations else "+".join(sorted(perturbations))


def _split_condition(cond: str) -> list[str]:
    return [] if cond == CONTROL else cond.split("+")


@dataclass
class Screen:
    """A perturbation screen (cells × genes with one condition per cell).

    Attributes:
        X: (n, G) float64 expression (log-normalised; counts when ``counts`` is True).
        conditions: (n,) canonical condition strings (``"ctrl"``, ``"A"``, ``"A+B"``).
        perturbations: the perturbation vocabulary; column p of :attr:`U` is ``perturbations[p]``.
        genes: the G gene names, in column order.
        batch: optional (n,) batch labels (controls are drawn from the same batch for alignment).
        counts: True when ``X`` holds raw integer counts.
        truth: ground truth of generated screens (per-cell ``z_bg``, ``z_pert``, ``cell_type``, and
            ``true_means``: condition → noise-free mean expression).
    """

    X: NDArray[np.float64]
    conditions: NDArray[np.str_]
    perturbations: tuple[str, ...]
    genes: tuple[str, ...]
    batch: NDArray[Any] | None = None
    counts: bool = False
    truth: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.X = check_finite_array(self.X, "X", ndim=2)
        self.conditions = np.asarray(self.conditions, dtype=str)
        n, g = self.X.shape
        if self.conditions.shape != (n,):
            raise ValueError(f"conditions must have shape ({n},), got {self.conditions.shape}")
        if len(self.genes) != g:
            raise ValueError(f"genes must have {g} names, got {len(self.genes)}")
        if len(set(self.perturbations)) != len(self.perturbations):
            raise ValueError("perturbations must be unique names")
        known = set(self.perturbations)
        for c in np.unique(self.conditions):
            bad = [p for p in _split_condition(str(c)) if p not in known]
            if bad:
                raise ValueError(f"condition {c!r} names perturbations {bad} not in perturbations")
        if self.batch is not None:
            self.batch = np.asarray(self.batch)
            if self.batch.shape != (n,):
                raise ValueError(f"batch must have shape ({n},), got {self.batch.shape}")

    @property
    def n_cells(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_genes(self) -> int:
        return int(self.X.shape[1])

    @property
    def U(self) -> NDArray[np.float64]:
        """(n, P) multi-hot perturbation matrix (all zeros for controls)."""
        return encode_conditions(self.conditions, self.perturbations)

    @property
    def is_control(self) -> NDArray[np.bool_]:
        return self.conditions == CONTROL

    def condition_names(self) -> list[str]:
        """Conditions present, controls first, then by number of perturbations and name."""
        names = {str(c) for c in np.unique(self.conditions)}
        return sorted(names, key=lambda c: (c != CONTROL, len(_split_condition(c)), c))

    def subset(self, mask: ArrayLike) -> Screen:
        """The cells selected by a boolean mask or index array (truth arrays sliced alike)."""
        idx = np.arange(self.n_cells)[np.asarray(mask)]
        truth = {
            k: (v[idx] if isinstance(v, np.ndarray) and v.shape[:1] == (self.n_cells,) else v)
            for k, v in self.truth.items()
        }
        batch = None if self.batch is None else self.batch[idx]
        return Screen(
            self.X[idx],
            self.conditions[idx],
            self.perturbations,
            self.genes,
            batch,
            self.counts,
            truth,
        )

    def pseudobulk(self, condition: str) -> NDArray[np.float64]:
        """Mean expression of the cells of ``condition`` (raises when it has none)."""
        mask = self.conditions == condition
        if not mask.any():
            raise ValueError(f"condition {condition!r} has no cells in this screen")
        return self.X[mask].mean(axis=0)

    def true_mean(self, condition: str) -> NDArray[np.float64]:
        """Noise-free mean where the generator kept it, else the observed pseudobulk."""
        means = self.truth.get("true_means", {})
        return means[condition] if condition in means else self.pseudobulk(condition)


def encode_conditions(conditions: ArrayLike, perturbations: tuple[str, ...]) -> NDArray[np.float64]:
    """Multi-hot (n, P) matrix of canonical condition strings over ``perturbations``."""
    col = {p: i for i, p in enumerate(perturbations)}
    conds = np.asarray(conditions, dtype=str)
    uniq, inv = np.unique(conds, return_inverse=True)
    rows = np.zeros((len(uniq), len(perturbations)))
    for r, c in enumerate(uniq):
        for p in _split_condition(str(c)):
            if p not in col:
                raise ValueError(f"unknown perturbation {p!r} in condition {c!r}")
            rows[r, col[p]] = 1.0
    return rows[inv.reshape(-1)]


@dataclass
class Split:
    """Train screen (controls + singles) and the held-out test screen.

    ``test`` holds held-out controls, held-out cells of the seen singles and every cell of the
    held-out combinations listed in ``doubles``; ``interacting`` lists the doubles whose true
    effect is not the sum of their singles' (see :func:`interaction_scores`).
    """

    train: Screen
    test: Screen
    doubles: list[str]
    interacting: list[str] = field(default_factory=list)

    @property
    def additive(self) -> list[str]:
        """The held-out doubles that do not interact (Δ_ab ≈ Δ_a + Δ_b)."""
        return [d for d in self.doubles if d not in self.interacting]

    @property
    def singles(self) -> list[str]:
        return [c for c in self.train.condition_names() if c != CONTROL]


# --------------------------------------------------------------------------------------------
# reading real screens


def _parse_label(label: Any, control: str, sep: str) -> str:
    text = str(label).strip() if label is not None else ""
    if not text or text.lower() == "nan":
        raise ValueError(f"condition label {label!r} is empty or missing")
    if text == control:
        return CONTROL
    tokens = [t.strip() for t in text.split(sep)]
    if any(not t for t in tokens):
        raise ValueError(f"condition label {label!r} cannot be parsed with sep={sep!r}")
    perts = [t for t in tokens if t != control]
    if len(set(perts)) != len(perts):
        raise ValueError(f"condition label {label!r} repeats a perturbation")
    if any("+" in p for p in perts):
        raise ValueError(f"condition label {label!r}: perturbation names may not contain '+'")
    return canonical_condition(perts)


def _looks_like_counts(X: NDArray[np.float64]) -> bool:
    return bool(X.size and np.all(X >= 0) and np.all(X == np.round(X)) and X.max() > 1)


def _read_h5ad(path: str | Path) -> Any:
    """``anndata.read_h5ad`` with errors that name the file and what is wrong with it."""
    import anndata

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(
            f"source must be an existing .h5ad file, got {str(p)!r} (not found)"
        )
    try:
        return anndata.read_h5ad(p)
    except Exception as exc:
        raise ValueError(
            f"source {str(p)!r} is not a readable .h5ad file (corrupt, truncated or another "
            f"format): {type(exc).__name__}: {exc}"
        ) from exc


def read_screen(
    source: str | Path | Any,
    condition_key: str = "condition",
    control: str = "ctrl",
    sep: str = "+",
    layer: str | None = None,
    *,
    batch_key: str | None = None,
    keep_counts: bool = False,
) -> Screen:
    """Read an AnnData perturbation screen (``.h5ad`` path or an ``AnnData`` object).

    Labels are parsed GEARS-style (``"ctrl"``, ``"A+ctrl"``, ``"A+B"`` with ``sep="+"``) or
    Norman-style (``"A_B"`` with ``sep="_"``); the control token is dropped from combinations.
    Integer counts are normalised to 10⁴ per cell and ``log1p``-transformed with a warning, unless
    ``keep_counts`` is True (for ``likelihood="nb"``).

    Args:
        source: path to an ``.h5ad`` file or an ``anndata.AnnData``.
        condition_key: ``obs`` column with the condition labels.
        control: the control label (and token inside combinations).
        sep: separator between perturbation names in a label.
        layer: ``layers`` entry to read instead of ``X``.
        batch_key: optional ``obs`` column with batch labels.
        keep_counts: keep integer counts as they are.
    """
    import anndata

    adata = _read_h5ad(source) if isinstance(source, str | Path) else source
    if not isinstance(adata, anndata.AnnData):
        raise TypeError(f"source must be a path or an AnnData, got {type(source).__name__}")
    if condition_key not in adata.obs:
        raise ValueError(
            f"condition_key {condition_key!r} is not an obs column; columns: {list(adata.obs)}"
        )
    if not sep:
        raise ValueError("sep must be a non-empty string")
    if layer is None:
        mat = adata.X
    elif layer in adata.layers:
        mat = adata.layers[layer]
    else:
        raise ValueError(f"layer {layer!r} not found; layers: {list(adata.layers)}")
    X = mat.toarray() if hasattr(mat, "toarray") else np.asarray(mat)
    X = check_finite_array(X, "X", ndim=2)
    conds = np.array([_parse_label(v, control, sep) for v in adata.obs[condition_key].tolist()])
    if not (conds == CONTROL).any():
        raise ValueError(f"no control cells: no label equals control={control!r}")
    counts = _looks_like_counts(X)
    if counts and not keep_counts:
        warnings.warn(
            "X holds integer counts: normalising to 1e4 per cell and applying log1p "
            "(pass keep_counts=True for the negative-binomial likelihood)",
            UserWarning,
            stacklevel=2,
        )
        lib = X.sum(axis=1, keepdims=True)
        X = np.log1p(X / np.maximum(lib, 1e-12) * 1e4)
        counts = False
    perts = sorted({p for c in np.unique(conds) for p in _split_condition(str(c))})
    batch = None if batch_key is None else np.asarray(adata.obs[batch_key].astype(str))
    genes = tuple(str(g) for g in adata.var_names)
    return Screen(X, conds, tuple(perts), genes, batch, counts)


# --------------------------------------------------------------------------------------------
# interacting doubles


def interaction_score(
    ctrl: NDArray[np.float64],
    a: NDArray[np.float64],
    b: NDArray[np.float64],
    ab: NDArray[np.float64],
) -> float:
    """Non-additivity of a double from true condition means: ‖Δ_ab − Δ_a − Δ_b‖ / max(‖Δ_ab‖,
    ‖Δ_a + Δ_b‖), Δ = mean − control mean. 0 for an additive pair.

    >>> c = np.zeros(3); a = np.array([1.0, 0, 0]); b = np.array([0, 1.0, 0])
    >>> interaction_score(c, a, b, a + b), round(interaction_score(c, a, b, 0.5 * (a + b)), 3)
    (0.0, 0.5)
    """
    additive = (a - ctrl) + (b - ctrl)
    gap = float(np.linalg.norm((ab - ctrl) - additive))
    scale = max(float(np.linalg.norm(ab - ctrl)), float(np.linalg.norm(additive)), 1e-12)
    return gap / scale


def _choose_doubles(
    scores: dict[tuple[int, int], float],
    n_doubles: int,
    min_interacting: float,
    threshold: float,
    rng: np.random.Generator,
) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``n_doubles`` pairs, at least ``ceil(min_interacting · n_doubles)`` of them with a score
    ≥ ``threshold`` (all there are, with a warning, if fewer); returns (pairs, interacting)."""
    pairs = list(scores)
    hot = [p for p in pairs if scores[p] >= threshold]
    need = int(np.ceil(min_interacting * n_doubles))
    if len(hot) < need:
        warnings.warn(
            f"only {len(hot)} of {len(pairs)} pairs interact (score >= {threshold}); "
            f"min_interacting={min_interacting} asks for {need} of {n_doubles} doubles",
            UserWarning,
            stacklevel=3,
        )
        need = len(hot)
    first = [hot[i] for i in rng.choice(len(hot), size=need, replace=False)]
    rest = [p for p in pairs if p not in first]
    chosen = first + [rest[i] for i in rng.choice(len(rest), size=n_doubles - need, replace=False)]
    return chosen, [p for p in chosen if scores[p] >= threshold]


def _check_interaction_args(min_interacting: float, threshold: float) -> None:
    if not 0 <= min_interacting <= 1:
        raise ValueError(f"min_interacting must be in [0, 1], got {min_interacting}")
    if not threshold > 0:
        raise ValueError(f"interaction_threshold must be > 0, got {threshold}")


# --------------------------------------------------------------------------------------------
# synthetic screen with known ground truth


def _leaky(x: NDArray[np.float64], slope: float = 0.2) -> NDArray[np.float64]:
    return np.where(x > 0, x, slope * x)


def simulate_screen(
    n_cells: int = 200,
    n_controls: int = 2000,
    n_singles: int = 12,
    n_doubles: int = 20,
    n_genes: int = 100,
    d_bg: int = 8,
    d_pert: int = 6,
    *,
    noise: str = "gaussian",
    noise_sd: float = 0.3,
    heldout: float = 0.25,
    n_mc: int = 20000,
    bg_shift: float = 0.0,
    min_interacting: float = 0.5,
    interaction_threshold: float = 0.2,
    seed: SeedLike = 0,
) -> Split:
    """A synthetic screen with known background and perturbation latents.

    Generative model: z_ι ~ N(0, I_{d_bg}); z_ν = W z_ν + Σ_p u_p δ_p + ε with W strictly
    lower-triangular (edge probability 0.5, |w| ~ U[0.5, 1]) and ε ~ N(0, 0.5²), so
    z_ν = (I − W)⁻¹(Δu + ε); each single shifts 1–2 nodes by ±U[1.5, 3], a double adds two
    shifts. x = g*(z_ι + Bu, z_ν) + noise with g* a two-layer leaky-ReLU (slope 0.2) map: 3 d_bg
    hidden units read z_ι and feed every gene, 2 hidden units per node read z_ν and feed ≤ 10
    genes; the z_ν part is scaled to explain 8% of expression variance over the training cells.
    B is 0 unless ``bg_shift`` > 0: then each single also moves the background input by a random
    vector b_p of norm ``bg_shift`` (perturbations that shift background genes; the true z_ι
    kept in ``truth`` is the unshifted one). Noise is N(0, noise_sd²), or Poisson counts on
    5·softplus(·) with ``noise="poisson"``.

    Train: controls + singles (1 − ``heldout`` of their cells); test: the held-out cells and all
    cells of ``n_doubles`` pairs of singles, at least ``min_interacting`` of them interacting
    (:func:`interaction_score` of the true means ≥ ``interaction_threshold``), the rest drawn
    from all remaining pairs. ``truth`` holds ``z_bg``, ``z_pert`` per cell, ``true_means``
    (Monte Carlo noise-free means, ``n_mc`` common draws per condition) and
    ``interaction_scores`` (every pair).
    """
    for name, v in [("n_cells", n_cells), ("n_controls", n_controls), ("n_singles", n_singles)]:
        check_positive_int(v, name, minimum=2)
    check_positive_int(n_genes, "n_genes", minimum=10 * d_pert)
    check_positive_int(n_mc, "n_mc", minimum=2)
    if noise not in ("gaussian", "poisson"):
        raise ValueError(f"noise must be 'gaussian' or 'poisson', got {noise!r}")
    if not 0 < heldout < 1:
        raise ValueError(f"heldout must be in (0, 1), got {heldout}")
    if not bg_shift >= 0:
        raise ValueError(f"bg_shift must be >= 0, got {bg_shift}")
    _check_interaction_args(min_interacting, interaction_threshold)
    n_pairs = n_singles * (n_singles - 1) // 2
    if not 1 <= n_doubles <= n_pairs:
        raise ValueError(f"n_doubles must be in [1, {n_pairs}], got {n_doubles}")
    seed = int_from_seed(seed, "seed", bits=63)
    rng = np.random.default_rng(seed)
    W = np.tril(rng.uniform(0.5, 1.0, (d_pert, d_pert)) * rng.choice([-1, 1], (d_pert, d_pert)), -1)
    W *= np.tril(rng.random((d_pert, d_pert)) < 0.5, -1)
    M = np.linalg.inv(np.eye(d_pert) - W)
    shifts = np.zeros((n_singles, d_pert))
    for p in range(n_singles):
        nodes = rng.choice(d_pert, size=rng.integers(1, 3), replace=False)
        shifts[p, nodes] = rng.uniform(1.5, 3.0, nodes.size) * rng.choice([-1, 1], nodes.size)
    h_bg = 3 * d_bg
    W1_bg = rng.normal(size=(h_bg, d_bg)) / np.sqrt(d_bg)
    b_bg = rng.normal(scale=0.3, size=h_bg)
    W2_bg = rng.normal(size=(n_genes, h_bg)) / np.sqrt(h_bg)
    W1_nu = rng.uniform(0.7, 1.3, (d_pert, 2)) * rng.choice([-1, 1], (d_pert, 2))
    b_nu = rng.uniform(-1.0, 1.0, (d_pert, 2))
    genes_of = [rng.choice(n_genes, size=10, replace=False) for _ in range(d_pert)]
    W2_nu = np.zeros((n_genes, d_pert, 2))
    for k in range(d_pert):
        W2_nu[genes_of[k], k, :] = rng.normal(size=(10, 2))
    bg_dirs = rng.normal(size=(n_singles, d_bg))
    bg_shifts = bg_shift * bg_dirs / np.linalg.norm(bg_dirs, axis=1, keepdims=True)
    names = tuple(f"P{p:02d}" for p in range(n_singles))

    def latents(n: int, u: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
        z_bg = rng.normal(size=(n, d_bg))
        eps = rng.normal(scale=0.5, size=(n, d_pert))
        z_nu = (u @ shifts + eps) @ M.T
        return z_bg, z_nu

    W2_nu_flat = W2_nu.reshape(n_genes, 2 * d_pert).T

    def part_bg(z_bg: NDArray) -> NDArray:
        return _leaky(z_bg @ W1_bg.T + b_bg) @ W2_bg.T

    def part_nu(z_nu: NDArray) -> NDArray:
        hid = _leaky(z_nu[:, :, None] * W1_nu + b_nu)  # (n, d_pert, 2)
        return hid.reshape(len(z_nu), -1) @ W2_nu_flat

    def parts(z_bg: NDArray, z_nu: NDArray) -> tuple[NDArray, NDArray]:
        return part_bg(z_bg), part_nu(z_nu)

    # scale of the z_nu part: 8% of the expression variance over controls + singles
    u_mc = np.repeat(np.eye(n_singles + 1)[:, 1:], 4000 // (n_singles + 1) + 1, axis=0)
    zb, zn = latents(len(u_mc), u_mc)
    bg, nu = parts(zb, zn)
    scale = np.sqrt(0.08 / 0.92 * bg.var(axis=0).sum() / max(nu.var(axis=0).sum(), 1e-12))
    offset = -bg.mean(axis=0)

    def expression(z_bg: NDArray, z_nu: NDArray, u: NDArray) -> NDArray:
        bg_, nu_ = parts(z_bg + u @ bg_shifts, z_nu)
        return bg_ + offset + scale * nu_

    # common random numbers for the noise-free means: the background cancels in every Δ
    mc_rng = np.random.default_rng([seed, 1])
    zb_mc = mc_rng.normal(size=(n_mc, d_bg))
    eps_mc = mc_rng.normal(scale=0.5, size=(n_mc, d_pert))

    bg_mc = part_bg(zb_mc) + offset  # reused where a condition does not move the background

    def true_mean(u: NDArray) -> NDArray:
        bg_u = part_bg(zb_mc + u @ bg_shifts) + offset if bg_shift > 0 else bg_mc
        nu_u = scale * part_nu((u @ shifts + eps_mc) @ M.T)
        if noise == "poisson":
            return (5.0 * np.logaddexp(0.0, bg_u + nu_u)).mean(axis=0)
        return bg_u.mean(axis=0) + nu_u.mean(axis=0)

    eye = np.eye(n_singles)
    true_means = {CONTROL: true_mean(np.zeros(n_singles))}
    true_means |= {names[p]: true_mean(eye[p]) for p in range(n_singles)}
    scores = {}
    for a, b in combinations(range(n_singles), 2):
        true_means[f"{names[a]}+{names[b]}"] = tm = true_mean(eye[a] + eye[b])
        scores[(a, b)] = interaction_score(
            true_means[CONTROL], true_means[names[a]], true_means[names[b]], tm
        )
    pairs, hot = _choose_doubles(scores, n_doubles, min_interacting, interaction_threshold, rng)
    conds: list[tuple[str, NDArray[np.float64], int]] = [(CONTROL, np.zeros(n_singles), n_controls)]
    conds += [(names[p], eye[p], n_cells) for p in range(n_singles)]
    conds += [(f"{names[a]}+{names[b]}", eye[a] + eye[b], n_cells) for a, b in pairs]
    Xs, cs, zbs, zns = [], [], [], []
    for name, u, n in conds:
        u_rows = np.tile(u, (n, 1))
        z_bg, z_nu = latents(n, u_rows)
        mean = expression(z_bg, z_nu, u_rows)
        if noise == "gaussian":
            Xs.append(mean + rng.normal(scale=noise_sd, size=mean.shape))
        else:
            Xs.append(rng.poisson(5.0 * np.logaddexp(0.0, mean)).astype(np.float64))
        cs += [name] * n
        zbs.append(z_bg)
        zns.append(z_nu)
    used = {c for c, _, _ in conds}
    truth = {
        "z_bg": np.concatenate(zbs),
        "z_pert": np.concatenate(zns),
        "true_means": {c: m for c, m in true_means.items() if c in used},
        "interaction_scores": {f"{names[a]}+{names[b]}": v for (a, b), v in scores.items()},
        "W": W,
        "shifts": shifts,
        "bg_shifts": bg_shifts,
        "genes_of_node": genes_of,
    }
    genes = tuple(f"g{g:03d}" for g in range(n_genes))
    screen = Screen(np.concatenate(Xs), np.array(cs), names, genes, None, noise == "poisson", truth)
    doubles = [c for c, _, _ in conds[n_singles + 1 :]]
    hot_names = [f"{names[a]}+{names[b]}" for a, b in hot]
    return _split(screen, doubles, heldout, rng, hot_names)


def _split(
    screen: Screen,
    doubles: list[str],
    heldout: float,
    rng: np.random.Generator,
    interacting: list[str],
) -> Split:
    is_double = np.isin(screen.conditions, doubles)
    test = is_double.copy()
    for c in np.unique(screen.conditions[~is_double]):
        idx = np.flatnonzero(screen.conditions == c)
        test[rng.choice(idx, size=max(1, round(heldout * idx.size)), replace=False)] = True
    return Split(screen.subset(~test), screen.subset(test), list(doubles), interacting)


# --------------------------------------------------------------------------------------------
# semi-synthetic benchmark on pbmc68k_reduced


def _pbmc_path() -> Path:
    """The ``pbmc68k_reduced`` file inside the installed scanpy wheel (scanpy is not imported)."""
    import importlib.util

    spec = importlib.util.find_spec("scanpy")
    if spec is None or spec.origin is None:
        raise ImportError(
            "semisynthetic_pbmc reads pbmc68k_reduced from the scanpy wheel: "
            "install it with `pip install perturbedvae[pbmc]`"
        )
    path = Path(spec.origin).parent / "datasets" / "10x_pbmc68k_reduced.h5ad"
    if not path.exists():
        raise FileNotFoundError(f"pbmc68k_reduced is not shipped in this scanpy install ({path})")
    return path


def semisynthetic_pbmc(
    n_cells: int = 200,
    n_controls: int = 700,
    n_singles: int = 10,
    n_doubles: int = 20,
    *,
    effects: str = "programs",
    n_programs: int = 4,
    n_interactions: int = 3,
    min_interacting: float = 0.5,
    interaction_threshold: float = 0.2,
    heldout: float = 0.25,
    seed: SeedLike = 0,
) -> Split:
    """Planted perturbations on real PBMC backgrounds (``pbmc68k_reduced``, 700 × 765, ``.raw``).

    Cells are split 50/50 within each ``bulk_labels`` type into a train and a test pool.

    * ``effects="programs"`` (default): ``n_programs`` gene programs, each on 2.5% of the genes;
      each single moves the activity of 1–2 programs by ±U[1, 2], a double adds the two
      activities, and a program's genes respond through two leaky-ReLU units (slope 0.2, random
      kinks in [−1, 1], as the synthetic screen's z_ν part), so doubles that share a program
      interact and the others add. Each program's response is ×1.5 in a random half of the
      cell types. A single touches ≤ 5% of the genes.
    * ``effects="shifts"``: each single shifts ≤ 5% of genes by ±U[0.5, 1.5] (×1.5 in a random
      half of the cell types); a double adds its two shifts, plus a random 3-gene interaction
      (±U[0.5, 1.5]) for ``n_interactions`` of the candidate pairs.

    A condition resamples pool cells, adds its effect and N(0, 0.05²) jitter and clips at 0.
    Train conditions (controls, singles) draw from the train pool, held-out cells and doubles
    from the test pool. At least ``min_interacting`` of the ``n_doubles`` held-out doubles
    interact (:func:`interaction_score` of the true means ≥ ``interaction_threshold``).
    ``truth`` holds per cell ``cell_type`` (integer codes; names in ``cell_types``) and ``pcs``
    (the source cell's top-10 PCs), ``true_means`` (the effect applied to the whole test pool
    without jitter) and ``interaction_scores`` (every pair).
    """
    import anndata

    check_positive_int(n_singles, "n_singles", minimum=2)
    check_positive_int(n_programs, "n_programs")
    if effects not in ("programs", "shifts"):
        raise ValueError(f"effects must be 'programs' or 'shifts', got {effects!r}")
    _check_interaction_args(min_interacting, interaction_threshold)
    n_pairs = n_singles * (n_singles - 1) // 2
    if not 1 <= n_doubles <= n_pairs:
        raise ValueError(f"n_doubles must be in [1, {n_pairs}], got {n_doubles}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        adata = anndata.read_h5ad(_pbmc_path())
    raw = adata.raw.X
    base = np.asarray(raw.toarray() if hasattr(raw, "toarray") else raw, dtype=np.float64)
    genes = tuple(str(g) for g in adata.raw.var_names)
    types = np.asarray(adata.obs["bulk_labels"].astype(str))
    type_names = sorted(set(types))
    type_code = np.array([type_names.index(t) for t in types])
    centred = base - base.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    pcs = centred @ vt[:10].T
    rng = rng_from_seed(seed)
    pool_train, pool_test = [], []
    for t in range(len(type_names)):
        idx = rng.permutation(np.flatnonzero(type_code == t))
        half = (idx.size + 1) // 2
        pool_train += idx[:half].tolist()
        pool_test += idx[half:].tolist()
    G, T = base.shape[1], len(type_names)
    all_pairs = list(combinations(range(n_singles), 2))
    if effects == "programs":
        n_prog_genes = max(1, int(0.025 * G))
        prog_genes = [rng.choice(G, size=n_prog_genes, replace=False) for _ in range(n_programs)]
        W1 = rng.uniform(0.7, 1.3, (n_programs, 2)) * rng.choice([-1, 1], (n_programs, 2))
        b1 = rng.uniform(-1.0, 1.0, (n_programs, 2))
        W2 = np.zeros((n_programs, 2, G))
        for k in range(n_programs):
            W2[k][:, prog_genes[k]] = rng.uniform(0.5, 1.0, (2, n_prog_genes)) * rng.choice(
                [-1, 1], (2, n_prog_genes)
            )
        type_scale = np.where(rng.random((n_programs, T)) < 0.5, 1.5, 1.0)
        activity = np.zeros((n_singles, n_programs))
        for p in range(n_singles):
            hit = rng.choice(n_programs, size=rng.integers(1, 3), replace=False)
            activity[p, hit] = rng.uniform(1.0, 2.0, hit.size) * rng.choice([-1, 1], hit.size)

        def response(a: NDArray[np.float64]) -> NDArray[np.float64]:  # (K,) -> (K, G)
            h = _leaky(a[:, None] * W1 + b1) - _leaky(b1)
            return np.einsum("kh,khg->kg", h, W2)

        def effect_of(members: tuple[int, ...]) -> NDArray[np.float64]:  # (T, G)
            a = activity[list(members)].sum(0) if members else np.zeros(n_programs)
            return type_scale.T @ response(a)

        extra_of: dict[tuple[int, int], NDArray[np.float64]] = {}
        effects_single = np.stack([effect_of((p,)) for p in range(n_singles)])
    else:
        n_hit = max(1, int(0.05 * G))
        effects_single = np.zeros((n_singles, T, G))
        for p in range(n_singles):
            hit = rng.choice(G, size=n_hit, replace=False)
            eff = np.zeros(G)
            eff[hit] = rng.uniform(0.5, 1.5, n_hit) * rng.choice([-1, 1], n_hit)
            boosted = rng.random(T) < 0.5
            effects_single[p] = eff[None, :] * np.where(boosted, 1.5, 1.0)[:, None]
        extra_of = {}
        for i in rng.choice(n_pairs, size=min(n_interactions, n_pairs), replace=False):
            extra = np.zeros(G)
            hit = rng.choice(G, size=3, replace=False)
            extra[hit] = rng.uniform(0.5, 1.5, 3) * rng.choice([-1, 1], 3)
            extra_of[all_pairs[i]] = extra

        def effect_of(members: tuple[int, ...]) -> NDArray[np.float64]:
            out = sum((effects_single[p] for p in members), np.zeros((T, G)))
            return out + extra_of.get(members, np.zeros(G))  # type: ignore[arg-type]

    table = {m: effect_of(m) for m in [(), *((p,) for p in range(n_singles)), *all_pairs]}
    names = tuple(f"PERT{p}" for p in range(n_singles))
    test_pool = np.asarray(pool_test)

    def label(members: tuple[int, ...]) -> str:
        return "+".join(names[p] for p in members) if members else CONTROL

    true_means = {
        label(m): np.clip(base[test_pool] + eff[type_code[test_pool]], 0.0, None).mean(axis=0)
        for m, eff in table.items()
    }
    scores = {
        (a, b): interaction_score(
            true_means[CONTROL], true_means[names[a]], true_means[names[b]],
            true_means[label((a, b))],
        )
        for a, b in all_pairs
    }  # fmt: skip
    pairs, hot = _choose_doubles(scores, n_doubles, min_interacting, interaction_threshold, rng)

    conds: list[tuple[tuple[int, ...], int, list[int]]] = [((), n_controls, pool_train)]
    conds += [((p,), n_cells, pool_train) for p in range(n_singles)]
    # held-out cells of controls / singles come from the test pool
    n_ho = max(1, round(heldout * n_cells))
    conds += [((), max(1, round(heldout * n_controls)), pool_test)]
    conds += [((p,), n_ho, pool_test) for p in range(n_singles)]
    conds += [(pair, n_cells, pool_test) for pair in pairs]
    Xs, cs, ct, pc, is_test = [], [], [], [], []
    for k, (members, n, pool) in enumerate(conds):
        src = rng.choice(np.asarray(pool), size=n, replace=True)
        x = base[src] + table[members][type_code[src]] + rng.normal(scale=0.05, size=(n, G))
        Xs.append(np.clip(x, 0.0, None))
        cs += [label(members)] * n
        ct.append(type_code[src])
        pc.append(pcs[src])
        is_test += [k > n_singles] * n
    doubles = [label(pair) for pair in pairs]
    truth = {
        "cell_type": np.concatenate(ct),
        "pcs": np.concatenate(pc),
        "cell_types": type_names,
        "true_means": {c: true_means[c] for c in [CONTROL, *names, *doubles]},
        "interaction_scores": {label(pair): v for pair, v in scores.items()},
        "effects": effects_single,
    }
    screen = Screen(np.concatenate(Xs), np.array(cs), names, genes, None, False, truth)
    test = np.asarray(is_test)
    return Split(screen.subset(~test), screen.subset(test), doubles, [label(pair) for pair in hot])
