"""Keys of trained weights: the hash of the configs that change them and a weights version.

A network's weights are cached (``$SHNAP_CACHE``) and shipped with the package under
:func:`weights_key`; :data:`WEIGHTS_VERSION` is bumped when the code trains different weights
from the same configs (the CHANGELOG tells each version's change).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from shnap._bridge_config import BridgeConfig, TrainConfig
from shnap._precision import native_bf16

__all__ = ["SAMPLER_FIELDS", "WEIGHTS_VERSION", "shipped_keys", "weights_key"]

#: bumped when the bridge's (or RePaint's) training gives other weights for the same configs
WEIGHTS_VERSION = 7

#: sampler settings: they do not change the trained weights, so they are not in the cache key
SAMPLER_FIELDS = ("steps", "t_end", "rho", "margin", "crop", "insert_steps")


def weights_key(*configs: Any, auto_bf16: bool | None = None) -> str:
    """Cache key of ``configs`` (sampler settings aside) and the weights version. A ``bf16=None``
    (auto) config is keyed by the precision it trains in here (float32 and bf16 weights never
    share a key), or by ``auto_bf16`` when given."""
    dicts = [asdict(c) for c in configs]
    for c, d in zip(configs, dicts):
        if isinstance(c, BridgeConfig):
            for f in SAMPLER_FIELDS:
                d.pop(f)
        if isinstance(c, TrainConfig) and d["loss"] == "l1":  # keys from before the field
            d.pop("loss")
        if "bf16" in d and d["bf16"] is None:
            d["bf16"] = native_bf16() if auto_bf16 is None else auto_bf16
    blob = json.dumps([*dicts, WEIGHTS_VERSION], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def shipped_keys(*configs: Any) -> list[str]:
    """Keys under which shipped weights may serve ``configs``: their own key, then, for an auto
    precision (``bf16=None``), the float32 key. The package's weights were trained in float32;
    a CPU with native bf16 (which keys auto configs as bf16) loads them instead of training."""
    keys = [weights_key(*configs)]
    if any(getattr(c, "bf16", False) is None for c in configs):
        keys.append(weights_key(*configs, auto_bf16=False))
    return list(dict.fromkeys(keys))
