"""A deliberately flawed 3D CNN risk model to audit, trained on the synthetic world.

:class:`RiskCNN3D`: four conv blocks (8-16-32-64 channels, 3³ kernels, stride 2 in the first three so
32³ -> 4³, GroupNorm in the last two, ReLU) with ``padding`` ``"zeros"`` (the default, as in Sybil's
3D ResNet), ``"reflect"`` or ``"circular"``; two-head attention pooling
:math:`z_k = \\sum_v \\mathrm{softmax}_v(w_k^\\top h_v)\\, h_v` concatenated with a global max
over voxels (Sybil also pools by attention and max); a six-year cumulative-hazard head
:math:`H_t = \\sum_{s \\le t} \\mathrm{softplus}(u_s^\\top z + c_s)` (monotone in ``t``) with
:math:`P(T \\le t) = 1 - e^{-H_t}`. The audited output is the year-``t`` risk logit
:math:`\\log(e^{H_t} - 1)` (default ``t = 6``).

Training data (:func:`training_set`): phantoms with 0-3 random nodules; the oracle logit ``L``
drives an exponential event time :math:`T \\sim \\mathrm{Exp}(\\lambda_0 e^{L})`, censored at 6
years. Two flaws are planted, as the spec asks: ECG electrodes in 80% of positive (``T <= 6``)
vs 20% of negative cases, and malignant nodules central (deeper half of the allowed lung positions)
in 85% of positives. ``location_balanced=True`` drops the second flaw (uniform placement).
Trained weights are cached under ``$SHNAP_CACHE`` (default ``~/.cache/shnap``), keyed by the
config hash. Setting after Sobieski, Grzywaczewski et al. (arXiv 2602.02560); ours.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ._checks import warn_outside_window
from ._oracle import OracleRisk
from ._progress import Progress, training_progress
from ._shipped import load_shipped
from ._world import INDEPENDENT_MAX_RADIUS, NoduleSpec, make_phantom, random_nodule_specs

__all__ = ["CNNConfig", "RiskCNN3D", "cache_dir", "train_risk_cnn", "training_set"]

Padding = Literal["zeros", "reflect", "circular"]
YEARS = 6
CNN_WEIGHTS_VERSION = "cnn-v3-world-v4"


def cache_dir() -> Path:
    """``$SHNAP_CACHE`` or ``~/.cache/shnap`` (created)."""
    path = Path(os.environ.get("SHNAP_CACHE", Path.home() / ".cache" / "shnap"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def read_blob(path: str | Path, keys: tuple[str, ...], what: str) -> dict[str, Any]:
    """The dict saved at ``path`` by ``torch.save``, or a ``ValueError`` naming the file and
    what is wrong with it (missing, unreadable, or without the ``keys`` of a ``what``)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} file {str(path)!r} does not exist")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:
        raise ValueError(
            f"{what} file {str(path)!r} is not a readable torch file (corrupt, truncated or "
            f"another format): {type(exc).__name__}: {exc}"
        ) from exc
    missing = [k for k in keys if not isinstance(blob, dict) or k not in blob]
    if missing:
        raise ValueError(f"{what} file {str(path)!r} holds no {missing} (not a saved {what})")
    return blob


def warn_retrain(path: Path, exc: Exception) -> None:
    """The warning of a cache file that cannot be used: it is retrained and overwritten."""
    text = str(exc) if str(path) in str(exc) else f"cache file {str(path)!r}: {exc}"
    warnings.warn(f"{text}; retraining and overwriting it", UserWarning, stacklevel=3)


class RiskCNN3D(nn.Module):
    """3D CNN with attention pooling and a six-year cumulative-hazard head (module docstring).

    Calling it on a numpy batch ``(B, 1, D, H, W)`` returns the year-``year`` logits as numpy
    (no gradient), so it is a :class:`~shnap.RiskModel`; on a tensor it returns a tensor.

    >>> m = RiskCNN3D(padding="reflect")
    >>> m(np.zeros((2, 1, 32, 32, 32), np.float32)).shape
    (2,)
    """

    def __init__(self, padding: Padding = "zeros", year: int = YEARS) -> None:
        super().__init__()
        if padding not in ("zeros", "reflect", "circular"):
            raise ValueError(f"padding must be 'zeros', 'reflect' or 'circular', got {padding!r}")
        if not 1 <= int(year) <= YEARS:
            raise ValueError(f"year must be in 1..{YEARS}, got {year}")
        self.padding, self.year = padding, int(year)
        self.name = f"cnn-{padding}"
        chans = [1, 8, 16, 32, 64]
        self.blocks = nn.ModuleList(
            nn.Sequential(
                nn.Conv3d(
                    chans[i],
                    chans[i + 1],
                    3,
                    stride=2 if i < 3 else 1,
                    padding=1,
                    padding_mode=padding,
                ),
                nn.GroupNorm(4, chans[i + 1]) if i >= 2 else nn.Identity(),
                nn.ReLU(),
            )
            for i in range(4)
        )
        self.attn = nn.Conv3d(64, 2, 1)
        self.head = nn.Linear(3 * 64, YEARS)

    def cumulative_hazard(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, 6)`` cumulative hazards ``H_1 <= ... <= H_6``."""
        h = x
        for block in self.blocks:
            h = block(h)
        flat = h.flatten(2)  # (B, 64, V)
        w = torch.softmax(self.attn(h).flatten(2), dim=-1)  # (B, 2, V): two attention heads
        z = torch.einsum("bcv,bkv->bkc", flat, w).flatten(1)  # (B, 128)
        z = torch.cat([z, flat.amax(-1)], dim=1)  # + global max (B, 192)
        return torch.cumsum(F.softplus(self.head(z)), dim=1)

    def forward(self, x: Any) -> Any:
        if not torch.is_tensor(x):
            arr = np.asarray(x, np.float32)
            if arr.size:
                warn_outside_window(arr, "x")
            with torch.no_grad():
                t = torch.as_tensor(arr)
                return self.forward(t).numpy().astype(np.float64)
        h = self.cumulative_hazard(x)[:, self.year - 1].clamp_min(1e-6)
        return h + torch.log(-torch.expm1(-h))  # log(e^H - 1)


def survival_nll(hazard: torch.Tensor, year: torch.Tensor) -> torch.Tensor:
    """Discrete-time survival NLL; ``year`` in 1..6 is the event year, 0 = no event by year 6.

    Event in year t: :math:`-\\log(S_{t-1} - S_t)`, censored: :math:`H_6`, :math:`S_t = e^{-H_t}`.
    """
    prev = torch.cat([torch.zeros_like(hazard[:, :1]), hazard[:, :-1]], 1)
    inc = (hazard - prev).clamp_min(1e-6)
    t = (year.clamp_min(1) - 1).long()
    h_prev = prev.gather(1, t[:, None])[:, 0]
    h_inc = inc.gather(1, t[:, None])[:, 0]
    event_ll = -h_prev + torch.log(-torch.expm1(-h_inc))
    censored_ll = -hazard[:, -1]
    return -torch.where(year > 0, event_ll, censored_ll).mean()


@dataclass(frozen=True)
class CNNConfig:
    """Training configuration (its hash keys the weight cache)."""

    padding: Padding = "zeros"
    location_balanced: bool = False
    n_cases: int = 3000
    epochs: int = 12
    batch_size: int = 32
    lr: float = 2e-3
    seed: int = 0
    electrode_pos: float = 0.8
    electrode_neg: float = 0.2
    central_pos: float = 0.85
    base_rate: float = 0.08
    #: phantoms of the depth-independent world (``make_phantom(depth_independent=True)``)
    depth_independent: bool = False

    def key(self) -> str:
        d = asdict(self)
        if not self.depth_independent:  # configs that predate the field keep their key
            del d["depth_independent"]
        blob = json.dumps({**d, "code": CNN_WEIGHTS_VERSION}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def training_set(
    config: CNNConfig, progress: Callable[[int], None] | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Images ``(n, 32, 32, 32)``, event years ``(n,)`` (0 = none by year 6) and electrode flags.

    Labels come from the oracle through an exponential hazard; placement and electrodes are then
    set by the label (the planted flaws). The oracle is location-invariant and blind to
    electrodes, so re-placing nodules keeps the label's meaning.
    """
    rng = np.random.default_rng([config.seed, 99])
    n = config.n_cases
    ind = config.depth_independent
    max_radius = INDEPENDENT_MAX_RADIUS if ind else 4.0
    images = np.empty((n, 32, 32, 32), np.float32)
    years = np.zeros(n, np.int64)
    electrodes = np.zeros(n, bool)
    for i in range(n):
        seed = config.seed * 1_000_003 + i
        specs = random_nodule_specs(int(rng.integers(0, 4)), rng, max_radius=max_radius)
        ph = make_phantom(32, nodules=specs, seed=seed, depth_independent=ind)
        logit = OracleRisk.for_phantom(ph).logit(ph.image)
        t_event = rng.exponential(1.0 / (config.base_rate * np.exp(logit)))
        positive = t_event <= YEARS
        years[i] = int(np.ceil(t_event)) if positive else 0
        el = rng.random() < (config.electrode_pos if positive else config.electrode_neg)
        central = positive and not config.location_balanced and rng.random() < config.central_pos
        if central:
            specs = [
                NoduleSpec(s.radius, s.kind, s.spiculation, "central") if s.malignant else s
                for s in specs
            ]
        if el or central:
            ph = make_phantom(
                32,
                nodules=specs,
                electrodes=int(el) * int(rng.integers(1, 3)),
                seed=seed,
                depth_independent=ind,
            )
        images[i] = ph.image
        electrodes[i] = el
        if progress is not None:
            progress(1)
    return images, years, electrodes


_DATA_FIELDS = (
    "location_balanced", "n_cases", "seed", "electrode_pos", "electrode_neg", "central_pos",
    "base_rate", "depth_independent",
)  # fmt: skip
_last_set: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}


def _shared_training_set(
    config: CNNConfig, progress: Callable[[int], None] | None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`training_set`'s images and years, kept for the next call with the same data
    fields (CNNs that differ only in padding or optimisation train on one drawn set)."""
    key = tuple(getattr(config, f) for f in _DATA_FIELDS)
    if key not in _last_set:
        _last_set.clear()
        images, years, _ = training_set(config, progress)
        _last_set[key] = (images, years)
    elif progress is not None:
        progress(config.n_cases)
    return _last_set[key]


def train_risk_cnn(
    config: CNNConfig | None = None,
    *,
    cache: bool = True,
    progress: Progress = None,
) -> tuple[RiskCNN3D, dict[str, Any]]:
    """Train (or load from the cache) a :class:`RiskCNN3D` under ``config``.

    Looked up in the cache (``$SHNAP_CACHE``), then among the weights shipped with the
    package (the reproduce's CNNs, float16), by the config's key; only a key found in neither
    is trained. Training prints one line on stderr first, then shows a progress bar when stderr is a
    terminal (``progress=True`` always, ``False`` neither; a callable gets the steps done). A
    cache file that cannot be read is retrained and overwritten, with a warning naming it.

    Returns the model (eval mode) and a record: config, seconds, final loss, training AUC of the
    6-year logit vs the label, whether it came from the cache.
    """
    if config is not None and not isinstance(config, CNNConfig):
        raise TypeError(f"config must be a CNNConfig or None, got {type(config).__name__}")
    config = config or CNNConfig()
    path = cache_dir() / f"riskcnn-{config.key()}.pt"
    model = RiskCNN3D(config.padding)
    if cache and path.is_file():
        try:
            blob = read_blob(path, ("state", "record"), "risk CNN cache")
            model.load_state_dict(blob["state"])
        except (ValueError, RuntimeError) as exc:
            warn_retrain(path, exc)
            model = RiskCNN3D(config.padding)
        else:
            model.eval()
            return model, {**blob["record"], "cached": True}
    shipped = load_shipped("riskcnn", config.key())
    if shipped is not None:
        model.load_state_dict(shipped[0]["net"])
        model.eval()
        return model, {**shipped[1]["record"], "cached": True, "shipped": True}
    t0 = time.perf_counter()
    torch.manual_seed(config.seed)
    n_batches = int(np.ceil(config.n_cases / config.batch_size))
    steps = config.epochs * n_batches
    where = f"cached in {path}" if cache else "not cached"
    with training_progress(
        progress,
        total=config.n_cases + steps,
        desc=f"risk CNN ({config.padding})",
        message=f"training the risk CNN ({config.padding} padding, {config.n_cases} phantoms, "
        f"{config.epochs} epochs) on first use; {where}",
    ) as step:
        images, years = _shared_training_set(config, step)
        t_data = time.perf_counter() - t0
        x = torch.as_tensor(images[:, None])
        y = torch.as_tensor(years)
        opt = torch.optim.Adam(model.parameters(), lr=config.lr)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=config.lr, total_steps=steps)
        gen = torch.Generator().manual_seed(config.seed)
        model.train()
        loss_val = float("nan")
        for _ in range(config.epochs):
            perm = torch.randperm(len(x), generator=gen)
            for start in range(0, len(x), config.batch_size):
                idx = perm[start : start + config.batch_size]
                loss = survival_nll(model.cumulative_hazard(x[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                loss_val = float(loss.detach())
                if step is not None:
                    step(1)
    model.eval()
    with torch.no_grad():
        logits = torch.cat([model(x[i : i + 128]) for i in range(0, len(x), 128)]).numpy()
    pos = years > 0
    auc = _auc(logits[pos], logits[~pos]) if pos.any() and (~pos).any() else float("nan")
    record = {
        "config": asdict(config),
        "seconds": time.perf_counter() - t0,
        "data_seconds": t_data,
        "final_loss": loss_val,
        "train_auc": auc,
        "positive_rate": float(pos.mean()),
        "cached": False,
    }
    if cache:
        torch.save({"state": model.state_dict(), "record": record}, path)
    return model, record


def _auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Mann-Whitney AUC (ties count one half)."""
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0).sum() + 0.5 * (diff == 0).sum()) / diff.size)
