import numpy as np
import pytest

from metastreet import HashingEncoder, make_city
from metastreet._model import street_features
from metastreet._text import encode_texts
from metastreet.baselines import label_spreading, logistic_fused


@pytest.fixture(scope="module")
def city():
    return make_city(8, seed=1, images_per_street=(2, 3), split=(0.2, 0.2))


def test_logistic_fused_learns(city):
    seq, lengths = street_features(city, 12)
    txt = encode_texts(HashingEncoder(32), list(city.texts))
    scores = logistic_fused(city, seq.numpy(), lengths.numpy(), txt, 4)
    assert scores.shape == (city.n_streets, 4)
    test = city.mask("test")
    acc = np.mean(scores[test].argmax(1) == city.labels[test])
    assert acc > 0.35  # chance 0.25; features carry the latent


def test_logistic_fused_bad_shapes(city):
    with pytest.raises(ValueError, match="image_seq"):
        logistic_fused(city, np.zeros((3, 2, 4)), np.ones(3), np.zeros((3, 2)), 4)


def test_label_spreading_scores(city):
    s = label_spreading(city)
    assert s.shape == (city.n_streets, 4) and np.allclose(s.sum(1), 1.0)
