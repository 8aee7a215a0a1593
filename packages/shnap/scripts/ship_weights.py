"""Train the default networks and write them as the package's shipped float16 weights.

    python packages/shnap/scripts/ship_weights.py bridge --work DIR [--budget 540]
    python packages/shnap/scripts/ship_weights.py cnn [--quick]
    python packages/shnap/scripts/ship_weights.py repaint

``bridge`` trains ``Bridge.pretrained()``'s networks (default ``TrainConfig`` and
``BridgeConfig``) in resumable chunks: the training data are written to ``DIR`` once, each
call trains for at most ``--budget`` seconds, saves a checkpoint and exits with status 3 until
both networks are done, then writes ``src/shnap/weights/bridge-<key>.npz``. ``cnn`` trains
(or reads from the cache) the CNNs of ``python -m shnap reproduce`` (``--quick``: quick sizes)
and writes one file per CNN. ``repaint`` trains (or reads from the cache) the default
``RePaint.pretrained()`` UNet, the full reproduce's peer.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from shnap._bridge import Bridge, BridgeConfig, EditPairs, TrainConfig, TrainingPaused, _key
from shnap._shipped import write_shipped

_PAIR_FIELDS = ("x", "x0", "mask", "prior", "prior_mask", "insertion")


def _bridge(work: Path, budget: float) -> int:
    t_start = time.perf_counter()
    deadline = t_start + budget
    train, config = TrainConfig(), BridgeConfig()
    key = _key(train, config)
    work.mkdir(parents=True, exist_ok=True)
    data = work / f"data-{key}.npz"
    log = work / f"log-{key}.json"
    spent = json.loads(log.read_text()) if log.is_file() else {"train_s": 0.0, "data_s": 0.0}
    if not data.is_file():
        t0 = time.perf_counter()
        crops, pairs, removal = Bridge.training_data(train)
        extra = {} if removal is None else {"rem_x": removal[0], "rem_m": removal[1]}
        assert pairs is not None
        np.savez(data, crops=crops, **{f"p_{f}": getattr(pairs, f) for f in _PAIR_FIELDS}, **extra)
        spent["data_s"] = time.perf_counter() - t0
        log.write_text(json.dumps(spent))
    with np.load(data) as z:
        crops = z["crops"]
        pairs = EditPairs(*(z[f"p_{f}"] for f in _PAIR_FIELDS))
        removal = (z["rem_x"], z["rem_m"]) if "rem_x" in z.files else None
    t0 = time.perf_counter()
    try:
        bridge = Bridge._train(
            crops, train, config, None, pairs, removal, checkpoint=work / key, deadline=deadline
        )
    except TrainingPaused as exc:
        spent["train_s"] += time.perf_counter() - t0
        log.write_text(json.dumps(spent))
        print(f"bridge {key}: {exc} ({spent['train_s']:.0f} s of training so far)")
        return 3
    spent["train_s"] += time.perf_counter() - t0
    record = {
        **bridge.record,
        "seconds": spent["train_s"],
        "data_seconds": spent["data_s"],
        "threads": torch.get_num_threads(),
        "weights": "float16, shipped",
    }
    states = {"unet": bridge.unet.state_dict()}
    if bridge.insert_unet is not None:
        states["insert_unet"] = bridge.insert_unet.state_dict()
    path = write_shipped("bridge", key, states, {"cond": bool(bridge.unet.cond), "record": record})
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB; {spent['train_s']:.0f} s training)")
    return 0


def _cnns(quick: bool) -> int:
    from shnap._cnn import train_risk_cnn
    from shnap._reproduce import FULL, QUICK, cnn_configs

    for config in cnn_configs(QUICK if quick else FULL):
        model, record = train_risk_cnn(config, progress=False)
        record = {**record, "cached": False, "weights": "float16, shipped"}
        path = write_shipped(
            "riskcnn", config.key(), {"net": model.state_dict()}, {"record": record}
        )
        print(f"wrote {path} ({path.stat().st_size / 1e3:.0f} kB): {asdict(config)}")
    return 0


def _repaint() -> int:
    from shnap._bridge import _key
    from shnap._fills import DDPMConfig, RePaint

    config, n_crops = DDPMConfig(), 4000
    rp = RePaint.pretrained(config, n_crops, progress=False)
    record = {**rp.record, "cached": False, "weights": "float16, shipped"}
    key = f"{_key(config)}-{n_crops}"
    path = write_shipped("repaint", key, {"unet": rp.unet.state_dict()}, {"record": record})
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("bridge", "cnn", "repaint"))
    ap.add_argument("--work", type=Path, default=Path("ship-work"))
    ap.add_argument("--budget", type=float, default=540.0, help="seconds per call (bridge)")
    ap.add_argument("--quick", action="store_true", help="the quick reproduce's CNNs")
    args = ap.parse_args(argv)
    torch.set_num_threads(2)
    if args.what == "bridge":
        return _bridge(args.work, args.budget)
    if args.what == "repaint":
        return _repaint()
    return _cnns(args.quick)


if __name__ == "__main__":
    sys.exit(main())
