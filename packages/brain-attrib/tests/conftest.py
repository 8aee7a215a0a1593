"""One torch/BLAS thread per test (tiny models; two shared cores), restored afterwards."""

from __future__ import annotations

import pytest
import torch
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True)
def one_torch_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    with threadpool_limits(1):
        yield
    torch.set_num_threads(old)


@pytest.fixture(scope="session")
def small_lm(tmp_path_factory):
    """A tiny, briefly trained GPT-2 (cached in a session tmp folder, loaded back from disk)."""
    from brain_attrib.synthetic import tiny_lm

    folder = tmp_path_factory.mktemp("lm")
    lm, tok, info = tiny_lm(
        folder=folder,
        n_layer=2,  # explicit: the package default is the spec's 4 layers
        steps=80,
        n_embd=32,
        n_head=2,
        n_positions=128,
        train_tokens=20_000,
        batch=8,
        seq=64,
    )
    return lm, tok, info, folder


@pytest.fixture(scope="session")
def fitted(small_lm):
    from brain_attrib import EncodingModel
    from brain_attrib.synthetic import fmri

    lm, tok, _, _ = small_lm
    rd = fmri(n_trs=240, n_runs=2, n_voxels=12, n_noise=4, seed=3)
    em = EncodingModel(lm.double(), tok, layer=1, context=24).fit(rd, folds=3)
    return em, rd
