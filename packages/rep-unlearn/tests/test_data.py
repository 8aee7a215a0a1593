"""Tasks, from_tensors and the image-folder loader (on PNGs written here)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import rep_unlearn as ru


@pytest.mark.parametrize("forget", ["class:3", "random:0.1"])
def test_digits_task_splits(forget):
    t = ru.data.digits_task(forget, seed=2)
    n = len(t.train) + len(t.val) + len(t.test)
    assert n == 1797
    ids = [set(d.ids.tolist()) for d in (t.train, t.val, t.test)]
    assert not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
    assert set(t.retain.ids.tolist()) | set(t.forget.ids.tolist()) == ids[0]
    assert abs(len(t.train) / n - 0.6) < 0.01 and abs(len(t.test) / n - 0.3) < 0.01
    # stratified: every class's share in test within 1 sample of its share overall
    for c in range(10):
        share = float((t.test.y == c).sum()) / len(t.test)
        assert abs(share - float((t.train.y == c).sum()) / len(t.train)) < 0.01
    if forget.startswith("class"):
        assert t.kind == "class" and t.forget_classes == (3,)
        assert bool((t.forget.y == 3).all()) and not bool((t.retain.y == 3).any())
    else:
        assert t.kind == "random" and t.forget_classes == ()
        assert len(t.forget) == round(0.1 * len(t.train))
    assert float(t.train.X.max()) <= 1.0


def test_digits_cnn_model_shapes():
    t = ru.data.digits_task("class:0", encoder="cnn", seed=0)
    m = t.make_model(0)
    assert m.dim == 32 and m.n_classes == 10
    assert m(t.test.X[:5]).shape == (5, 10)


def test_mnist5k_is_the_real_set_and_its_task_splits():
    X, y = ru.data.load_mnist5k()
    assert X.shape == (5000, 784) and X.dtype == np.float64 and 0 <= X.min() < X.max() <= 1
    assert np.bincount(y).tolist() == [500] * 10
    # real handwriting: the mean "1" is thin and vertical, the mean "0" a ring with a dark middle
    ones, zeros = X[y == 1].mean(0).reshape(28, 28), X[y == 0].mean(0).reshape(28, 28)
    assert ones[:, 12:16].mean() > 3 * ones[:, :8].mean()
    assert zeros[13, 13] < zeros[13, 6]
    t = ru.data.mnist5k_task("class:4", seed=1)
    assert (len(t.train), len(t.val), len(t.test)) == (3000, 500, 1500)
    assert bool((t.forget.y == 4).all()) and not bool((t.retain.y == 4).any())
    model = t.make_model(0)
    assert model(t.test.X[:3]).shape == (3, 10)


def test_mnist5k_loader_refuses_a_malformed_file(tmp_path):
    bad = tmp_path / "mnist.csv"
    np.savetxt(bad, np.zeros((4, 785)), delimiter=",")
    with pytest.raises(ValueError, match=r"mnist\.csv must hold 5000 rows"):
        ru.data.load_mnist5k(bad)
    with pytest.raises(FileNotFoundError, match="path must name an MNIST-5k"):
        ru.data.load_mnist5k(tmp_path / "missing.csv.gz")
    rows = np.zeros((5000, 785))
    rows[:, -1] = np.repeat(np.arange(10), 500)
    rows[0, 0] = 300.0
    np.savetxt(bad, rows, delimiter=",", fmt="%g")
    with pytest.raises(ValueError, match=r"pixel values in \[0, 255\]"):
        ru.data.load_mnist5k(bad)


def test_gaussian_clusters_two_dim_representation():
    t = ru.data.gaussian_clusters("class:2", n_per_class=30, n_classes=4, dim=5, seed=0)
    m = t.make_model(0)
    assert m.dim == 2 and m.n_classes == 4
    assert len(t.train) + len(t.val) + len(t.test) == 120
    a = ru.data.gaussian_clusters("class:2", n_per_class=30, n_classes=4, dim=5, seed=0)
    assert torch.equal(a.train.X, t.train.X)


def test_from_tensors_accepts_numpy_and_torch():
    d = ru.data.from_tensors(np.arange(6).reshape(3, 2), np.array([0, 1, 0], dtype=np.int32))
    assert d.X.dtype == torch.float32 and d.y.dtype == torch.int64 and len(d) == 3
    x, y = d[1]
    assert torch.equal(x, torch.tensor([2.0, 3.0])) and int(y) == 1
    sub = d.subset(torch.tensor([True, False, True]))
    assert len(sub) == 2


def _write_pngs(root, size=(6, 5), n=3, classes=("cat", "dog")):
    from PIL import Image

    rng = np.random.default_rng(0)
    for c in classes:
        (root / c).mkdir(parents=True)
        for i in range(n):
            arr = rng.integers(0, 256, (*size, 3), dtype=np.uint8)
            Image.fromarray(arr).save(root / c / f"{i}.png")
    (root / "cat" / "notes.txt").write_text("not an image")


def test_image_folder_reads_pngs(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    _write_pngs(tmp_path)
    d = ru.data.image_folder(tmp_path)
    assert d.classes == ("cat", "dog")
    assert d.X.shape == (6, 3, 6, 5) and d.y.tolist() == [0, 0, 0, 1, 1, 1]
    first = np.asarray(Image.open(tmp_path / "cat" / "0.png"), dtype=np.float32) / 255
    np.testing.assert_allclose(d.X[0].numpy(), first.transpose(2, 0, 1))
    g = ru.data.image_folder(tmp_path, grayscale=True, size=(4, 4))
    assert g.X.shape == (6, 1, 4, 4) and float(g.X.max()) <= 1.0


def test_image_folder_errors(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image

    with pytest.raises(ValueError, match=r"root must be an existing folder"):
        ru.data.image_folder(tmp_path / "missing")
    with pytest.raises(ValueError, match=r"one sub-folder per class"):
        ru.data.image_folder(tmp_path)
    _write_pngs(tmp_path)
    Image.fromarray(np.zeros((3, 3, 3), dtype=np.uint8)).save(tmp_path / "dog" / "odd.png")
    with pytest.raises(ValueError, match=r"images must share one size"):
        ru.data.image_folder(tmp_path)


def test_image_folder_end_to_end_unlearning(tmp_path):
    """PNG folder → from the loader to a forgotten class (a flatten + MLP encoder)."""
    pytest.importorskip("PIL")
    from PIL import Image
    from torch import nn

    rng = np.random.default_rng(1)
    for c, level in [("a", 40), ("b", 130), ("c", 220)]:
        (tmp_path / c).mkdir()
        for i in range(12):
            arr = np.clip(level + rng.normal(0, 20, (4, 4)), 0, 255).astype(np.uint8)
            Image.fromarray(arr, mode="L").save(tmp_path / c / f"{i}.png")
    d = ru.data.image_folder(tmp_path, grayscale=True)
    net = nn.Sequential(nn.Flatten(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3))
    split = ru.train_classifier(
        ru.SplitModel.from_sequential(net), d, ru.TrainRecipe(epochs=60, lr=1e-2, batch_size=8)
    )
    retain, forget = d.subset(d.y != 0), d.subset(d.y == 0)
    model = ru.Unlearner(beta=1.0, batch_size=4, lr=1e-2, epochs=20).fit(split, retain, forget)
    with torch.no_grad():
        assert float((model(forget.X).argmax(1) == 0).float().mean()) <= 0.1
