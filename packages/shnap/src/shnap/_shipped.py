"""Weights shipped with the package: the default bridge and the reproduce's CNNs, float16.

A shipped file ``weights/<kind>-<key>.npz`` holds float16 state dicts (one array per tensor,
named ``<network>/<tensor>``) and a ``__meta__`` JSON string with the cache key it was trained
under, the network flags and the training record. It is found only by the exact key of the
requested configs and code version, so a changed config or code never loads stale weights:
it is trained (announced, cached) as before. :func:`write_shipped` writes one from trained
networks (``scripts/ship_weights.py`` does this for the defaults).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

__all__ = ["SHIPPED_DIR", "load_shipped", "write_shipped"]

SHIPPED_DIR = Path(__file__).with_name("weights")


def write_shipped(
    kind: str, key: str, states: dict[str, dict[str, torch.Tensor]], meta: dict[str, Any]
) -> Path:
    """Write ``states`` (network name -> state dict) as float16 to ``weights/<kind>-<key>.npz``."""
    arrays: dict[str, np.ndarray] = {}
    for net, state in states.items():
        for name, tensor in state.items():
            arr = tensor.detach().cpu().numpy()
            arrays[f"{net}/{name}"] = arr.astype(np.float16) if arr.dtype.kind == "f" else arr
    blob = json.dumps({**meta, "key": key, "kind": kind}, default=float)
    SHIPPED_DIR.mkdir(exist_ok=True)
    path = SHIPPED_DIR / f"{kind}-{key}.npz"
    np.savez_compressed(path, __meta__=np.array(blob), **arrays)
    return path


def load_shipped(
    kind: str, *keys: str
) -> tuple[dict[str, dict[str, torch.Tensor]], dict[str, Any]] | None:
    """The shipped state dicts (float32) and metadata for the first of ``keys`` that ships,
    or None when none does.

    A file whose stored key differs from its name's is refused (``ValueError`` naming it)."""
    key = next((k for k in keys if (SHIPPED_DIR / f"{kind}-{k}.npz").is_file()), None)
    if key is None:
        return None
    path = SHIPPED_DIR / f"{kind}-{key}.npz"
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["__meta__"]))
        if meta.get("key") != key or meta.get("kind") != kind:
            raise ValueError(
                f"shipped weights {str(path)!r} hold key {meta.get('key')!r} of "
                f"{meta.get('kind')!r}, expected {key!r} of {kind!r}"
            )
        states: dict[str, dict[str, torch.Tensor]] = {}
        for name in z.files:
            if name == "__meta__":
                continue
            net, tensor = name.split("/", 1)
            arr = z[name]
            t = torch.from_numpy(arr.astype(np.float32) if arr.dtype.kind == "f" else arr)
            states.setdefault(net, {})[tensor] = t
    return states, meta
