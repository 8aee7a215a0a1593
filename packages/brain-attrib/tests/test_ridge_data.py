from __future__ import annotations

import numpy as np
import pytest

from brain_attrib import load_naturalistic
from brain_attrib._ridge import blocked_folds, fit_ridge, pearson_cols
from brain_attrib.synthetic import fmri, hrf, planted_words


def test_ridge_matches_sklearn():
    sk = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((120, 15)) * rng.uniform(0.5, 3, 15) + 2
    y = x @ rng.standard_normal((15, 4)) + rng.standard_normal((120, 4))
    lam = np.array([0.1, 10.0, 10.0, 1000.0])
    m = fit_ridge(x, y, lam=lam)
    xs = (x - x.mean(0)) / x.std(0)
    for v in range(4):
        ref = sk.Ridge(alpha=lam[v]).fit(xs, y[:, v])
        np.testing.assert_allclose(m.w[:, v], ref.coef_, atol=1e-6)
        np.testing.assert_allclose(m.predict(x)[:, v], ref.predict(xs), atol=1e-6)
    w, b = m.folded()
    np.testing.assert_allclose(b + x @ w, m.predict(x), atol=1e-9)


def test_inner_cv_picks_small_lambda_for_strong_signal():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((300, 5))
    y = np.c_[x @ np.ones(5) + 0.1 * rng.standard_normal(300), rng.standard_normal(300)]
    m = fit_ridge(x, y)
    assert m.lam[0] < 1 and m.lam[1] >= 100


def test_blocked_folds_gap():
    folds = blocked_folds(100, 4, gap=5)
    for tr, te in folds:
        assert np.all(np.abs(tr[:, None] - te[None, :]).min(1) > 5)
    assert np.concatenate([te for _, te in folds]).tolist() == list(range(100))
    with pytest.raises(ValueError, match="folds"):
        blocked_folds(10, 1)


def test_hrf_and_fmri():
    t = np.linspace(0, 30, 301)
    assert 4 < t[np.argmax(hrf(t))] < 6 and hrf(np.array([-1.0]))[0] == 0
    rd = fmri(n_trs=200, n_runs=2, n_voxels=10, n_noise=3, seed=1)
    assert rd.data.shape == (200, 10)
    assert abs(pearson_cols(rd.extras["signal"], rd.data)[:7].mean() - 0.8) < 0.1
    p = planted_words(rd, 50)
    assert all(rd.categories[i].startswith("noun") for i in p)


def _write(tmp_path, onsets, data=None, tr=2.0):
    data = np.random.default_rng(0).standard_normal((10, 3)) if data is None else data
    np.savez(tmp_path / "data.npz", data=data, tr=tr)
    lines = ["word\tonset\tcategory"] + [f"w{i}\t{o}\tnoun_sg" for i, o in enumerate(onsets)]
    (tmp_path / "words.tsv").write_text("\n".join(lines) + "\n")
    return tmp_path / "data.npz", tmp_path / "words.tsv"


def test_load_naturalistic_fixture(tmp_path):
    rd = load_naturalistic(*_write(tmp_path, [0.0, 0.7, 3.1, 10.0]))
    assert rd.words == ["w0", "w1", "w2", "w3"] and rd.tr == 2.0
    assert rd.data.shape == (10, 3) and rd.categories[0] == "noun_sg"


def test_load_naturalistic_bad(tmp_path):
    with pytest.raises(ValueError, match="increasing"):
        load_naturalistic(*_write(tmp_path, [0.0, 3.0, 2.0]))
    with pytest.raises(ValueError, match="onsets of run"):
        load_naturalistic(*_write(tmp_path, [0.0, 30.0]))
    with pytest.raises(ValueError, match="tr"):
        load_naturalistic(*_write(tmp_path, [0.0], tr=0.0))
    bad = np.ones((10, 3))
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="data"):
        load_naturalistic(*_write(tmp_path, [0.0], data=bad))
    d = np.random.default_rng(0).standard_normal((10, 3))
    d[:, 1] = 1.0
    with pytest.warns(UserWarning, match="zero-variance"):
        rd = load_naturalistic(*_write(tmp_path, [0.0], data=d))
    assert rd.data.shape == (10, 2)
