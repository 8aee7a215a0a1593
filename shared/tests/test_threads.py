import sys
import types

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from icml26_shared.threads import single_thread, threads


class FakeTorch(types.ModuleType):
    """Stands in for torch (not a dependency of icml26-shared): records its thread count."""

    def __init__(self) -> None:
        super().__init__("torch")
        self.n = 2

    def get_num_threads(self) -> int:
        return self.n

    def set_num_threads(self, n: int) -> None:
        self.n = n


def test_threads_sets_torch_and_blas_and_restores_them_even_on_error(monkeypatch):
    fake = FakeTorch()
    monkeypatch.setitem(sys.modules, "torch", fake)
    np.ones((4, 4)) @ np.ones((4, 4))  # BLAS loaded
    with single_thread():
        assert fake.n == 1
        assert all(p["num_threads"] == 1 for p in threadpool_info())
    assert fake.n == 2
    with pytest.raises(RuntimeError, match="boom"), threads(1):
        raise RuntimeError("boom")
    assert fake.n == 2


def test_threads_never_imports_torch(monkeypatch):
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    with threads(1):
        pass
    assert "torch" not in sys.modules


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_threads_refuses_a_bad_count(bad):
    with pytest.raises(ValueError, match="n must be an int >= 1"):
        with threads(bad):
            pass
