"""Acceptance item 9 (DDP on gloo equals one process with the doubled batch) and the optimiser."""

from __future__ import annotations

import copy
import time

import numpy as np
import pytest
import torch

from bittokens import BitTokens, TinyGPT, fit
from bittokens._optim import AdamW, Muon, newton_schulz, param_groups
from bittokens.data import make_task


def _model(seed: int = 0) -> TinyGPT:
    torch.manual_seed(seed)
    return TinyGPT(BitTokens(128), max_len=32).double()


def test_ddp_two_processes_equal_one_process_with_double_batch(torch_threads):
    task = make_task("minmax", 256, seed=3)
    base = _model()
    kw = dict(steps=10, lr=1e-3, seed=5, optimizer="adamw")
    single = fit(copy.deepcopy(base), task, batch_size=16, world_size=1, **kw)
    start = time.perf_counter()
    ddp = fit(copy.deepcopy(base), task, batch_size=8, world_size=2, **kw)
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
    res = fit(model, make_task("add", 256, seed=0), steps=30, batch_size=32)
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


def test_muon_step_is_torch_optim_muon():
    """With bfloat16 Newton-Schulz our step is torch.optim.Muon's bit for bit; float32 (the
    CPU default) stays within bfloat16 rounding of it."""
    torch.manual_seed(0)
    ref = torch.nn.Parameter(torch.randn(12, 5))
    ours_bf16, ours_f32 = copy.deepcopy(ref), copy.deepcopy(ref)
    opts = [
        torch.optim.Muon([ref], lr=0.02, weight_decay=0.1),
        Muon([ours_bf16], lr=0.02, weight_decay=0.1, ns_dtype=torch.bfloat16),
        Muon([ours_f32], lr=0.02, weight_decay=0.1),
    ]
    for _ in range(5):
        for p, opt in zip((ref, ours_bf16, ours_f32), opts):
            opt.zero_grad()
            (p.sin().sum() + p.pow(2).sum()).backward()
            opt.step()
    assert torch.equal(ref, ours_bf16)
    assert 0 < float((ref - ours_f32).detach().abs().max()) < 0.02 * 5 * 0.05


def test_newton_schulz_orthogonalises():
    g = torch.randn(64, 16, generator=torch.Generator().manual_seed(1))
    o = newton_schulz(g, dtype=torch.float32)
    s = torch.linalg.svdvals(o)
    assert o.shape == g.shape and float(s.min()) > 0.5 and float(s.max()) < 1.25
    with pytest.raises(ValueError, match="2D parameters"):
        Muon([torch.nn.Parameter(torch.zeros(3))])


def test_param_groups_follow_the_paper():
    model = _model()
    groups = param_groups(model)
    ids = [id(p) for g in groups.values() for p in g]
    assert sorted(ids) == sorted(id(p) for p in model.parameters())  # a partition
    assert all(p.ndim == 2 for p in groups["hidden"]) and all(p.ndim < 2 for p in groups["scalar"])
    assert groups["embed"] == [model.tok.weight]
    assert {id(p) for p in groups["head"]} == {
        id(model.pos.weight),
        *(id(p) for p in model.scheme.parameters() if p.ndim >= 2),
    }
    assert len(groups["hidden"]) == 4 * len(model.blocks)


def test_muon_and_adamw_both_train_and_differ(torch_threads):
    task = make_task("add", 256, seed=0)
    runs = {
        name: fit(_model(1).float(), task, steps=30, batch_size=32, optimizer=name)
        for name in ("muon", "adamw")
    }
    for res in runs.values():
        assert sum(res.losses[-5:]) < 0.8 * sum(res.losses[:5])
    assert runs["muon"].losses[-1] != runs["adamw"].losses[-1]


def test_curriculum_starts_with_the_easiest_examples(torch_threads):
    from bittokens import _train

    difficulty = np.arange(1000, dtype=np.float64) % 100
    gen = _train._curriculum_batches(difficulty, 100, 50, 1, 0, 0)
    first = difficulty[next(gen).numpy()]
    assert first.max() <= 10  # frontier at 10% of the range
    last = [difficulty[b.numpy()] for b in gen][-1]
    assert last.max() > 50
    with pytest.raises(ValueError, match="curriculum must hold one finite difficulty"):
        fit(_model(), make_task("add", 64), steps=1, batch_size=8, curriculum=[1.0, 2.0])


def test_fit_bad_input():
    with pytest.raises(ValueError, match="optimizer must be one of"):
        fit(_model(), make_task("add", 64), steps=1, batch_size=8, optimizer="sgd")
    with pytest.raises(ValueError, match="steps must be an integer >= 1"):
        fit(_model(), make_task("add", 64), steps=0)
    with pytest.raises(ValueError, match="lr must be finite and > 0"):
        fit(_model(), make_task("add", 64), steps=1, batch_size=8, lr=-1.0)
