"""Train the default networks and write them as the package's shipped float16 weights.

    python packages/shnap/scripts/ship_weights.py bridge --work DIR [--max-new-jobs K]
    python packages/shnap/scripts/ship_weights.py cnn [--quick]
    python packages/shnap/scripts/ship_weights.py repaint

``bridge`` trains ``Bridge.pretrained()``'s networks (default ``TrainConfig`` and
``BridgeConfig``) as jobs of :class:`icml26_shared.jobs.JobRunner`, cached under ``DIR``: the
training data, then each network in segments of ``--segment-steps`` steps, each segment
resuming from the state the one before returned (bit-identical to one training). With
``--max-new-jobs K`` a call runs at most K jobs and exits with status 3 while jobs remain; the
same command resumes. When both networks are done it writes
``src/shnap/weights/bridge-<key>.npz``. ``cnn`` trains (or reads from the cache) the CNNs of
``python -m shnap reproduce`` (``--quick``: quick sizes) and writes one file per CNN.
``repaint`` trains (or reads from the cache) the default ``RePaint.pretrained()`` UNet, the
full reproduce's peer.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from icml26_shared.jobs import Job, JobRunner, RunPaused
from icml26_shared.threads import threads
from shnap._bridge import Bridge, BridgeConfig, FitState, TrainConfig
from shnap._shipped import write_shipped
from shnap._weights import weights_key

#: bumped when a job of this script returns something else for the same configs
CODE_VERSION = 1


def _data(train: TrainConfig) -> tuple[Any, ...]:
    """Job: the training data (crops, pairs, removal masks) and the seconds they took."""
    t0 = time.perf_counter()
    return (*Bridge.training_data(train), time.perf_counter() - t0)


def _segment(
    which: int,
    until: int,
    data: tuple[Any, ...],
    previous: FitState | None,
    train: TrainConfig,
    config: BridgeConfig,
) -> FitState:
    """Job: network ``which`` trained from ``previous`` up to step ``until`` (two threads)."""
    crops, pairs, removal, _ = data
    with threads(2):
        return Bridge.fit_network(
            which, crops, train, config, pairs, removal, resume=previous, until=until
        )[1]


def _bridge(work: Path, max_new_jobs: int | None, segment_steps: int) -> int:
    train, config = TrainConfig(), BridgeConfig()
    key = weights_key(train, config)
    runner = JobRunner(
        work, {"key": key, "code": CODE_VERSION, "segment": segment_steps}, workers=1
    )
    left = max_new_jobs

    def run(job: Job) -> Any:  # one job at a time: each segment needs the one before
        nonlocal left
        if not runner.cached([job]):
            if left == 0:
                raise RunPaused(max_new_jobs or 0, 1)
            left = None if left is None else left - 1
        return runner.run([job])[job.name]

    data = run(Job("data", _data, (train,)))
    states = []
    for which in range(2 if train.split else 1):
        state = None
        for until in range(segment_steps, train.steps + segment_steps, segment_steps):
            until = min(until, train.steps)
            state = run(
                Job(f"net{which}-{until}", _segment, (which, until, data, state, train, config))
            )
        states.append(state)
    _, pairs, removal, data_s = data
    train_s = sum(s.seconds for s in states)
    bridge = Bridge.from_states(states, train, config, train_s, pairs, removal)
    record = {
        **bridge.record,
        "data_seconds": data_s,
        "threads": 2,
        "weights": "float16, shipped",
    }
    states_out = {"unet": bridge.unet.state_dict()}
    if bridge.insert_unet is not None:
        states_out["insert_unet"] = bridge.insert_unet.state_dict()
    meta = {"cond": bool(bridge.unet.cond), "record": record}
    path = write_shipped("bridge", key, states_out, meta)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB; {train_s:.0f} s training)")
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
    from shnap._fills import DDPMConfig, RePaint

    config, n_crops = DDPMConfig(), 4000
    rp = RePaint.pretrained(config, n_crops, progress=False)
    record = {**rp.record, "cached": False, "weights": "float16, shipped"}
    key = f"{weights_key(config)}-{n_crops}"
    path = write_shipped("repaint", key, {"unet": rp.unet.state_dict()}, {"record": record})
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("bridge", "cnn", "repaint"))
    ap.add_argument("--work", type=Path, default=Path("ship-work"))
    ap.add_argument("--max-new-jobs", type=int, default=None, help="jobs per call (bridge)")
    ap.add_argument("--segment-steps", type=int, default=130, help="steps per bridge job")
    ap.add_argument("--quick", action="store_true", help="the quick reproduce's CNNs")
    args = ap.parse_args(argv)
    if args.what == "bridge":
        return _bridge(args.work, args.max_new_jobs, args.segment_steps)
    with threads(2):
        if args.what == "repaint":
            return _repaint()
        return _cnns(args.quick)


if __name__ == "__main__":
    raise SystemExit(main())
