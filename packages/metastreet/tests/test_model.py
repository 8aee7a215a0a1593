import numpy as np
import pytest

from metastreet import CityData, HashingEncoder, MetaStreet, make_city

SMALL = dict(epochs=15, hidden=16, d=16, heads=2, head_dim=8, n_categories=12)


@pytest.fixture(scope="module")
def city():
    return make_city(6, seed=3, images_per_street=(1, 3), split=(0.2, 0.2))


class _NoTestMasks(dict):
    def __getitem__(self, key):
        if key == "test":
            raise AssertionError("fit read the test mask")
        return super().__getitem__(key)


def test_training_labels_hide_val_and_test(city):
    y_tr, y_va = MetaStreet.training_labels(city)
    assert np.all(y_tr[~city.masks["train"]] == -1) and np.all(y_va[~city.masks["val"]] == -1)


def test_no_leakage_test_labels_do_not_change_weights(city):
    a = MetaStreet(4, w=0.5, **SMALL).fit(city, seed=0).state_vector()
    labels = city.labels.copy()
    labels[city.masks["test"]] = (labels[city.masks["test"]] + 1) % 4
    other = CityData(city.maps, city.image_street, city.edges, city.n_streets, labels,
                     city.masks, texts=city.texts)  # fmt: skip
    b = MetaStreet(4, w=0.5, **SMALL).fit(other, seed=0).state_vector()
    assert np.array_equal(a, b)


def test_fit_never_reads_test_mask(city):
    masks = _NoTestMasks(city.masks)
    guarded = CityData(city.maps, city.image_street, city.edges, city.n_streets, city.labels,
                       masks, texts=city.texts)  # fmt: skip
    m = MetaStreet(4, w="auto", **SMALL).fit(guarded, seed=1)
    assert m.w_ in (0.1, 0.5, 0.9) and m.predict().shape == (city.n_streets,)
    assert np.allclose(m.modality_weights_.sum(1), 1.0)


def test_refuses_without_validation(city):
    masks = dict(city.masks, val=np.zeros(city.n_streets, bool))
    c = CityData(city.maps, city.image_street, city.edges, city.n_streets, city.labels, masks,
                 texts=city.texts)  # fmt: skip
    with pytest.raises(ValueError, match="never selected on test"):
        MetaStreet(4, **SMALL).fit(c)


def test_refuses_single_training_class(city):
    labels = np.where(city.masks["train"], 0, city.labels)
    c = CityData(city.maps, city.image_street, city.edges, city.n_streets, labels, city.masks,
                 texts=city.texts)  # fmt: skip
    with pytest.raises(ValueError, match="two classes"):
        MetaStreet(4, **SMALL).fit(c)


@pytest.mark.parametrize(
    "bad, match", [(lambda t: np.zeros((len(t) + 1, 3)), "shape"),
                   (lambda t: np.full((len(t), 3), np.nan), "NaN")],
)  # fmt: skip
def test_bad_text_encoder(city, bad, match):
    fresh = CityData(city.maps, city.image_street, city.edges, city.n_streets, city.labels,
                     city.masks, texts=city.texts)  # fmt: skip
    with pytest.raises(ValueError, match=match):
        MetaStreet(4, text_encoder=bad, **SMALL).fit(fresh)


def test_learns_above_chance():
    c = make_city(8, seed=0, images_per_street=(2, 4), split=(0.1, 0.15))
    m = MetaStreet(4, w=0.5, text_encoder=HashingEncoder(32), **dict(SMALL, epochs=40))
    res = m.fit(c, seed=0).evaluate(c)
    assert res["weighted_f1"] > 0.4  # chance is ~0.25 on 4 balanced classes


def test_restarts_select_on_validation(city):
    one = MetaStreet(4, w=1.0, **SMALL).fit(city, seed=2)
    three = MetaStreet(4, w=1.0, restarts=3, **SMALL).fit(city, seed=2)
    assert three.val_f1_ >= one.val_f1_  # restart 0 is the single fit, so never worse on val
    with pytest.raises(ValueError, match="restarts"):
        MetaStreet(4, restarts=0)


def test_contrast_on_layer_or_elu(city):
    a = MetaStreet(4, w=0.5, contrast_on="elu", **SMALL).fit(city, seed=0).state_vector()
    b = MetaStreet(4, w=0.5, contrast_on="layer", **SMALL).fit(city, seed=0).state_vector()
    assert a.shape == b.shape and not np.array_equal(a, b)  # the contrast sees other vectors
    c = MetaStreet(4, w=1.0, contrast_on="elu", **SMALL).fit(city, seed=0).state_vector()
    d = MetaStreet(4, w=1.0, contrast_on="layer", **SMALL).fit(city, seed=0).state_vector()
    assert np.array_equal(c, d)  # no contrast: the setting changes nothing
    with pytest.raises(ValueError, match="contrast_on"):
        MetaStreet(4, contrast_on="logits")


def test_bucketed_lstm_equals_packed_sequence():
    """The length-bucketed LSTM gives the packed sequence's final states and gradients."""
    import torch

    from metastreet._model import _Net

    torch.manual_seed(0)
    lengths = torch.tensor([3, 0, 7, 1, 5, 7, 2, 4, 6, 0, 3])
    seq = torch.randn(len(lengths), 7, 5)
    seq[torch.arange(7)[None, :] >= lengths[:, None]] = 0.0
    cfg = dict(hidden=6, d=6, heads=1, head_dim=2, graph="mlp", dropout=0.0, aggregate="lstm")
    ref = _Net(5, 3, 2, {**cfg, "lstm_buckets": 0})
    outs, grads = [], []
    for b in (0, 1, 3, 20):
        net = _Net(5, 3, 2, {**cfg, "lstm_buckets": b})
        net.load_state_dict(ref.state_dict())
        v = net.visual(seq, lengths)
        v.pow(2).sum().backward()
        outs.append(v.detach())
        grads.append(torch.cat([p.grad.ravel() for p in net.lstm.parameters()]))
    for v, g in zip(outs[1:], grads[1:]):
        torch.testing.assert_close(v, outs[0], atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(g, grads[0], atol=1e-5, rtol=1e-4)
    assert torch.equal(outs[0][1], ref.vis_proj(ref.missing))  # no images: the learned fill


def test_selected_state_scores_its_validation_f1(city):
    """Validation reuses the training pass's LSTM output: the kept weights must score the
    recorded best validation F1 when evaluated afresh."""
    for w in (1.0, 0.5):
        m = MetaStreet(4, w=w, **SMALL).fit(city, seed=1)
        assert m.evaluate(city, "val")["weighted_f1"] == pytest.approx(m.val_f1_, abs=1e-12)
        assert len(m.history_[w]) == SMALL["epochs"]


def test_evaluate_refuses_another_city(city):
    m = MetaStreet(4, w=1.0, **SMALL).fit(city, seed=0)
    other = make_city(6, seed=4, images_per_street=(1, 3), split=(0.2, 0.2))
    with pytest.raises(ValueError, match="city must be the city the model was fitted on"):
        m.evaluate(other)


def test_evaluate_refuses_another_city_after_load(city, tmp_path):
    m = MetaStreet(4, w=1.0, **SMALL).fit(city, seed=0)
    m.save(tmp_path / "m.pt")
    back = MetaStreet.load(tmp_path / "m.pt")
    assert back.evaluate(city) == m.evaluate(city)
    other = make_city(6, seed=4, images_per_street=(1, 3), split=(0.2, 0.2))
    with pytest.raises(ValueError, match="fitted on"):
        back.evaluate(other)


def test_knn_graph_is_directed_with_out_degree_k(city):
    from metastreet import knn_edges

    pairs = knn_edges(city.coords, 5)
    assert pairs.shape == (city.n_streets * 5, 2)
    assert np.all(np.bincount(pairs[:, 0], minlength=city.n_streets) == 5)
    d = np.linalg.norm(city.coords[:, None] - city.coords[None], axis=-1)
    np.fill_diagonal(d, np.inf)
    far = d[pairs[:, 0], pairs[:, 1]]
    kth = np.sort(d, 1)[:, 4]
    assert np.all(far <= kth[pairs[:, 0]] + 1e-12)  # every listed street is among the 5 nearest
    m = MetaStreet(4, w=0.5, adjacency="knn", **SMALL).fit(city, seed=0)
    ei = m.city_inputs_[3].numpy()
    assert np.all(np.bincount(ei[1], minlength=city.n_streets) == 6)  # 5 in-edges + self-loop
    with pytest.raises(ValueError, match="adjacency"):
        MetaStreet(4, adjacency="delaunay")
    with pytest.raises(ValueError, match="k must be an integer"):
        knn_edges(city.coords, 0)


def test_random_positives_keep_degree_and_drop_geography(city):
    import torch

    from metastreet._graph import with_self_loops

    ei = with_self_loops(city.edges, city.n_streets)
    geo, deg = MetaStreet(4)._positive_matrix(ei, city.n_streets, 0)
    rnd, deg_r = MetaStreet(4, contrast_positive="random")._positive_matrix(ei, city.n_streets, 0)
    assert torch.equal(deg, deg_r)
    g, r = geo.to_dense(), rnd.to_dense()
    torch.testing.assert_close(r.sum(1), g.sum(1))  # rows average the same number of streets
    assert torch.equal((r > 0).sum(1), (g > 0).sum(1))
    assert torch.all(r.diagonal() == 0)
    overlap = ((r > 0) & (g > 0)).sum() / (g > 0).sum()
    assert overlap < 0.3  # random streets are rarely the neighbours
    a = MetaStreet(4, w=0.5, **SMALL).fit(city, seed=0).state_vector()
    b = MetaStreet(4, w=0.5, contrast_positive="random", **SMALL).fit(city, seed=0).state_vector()
    assert not np.array_equal(a, b)
    with pytest.raises(ValueError, match="contrast_positive"):
        MetaStreet(4, contrast_positive="nearest")


def test_shared_lstm_pass_scores_like_a_separate_validation_pass(city):
    """Scoring validation on the training pass's LSTM output changes no number: the same
    validation history and weights as re-running the whole network after each step."""
    new = MetaStreet(4, w=0.5, **SMALL).fit(city, seed=3)
    old = MetaStreet(4, w=0.5, **SMALL)
    old._separate_validation_pass = True
    old.fit(city, seed=3)
    assert new.history_ == old.history_
    np.testing.assert_array_equal(new.state_vector(), old.state_vector())


def test_weighted_f1_equals_scikit_learn():
    """The per-epoch validation score is scikit-learn's weighted F1, classes absent from the
    labels or from the predictions included."""
    from sklearn.metrics import f1_score

    from metastreet._model import weighted_f1

    rng = np.random.default_rng(0)
    for trial in range(200):
        n = int(rng.integers(1, 60))
        y = rng.integers(0, 4, n)
        pred = np.where(rng.random(n) < 0.5, y, rng.integers(0, 5 if trial % 2 else 3, n))
        ref = f1_score(y, pred, average="weighted", zero_division=0)
        assert weighted_f1(y, pred, 5) == pytest.approx(ref, abs=1e-12)
    assert weighted_f1(np.array([], int), np.array([], int), 4) == 0.0
