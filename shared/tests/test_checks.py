import numpy as np
import pytest

from icml26_shared import checks


@pytest.mark.parametrize("bad", [0, 1, -0.1, 1.5, float("nan")])
def test_check_alpha_rejects_outside_open_interval(bad):
    with pytest.raises(ValueError, match=r"^alpha must be in \(0, 1\), got "):
        checks.check_alpha(bad)


def test_check_alpha_message_style_and_value():
    with pytest.raises(ValueError, match=r"^alpha must be in \(0, 1\), got 1\.5$"):
        checks.check_alpha(1.5)
    assert checks.check_alpha(0.1) == 0.1
    with pytest.raises(TypeError, match="alpha must be a real number, got str"):
        checks.check_alpha("0.1x")


def test_check_finite_array_names_first_bad_index():
    with pytest.raises(ValueError, match=r"^scores must be finite, got nan at index 2$"):
        checks.check_finite_array([1.0, 2.0, np.nan, np.inf], "scores")
    with pytest.raises(ValueError, match=r"got inf at index \(1, 0\)"):
        checks.check_finite_array([[1.0, 2.0], [np.inf, 0.0]], "x")
    out = checks.check_finite_array([1.0, np.inf], "x", allow_inf=True)
    assert np.isinf(out[1])
    with pytest.raises(ValueError, match="must not be empty"):
        checks.check_finite_array([], "x")
    with pytest.raises(ValueError, match=r"x must have 2 dimension\(s\), got shape \(3,\)"):
        checks.check_finite_array([1, 2, 3], "x", ndim=2)
    with pytest.raises(TypeError, match="real-valued"):
        checks.check_finite_array(np.array([1j]), "x", dtype=None)


def test_check_shape_and_lengths():
    x = np.zeros((5, 9))
    with pytest.raises(ValueError, match=r"^probs must have shape \(n, 10\), got \(5, 9\)$"):
        checks.check_shape(x, (None, 10), "probs")
    assert checks.check_shape(x, (None, 9), "probs") is x
    with pytest.raises(ValueError, match="a has 2, b has 3"):
        checks.check_same_length(a=[1, 2], b=[1, 2, 3])
    assert checks.check_same_length(a=[1, 2], b=[3, 4]) == 2


def test_positive_int_choice_and_probabilities():
    with pytest.raises(ValueError, match="n must be an integer >= 1, got 0"):
        checks.check_positive_int(0, "n")
    with pytest.raises(TypeError, match="n must be an integer"):
        checks.check_positive_int(True, "n")
    with pytest.raises(ValueError, match="solver must be one of 'euler', 'heun', got 'rk4'"):
        checks.check_choice("rk4", "solver", ["euler", "heun"])
    with pytest.raises(ValueError, match="eps must be finite and > 0, got -1"):
        checks.check_positive(-1, "eps")
    assert checks.check_positive(0, "eps", strict=False) == 0.0
    with pytest.raises(ValueError, match=r"probs rows must sum to 1, got 0\.9 at row 1"):
        checks.check_probability_rows([[0.5, 0.5], [0.4, 0.5]])
    with pytest.raises(ValueError, match=r"probs must have entries in \[0, 1\]"):
        checks.check_probability_rows([[1.5, -0.5]])
    with pytest.raises(ValueError, match=r"level must be in \[0, 1\), got 1"):
        checks.check_in_interval(1, "level", 0, 1, closed=(True, False))


@pytest.mark.parametrize(
    "value", [np.array([1.0 + 2.0j, 3.0]), [1 + 0j, 2.0], np.array([1.0, 2.0], dtype=np.complex64)]
)
def test_complex_arrays_are_rejected_before_any_conversion(value):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning would mean a silent truncation
        with pytest.raises(TypeError, match="scores must be real-valued"):
            checks.check_finite_array(value, "scores")
        with pytest.raises(TypeError, match="probs must be real-valued"):
            checks.check_probability_rows(np.atleast_2d(value), "probs")


@pytest.mark.parametrize("value", [0.5 + 0j, np.complex128(0.5 + 1j), np.complex64(0.5)])
def test_complex_scalars_are_rejected(value):
    with pytest.raises(TypeError, match="alpha must be a real number, got complex"):
        checks.check_alpha(value)
    with pytest.raises(TypeError, match="gamma must be a real number, got complex"):
        checks.check_positive(value, "gamma")


@pytest.mark.parametrize("seed", [0, 7, np.int64(3), np.uint32(5), None])
def test_seed_rule_accepts_integers_and_none(seed):
    out = checks.check_seed(seed)
    assert out is None if seed is None else (type(out) is int and out == int(seed))
    assert isinstance(checks.rng_from_seed(seed), np.random.Generator)
    assert 0 <= checks.int_from_seed(seed) < 2**32


def test_seed_rule_passes_a_generator_through_and_draws_from_it():
    g = np.random.default_rng(1)
    assert checks.check_seed(g) is g and checks.rng_from_seed(g) is g
    first = checks.int_from_seed(np.random.default_rng(1))
    assert first == checks.int_from_seed(np.random.default_rng(1))
    assert checks.rng_from_seed(5).random() == np.random.default_rng(5).random()


@pytest.mark.parametrize(
    ("seed", "error"),
    [("3", TypeError), (1.0, TypeError), (True, TypeError), ([1], TypeError), (-1, ValueError)],
)
def test_seed_rule_refuses_other_kinds_naming_the_argument(seed, error):
    with pytest.raises(error, match=r"^seed must be a non-negative integer"):
        checks.check_seed(seed)
    with pytest.raises(error, match=r"^random_state must be"):
        checks.rng_from_seed(seed, "random_state")


def test_int_seed_range_is_checked():
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*32\)"):
        checks.int_from_seed(2**32)
    assert checks.int_from_seed(2**40, bits=63) == 2**40


@pytest.mark.parametrize("text", [["1.5", "2"], np.array([b"1"]), np.array(["1", 2], dtype=object)])
def test_text_is_refused_not_parsed(text):
    with pytest.raises(TypeError, match="scores must be numeric, got text"):
        checks.check_finite_array(text, "scores")
