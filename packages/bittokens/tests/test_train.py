"""Acceptance item 9 (DDP on gloo equals one process with the doubled batch) and the optimiser."""

from __future__ import annotations

import copy
import time

import pytest
import torch

from bittokens import BitTokens, TinyGPT, fit
from bittokens._train import AdamW
from bittokens.data import make_task


def _model(seed: int = 0) -> TinyGPT:
    torch.manual_seed(seed)
    return TinyGPT(BitTokens(128), max_len=32).double()


def test_ddp_two_processes_equal_one_process_with_double_batch(torch_threads):
    task = make_task("minmax", 256, seed=3)
    base = _model()
    single = fit(copy.deepcopy(base), task, steps=10, batch_size=16, lr=1e-3, seed=5, world_size=1)
    start = time.perf_counter()
    ddp = fit(copy.deepcopy(base), task, steps=10, batch_size=8, lr=1e-3, seed=5, world_size=2)
    elapsed = time.perf_counter() - start
    diff = max(
        float((a - b).abs().max())
        for a, b in zip(single.model.state_dict().values(), ddp.model.state_dict().values())
    )
    moved = max(
        float((a - b).abs().max())
        for a, b in zip(base.state_dict().values(), ddp.model.state_dict().values())
    )
    assert moved > 1e-4  # training did change the weights
    assert diff <= 1e-9, diff
    assert len(ddp.losses) == 10
    assert max(abs(a - b) for a, b in zip(single.losses, ddp.losses)) <= 1e-9
    assert elapsed < 60


def test_adamw_matches_torch_optim():
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Linear(5, 7), torch.nn.Tanh(), torch.nn.Linear(7, 1)
    ).double()
    ref = copy.deepcopy(net)
    ours = AdamW(net.parameters(), lr=1e-2, betas=(0.9, 0.98), weight_decay=0.1)
    theirs = torch.optim.AdamW(ref.parameters(), lr=1e-2, betas=(0.9, 0.98), weight_decay=0.1)
    x = torch.randn(32, 5, dtype=torch.float64)
    for _ in range(20):
        for model, opt in ((net, ours), (ref, theirs)):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
    for a, b in zip(net.parameters(), ref.parameters()):
        assert torch.allclose(a, b, rtol=0, atol=1e-12)


def test_loss_falls_on_a_few_steps(torch_threads):
    model = _model(1).float()
    res = fit(model, make_task("add", 256, seed=0), steps=30, batch_size=32, lr=3e-3)
    first, last = sum(res.losses[:5]) / 5, sum(res.losses[-5:]) / 5
    assert last < 0.8 * first


def test_eval_callback_records_curve(torch_threads):
    calls = []
    fit(
        _model(2).float(),
        make_task("add", 64, seed=0),
        steps=4,
        batch_size=16,
        eval_fn=lambda m, s: calls.append(s) or float(s),
        eval_every=2,
    )
    assert calls == [2, 4]


def test_fit_bad_input():
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        fit(_model(), make_task("add", 64), steps=0)
    with pytest.raises(ValueError, match="lr must be finite and > 0"):
        fit(_model(), make_task("add", 64), steps=1, batch_size=8, lr=-1.0)
