"""The city container and the synthetic city with known ground truth (MetaStreet benchmark).

``make_city`` builds a perturbed ``n_side x n_side`` grid of intersections; every grid edge is
a street segment (``2 n (n-1)`` streets, 1,984 at ``n_side=32``). Two streets are adjacent when
they share an intersection. A latent field ``z`` is a Gaussian process (RBF kernel,
length-scale ``length_scale`` blocks) at segment midpoints; classes are its quartiles. Each
street gets 5-20 images: 32x32 maps over 12 categories drawn as bands and blobs. The latent
rank ``u`` sets how likely trees touch buildings (vs float in the sky) and cars sit on the road
(vs on the sidewalk), and, unless ``signal="adjacency_only"``, how many trees / cars there are.
Texts are templated descriptions of noisy attributes. ``shuffle_space=True`` permutes the
latent over streets before images and texts are drawn, destroying spatial autocorrelation.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import SeedLike, rng_from_seed

__all__ = ["CATEGORIES", "CityData", "describe", "make_city", "with_label_rate"]

CATEGORIES = (
    "road", "sidewalk", "building", "tree", "grass", "car",
    "person", "sky", "pole", "sign", "wall", "water",
)  # fmt: skip
ROAD, SIDEWALK, BUILDING, TREE, GRASS, CAR, PERSON, SKY, POLE, SIGN, WALL, WATER = range(12)


@dataclass
class CityData:
    """A city: images per street, the street graph, texts or text embeddings, labels, masks.

    Attributes:
        maps: list of 2-D integer category maps (all images of the city).
        image_street: street index of each map (images of a street are in capture order).
        edges: ``(E, 2)`` undirected street pairs sharing an intersection (no self-loops needed).
        n_streets: number of streets.
        labels: ``(n_streets,)`` int class per street.
        masks: ``{"train", "val", "test"}`` boolean masks over streets.
        texts: one description per street, or ``None`` when ``text_emb`` is given.
        text_emb: ``(n_streets, D)`` precomputed text embeddings, or ``None``.
        n_all: number of category ids a map may use.
        coords: ``(n_streets, 2)`` segment midpoints (for plotting), optional.
        segments: ``(n_streets, 2, 2)`` segment endpoints (for plotting), optional.
        latent: the ground-truth latent field (synthetic cities only).
    """

    maps: Sequence[NDArray[np.int64]]
    image_street: NDArray[np.int64]
    edges: NDArray[np.int64]
    n_streets: int
    labels: NDArray[np.int64]
    masks: Mapping[str, NDArray[np.bool_]]
    texts: Sequence[str] | None = None
    text_emb: NDArray[np.float64] | None = None
    n_all: int = len(CATEGORIES)
    coords: NDArray[np.float64] | None = None
    segments: NDArray[np.float64] | None = None
    latent: NDArray[np.float64] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        n = int(self.n_streets)
        if n < 2:
            raise ValueError(f"n_streets must be >= 2, got {n}")
        edges = np.asarray(self.edges)
        if edges.ndim != 2 or edges.shape[1] != 2 or edges.dtype.kind not in "iu":
            raise ValueError(f"edges must be an (E, 2) integer array, got {edges.shape}")
        if edges.size and (edges.min() < 0 or edges.max() >= n):
            raise ValueError(f"edges name unknown streets: ids must lie in [0, {n})")
        self.edges = edges.astype(np.int64)
        self.image_street = np.asarray(self.image_street, dtype=np.int64)
        if self.image_street.shape != (len(self.maps),):
            raise ValueError("image_street must give one street index per map")
        if self.image_street.size and (self.image_street.min() < 0 or self.image_street.max() >= n):
            raise ValueError(f"image_street ids must lie in [0, {n})")
        self.labels = np.asarray(self.labels, dtype=np.int64)
        if self.labels.shape != (n,):
            raise ValueError(f"labels must have shape ({n},), got {self.labels.shape}")
        if self.texts is None and self.text_emb is None:
            raise ValueError("give texts or text_emb")
        if self.texts is not None and len(self.texts) != n:
            raise ValueError(f"texts must hold {n} strings, got {len(self.texts)}")
        for key in ("train", "val", "test"):
            if key not in self.masks:
                raise ValueError(f"masks must contain {key!r}")

    def mask(self, split: str) -> NDArray[np.bool_]:
        """The boolean mask of ``split`` ("train", "val" or "test")."""
        m = np.asarray(self.masks[split], dtype=bool)
        if m.shape != (self.n_streets,):
            raise ValueError(f"masks[{split!r}] must have shape ({self.n_streets},)")
        return m


def _level(x: float) -> str:
    return "very low" if x < -1 else "low" if x < 0 else "high" if x < 1 else "very high"


def describe(attributes: Mapping[str, float], task: str) -> str:
    """A templated description of a street's (noisy) attributes for ``task``.

    The task prompt chooses what is mentioned (the paper asks an LLM; any string works).

    >>> describe({"greenery": 1.5, "traffic": -0.3, "shops": 0.2}, "function")
    'A street with very high greenery and low traffic.'
    """
    wanted = {"function": ("greenery", "traffic"), "poi": ("shops", "traffic")}
    keys = wanted.get(task, tuple(attributes))
    parts = [f"{_level(attributes[k])} {k}" for k in keys if k in attributes]
    return "A street with " + " and ".join(parts) + "."


def _grid(n: int, rng: np.random.Generator) -> tuple[NDArray, NDArray, NDArray]:
    ij = np.stack(np.meshgrid(np.arange(n), np.arange(n), indexing="ij"), -1).reshape(-1, 2)
    pts = ij + rng.uniform(-0.25, 0.25, size=ij.shape)
    node = np.arange(n * n).reshape(n, n)
    segs = [(node[i, j], node[i, j + 1]) for i in range(n) for j in range(n - 1)]
    segs += [(node[i, j], node[i + 1, j]) for i in range(n - 1) for j in range(n)]
    seg = np.asarray(segs)
    # streets sharing an intersection
    inc: list[list[int]] = [[] for _ in range(n * n)]
    for s, (a, b) in enumerate(seg):
        inc[a].append(s)
        inc[b].append(s)
    edges = {(min(x, y), max(x, y)) for lst in inc for x in lst for y in lst if x != y}
    return pts, seg, np.asarray(sorted(edges), dtype=np.int64)


def _draw(rng: np.random.Generator, u: float, counts_follow: bool, size: int) -> NDArray[np.int64]:
    m = np.empty((size, size), dtype=np.int64)
    h1, h2, h3 = (int(rng.integers(a, b)) for a, b in ((6, 10), (16, 20), (22, 25)))
    m[:h1] = SKY
    m[h1:h2] = BUILDING
    m[h2:h3] = SIDEWALK
    m[h3:] = ROAD
    lam_tree = 1.0 + 3.0 * u if counts_follow else 2.5
    lam_car = 1.0 + 3.0 * (1 - u) if counts_follow else 2.5
    for _ in range(rng.poisson(lam_tree)):
        w, h = int(rng.integers(3, 6)), int(rng.integers(3, 6))
        x = int(rng.integers(0, size - w))
        touch = rng.random() < u
        y = h1 - h // 2 if touch else int(rng.integers(0, max(h1 - h - 1, 1)))
        m[max(y, 0) : y + h, x : x + w] = TREE
    for _ in range(rng.poisson(lam_car)):
        w, h = int(rng.integers(4, 7)), int(rng.integers(2, 4))
        x = int(rng.integers(0, size - w))
        on_road = rng.random() < 1 - u
        y = int(rng.integers(h3 + 1, size - h)) if on_road else h2 + 1
        m[y : y + h, x : x + w] = CAR
    for cat in (PERSON, POLE, SIGN, GRASS, WALL, WATER):
        if rng.random() < 0.3:
            w, h = int(rng.integers(1, 4)), int(rng.integers(2, 5))
            x, y = int(rng.integers(0, size - w)), int(rng.integers(0, size - h))
            m[y : y + h, x : x + w] = cat
    return m


def make_city(
    n_side: int = 32,
    length_scale: float = 5.0,
    signal: str = "both",
    shuffle_space: bool = False,
    seed: SeedLike = 0,
    *,
    n_classes: int = 4,
    images_per_street: tuple[int, int] = (5, 20),
    image_size: int = 32,
    text_noise: float = 1.0,
    task: str = "function",
    split: tuple[float, float] = (0.05, 0.15),
) -> CityData:
    """The synthetic city described in the module docstring (stratified 5/15/80 split)."""
    if n_side < 3:
        raise ValueError(f"n_side must be >= 3, got {n_side}")
    if signal not in ("both", "adjacency_only"):
        raise ValueError(f"signal must be 'both' or 'adjacency_only', got {signal!r}")
    if not length_scale > 0:
        raise ValueError(f"length_scale must be > 0, got {length_scale}")
    rng = rng_from_seed(seed)
    pts, seg, edges = _grid(n_side, rng)
    mid = pts[seg].mean(1)
    n = len(seg)
    d2 = ((mid[:, None, :] - mid[None, :, :]) ** 2).sum(-1)
    cov = np.exp(-0.5 * d2 / length_scale**2) + 1e-6 * np.eye(n)
    z = np.linalg.cholesky(cov) @ rng.standard_normal(n)
    if shuffle_space:
        z = z[rng.permutation(n)]
    ranks = np.argsort(np.argsort(z)) / (n - 1)
    labels = np.minimum((ranks * n_classes).astype(np.int64), n_classes - 1)
    zs = (z - z.mean()) / z.std()
    maps, owner = [], []
    lo, hi = images_per_street
    for s in range(n):
        for _ in range(int(rng.integers(lo, hi + 1))):
            maps.append(_draw(rng, float(ranks[s]), signal == "both", image_size))
            owner.append(s)
    texts = []
    for s in range(n):
        attrs = {
            "greenery": zs[s] + text_noise * rng.standard_normal(),
            "traffic": -zs[s] + text_noise * rng.standard_normal(),
            "shops": text_noise * rng.standard_normal(),
        }
        texts.append(describe(attrs, task))
    masks = _stratified_split(labels, split, rng)
    return CityData(
        maps=maps,
        image_street=np.asarray(owner),
        edges=edges,
        n_streets=n,
        labels=labels,
        masks=masks,
        texts=texts,
        coords=mid,
        segments=pts[seg],
        latent=z,
    )


def _stratified_split(
    labels: NDArray[np.int64], split: tuple[float, float], rng: np.random.Generator
) -> dict[str, NDArray[np.bool_]]:
    n = labels.size
    train, val = np.zeros(n, bool), np.zeros(n, bool)
    for c in np.unique(labels):
        idx = rng.permutation(np.flatnonzero(labels == c))
        a = max(1, round(split[0] * idx.size))
        b = max(1, round(split[1] * idx.size))
        train[idx[:a]] = True
        val[idx[a : a + b]] = True
    return {"train": train, "val": val, "test": ~(train | val)}


def with_label_rate(
    city: CityData, rate: float, seed: SeedLike = 0, *, val_rate: float = 0.10
) -> CityData:
    """``city`` with ``rate`` of its streets labelled for training, for a label-efficiency sweep.

    The labelled pool is the city's train and validation streets; the test streets stay as
    they are. Per class (stratified), a ``val_rate`` share of all streets becomes the
    validation set, the same for every ``rate``; the training set is the first ``rate`` share
    of a fixed permutation of the rest, so the training sets of growing rates are nested.
    ``rate + val_rate`` may not exceed the pool's share of streets.

    >>> c = make_city(6, seed=0, images_per_street=(1, 1))
    >>> low, high = with_label_rate(c, 0.05), with_label_rate(c, 0.10)
    >>> bool(np.all(low.mask("train") <= high.mask("train")))  # nested
    True
    """
    pool = city.mask("train") | city.mask("val")
    share = pool.mean()
    if not (isinstance(rate, float | int) and 0.0 < float(rate) < 1.0):
        raise ValueError(f"rate must lie in (0, 1), got {rate!r}")
    if not (0.0 < val_rate < 1.0):
        raise ValueError(f"val_rate must lie in (0, 1), got {val_rate!r}")
    if rate + val_rate > share + 0.01:  # per-class rounding moves the pool by a few streets
        raise ValueError(
            f"rate + val_rate must not exceed the labelled pool's share of streets "
            f"({share:.3f}), got {rate} + {val_rate}"
        )
    rng = rng_from_seed(seed)
    train = np.zeros(city.n_streets, bool)
    val = np.zeros(city.n_streets, bool)
    for c in np.unique(city.labels[pool]):
        idx = rng.permutation(np.flatnonzero(pool & (city.labels == c)))
        n_c = np.sum(city.labels == c)
        b = min(max(1, round(val_rate * n_c)), idx.size - 1)
        a = min(max(1, round(rate * n_c)), idx.size - b)
        val[idx[:b]] = True
        train[idx[b : b + a]] = True
    masks = {"train": train, "val": val, "test": city.mask("test").copy()}
    out = copy.copy(city)  # shallow: shares the label-free feature and text caches
    out.masks = masks
    return out
