import os

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "2")


class LungFill:
    """A test editor: fills the mask with flat lung (-850 HU), exactly local."""

    name = "lung-fill"

    def __init__(self, noise: float = 0.0):
        self.noise = noise

    def remove(self, x, mask, seed):
        out = np.array(x, np.float32, copy=True)
        rng = np.random.default_rng(seed)
        out[mask] = -0.7857143 + self.noise * rng.standard_normal(int(mask.sum()))
        return out

    def insert(self, x, nodule, centre, tau=0.3, seed=0):
        out = np.array(x, np.float32, copy=True)
        vs, ps = nodule.paste_slices(centre, out.shape)
        patch = out[vs]
        patch[nodule.mask[ps]] = nodule.image[ps][nodule.mask[ps]]
        return out

    def remove_batch(self, xs, masks, seeds):
        return np.stack([self.remove(x, m, s) for x, m, s in zip(xs, masks, seeds)])


@pytest.fixture
def lung_fill():
    return LungFill()


@pytest.fixture
def noisy_fill():
    return LungFill(noise=0.05)


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SHNAP_CACHE", str(tmp_path_factory.getbasetemp() / "shnap-cache"))
