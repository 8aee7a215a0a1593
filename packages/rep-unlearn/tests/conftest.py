"""Shared fixtures: a small Gaussian-mixture task and its trained original model."""

from __future__ import annotations

import pytest
import torch

import rep_unlearn as ru


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    """One torch thread: the suite shares 2 cores with other jobs."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="session")
def toy_task() -> ru.data.Task:
    return ru.data.gaussian_clusters("class:0", n_per_class=60, seed=0)


@pytest.fixture(scope="session")
def toy_original(toy_task) -> ru.SplitModel:
    return toy_task.fit_original(seed=0)


@pytest.fixture(scope="session")
def toy_random_task() -> ru.data.Task:
    return ru.data.gaussian_clusters("random:0.1", n_per_class=60, seed=1)


@pytest.fixture(scope="session")
def toy_random_original(toy_random_task) -> ru.SplitModel:
    return toy_random_task.fit_original(seed=1)


@pytest.fixture(scope="session")
def digits_original() -> tuple[ru.data.Task, ru.SplitModel]:
    task = ru.data.digits_task("class:0", seed=0)
    return task, task.fit_original(seed=0)
