"""One torch thread per test (tiny models; two shared cores), restored afterwards."""

from __future__ import annotations

import pytest
import torch  # noqa: F401  (imported first, so single_thread sets its pool)

from icml26_shared.threads import single_thread


@pytest.fixture(autouse=True)
def one_torch_thread():
    with single_thread():
        yield
