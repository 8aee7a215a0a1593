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
