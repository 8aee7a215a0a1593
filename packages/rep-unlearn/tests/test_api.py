"""Public surface, doctests and bad-input messages."""

from __future__ import annotations

import doctest
import importlib
import inspect
import warnings

import numpy as np
import pytest
import torch
from torch import nn

import rep_unlearn as ru
from rep_unlearn.data import from_tensors

EXPECTED = [
    "BETA_GRID", "Adapter", "RewiredModel", "SplitModel", "TrainRecipe", "UnlearnReport",
    "Unlearner", "baselines", "data", "evaluate", "js_divergence", "mia_auc", "standard_loss",
    "train_classifier", "zero_shot_loss", "zero_shot_targets",
]  # fmt: skip


def test_all_is_exact():
    assert ru.__all__ == EXPECTED
    for name in EXPECTED:
        assert hasattr(ru, name)
    assert ru.data.__all__ == [
        "Task", "TensorData", "digits_task", "from_tensors", "gaussian_clusters", "image_folder",
        "load_mnist5k", "mnist5k_task", "parse_forget",
    ]  # fmt: skip
    assert ru.baselines.__all__ == ["GRIDS", "finetune", "neggrad", "retrain", "scrub"]
    assert ru.__version__ == importlib.metadata.version("rep-unlearn")


MODULES = [
    "_adapter", "_baselines", "_checks", "_data", "_evaluate", "_selection", "_split", "_train",
    "_unlearn", "_reproduce",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name):
    mod = importlib.import_module(f"rep_unlearn.{name}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


def test_binding_names():
    """Names other code relies on (issue 20)."""
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    split = ru.SplitModel.from_sequential(net)
    X = torch.randn(30, 4)
    y = torch.arange(30) % 3
    retain = from_tensors(X[y != 0], y[y != 0])
    forget = from_tensors(X[y == 0], y[y == 0])
    model = ru.Unlearner(seed=0).fit(split, retain, forget)
    assert isinstance(model, nn.Module)
    assert model(X).shape == (30, 3)
    assert "retain" not in inspect.signature(ru.Unlearner.fit_zero_shot).parameters


# -- bad input -----------------------------------------------------------------------------
def _small():
    X = torch.randn(20, 4)
    y = torch.arange(20) % 2
    return from_tensors(X[y == 1], y[y == 1]), from_tensors(X[y == 0], y[y == 0])


def test_head_must_be_linear():
    with pytest.raises(TypeError, match=r"head must be an nn.Linear"):
        ru.SplitModel(nn.Linear(4, 3), nn.ReLU())
    with pytest.raises(ValueError, match=r"must end with an nn.Linear head"):
        ru.SplitModel.from_sequential(nn.Sequential(nn.Linear(4, 3), nn.ReLU()))
    with pytest.raises(TypeError, match=r"must be an nn.Sequential"):
        ru.SplitModel.from_sequential(nn.Linear(3, 3))


def test_dimension_mismatch():
    with pytest.raises(ValueError, match=r"head.in_features = 5, got 8"):
        ru.SplitModel(nn.Sequential(nn.Linear(4, 8), nn.ReLU()), nn.Linear(5, 2))
    # encoder whose width cannot be read statically: caught when features are cached
    split = ru.SplitModel(nn.Sequential(nn.Flatten()), nn.Linear(3, 2))
    retain, forget = _small()
    with pytest.raises(ValueError, match=r"encoder output must have shape \(n, 3\)"):
        ru.Unlearner(beta=1.0).fit(split, retain, forget)


def test_empty_forget_and_overlap():
    split = ru.SplitModel.from_sequential(
        nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    )
    retain, forget = _small()
    empty = from_tensors(torch.zeros(0, 4), torch.zeros(0, dtype=torch.long))
    with pytest.raises(ValueError, match=r"forget must not be empty"):
        ru.Unlearner().fit(split, retain, empty)
    with pytest.raises(ValueError, match=r"must not overlap, got 1 identical input row"):
        ru.Unlearner().fit(split, retain, retain.subset([0]))
    a = from_tensors(torch.randn(3, 4), torch.tensor([1, 1, 1]), ids=[0, 1, 2])
    b = from_tensors(torch.randn(2, 4), torch.tensor([0, 0]), ids=[2, 7])
    with pytest.raises(ValueError, match=r"1 shared id"):
        ru.Unlearner().fit(split, a, b)
    with pytest.raises(TypeError, match=r"from_tensors"):
        ru.Unlearner().fit(split, (retain.X, retain.y), forget)


def test_forget_class_checks():
    split = ru.SplitModel.from_sequential(
        nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    )
    retain, forget = _small()
    with pytest.raises(ValueError, match=r"forget class 1 is absent from the forget data"):
        ru.Unlearner().fit(split, retain, forget, forget_classes=[1])
    with pytest.raises(ValueError, match=r"head class in \[0, 1\], got 5"):
        ru.Unlearner().fit_zero_shot(split, forget, [5])
    both = from_tensors(torch.randn(4, 4), torch.tensor([0, 1, 0, 1]))
    with pytest.raises(ValueError, match=r"cannot forget every class"):
        ru.Unlearner().fit_zero_shot(split, both, [0, 1])
    bad = from_tensors(torch.randn(4, 4), torch.tensor([0, 0, 3, 3]))
    with pytest.raises(ValueError, match=r"head classes < 2"):
        ru.Unlearner().fit(split, retain, bad)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"beta": -0.1}, "beta must be finite and >= 0"),
        ({"beta": "big"}, "beta must be one of 'auto'"),
        ({"sigma": -1.0}, "sigma must be finite and >= 0"),
        ({"n_mc": 0}, "n_mc must be an integer >= 1"),
        ({"epochs": 0}, "epochs must be an integer >= 1"),
        ({"lr": float("nan")}, "lr must be finite and > 0"),
        ({"adapter": "conv"}, "adapter must be one of 'linear', 'mlp'"),
        ({"beta_grid": (0.1, -1.0)}, "beta_grid entry must be finite and >= 0"),
        ({"prototypes": "unit"}, "prototypes must be one of 'reflect', 'head_rows', 'raw'"),
    ],
)
def test_hyperparameter_ranges(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        ru.Unlearner(**kwargs)


def test_non_finite_features_and_inputs():
    class Boom(nn.Module):
        def forward(self, x):
            return torch.log(x - 10)  # NaN for the inputs below

    split = ru.SplitModel(Boom(), nn.Linear(4, 2))
    retain, forget = _small()
    with pytest.raises(ValueError, match=r"features must be finite"):
        ru.Unlearner(beta=1.0).fit(split, retain, forget)
    with pytest.raises(ValueError, match=r"X must be finite"):
        from_tensors(torch.tensor([[0.0, float("nan")]]), torch.tensor([0]))
    with pytest.raises(TypeError, match=r"X must be real-valued"):
        from_tensors(np.ones((2, 2), dtype=complex), np.array([0, 1]))
    with pytest.raises(TypeError, match=r"y must be an integer array"):
        from_tensors(np.ones((2, 2)), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"y must have shape \(2,\)"):
        from_tensors(np.ones((2, 2)), np.array([0, 1, 1]))
    with pytest.raises(ValueError, match=r"at least 2 dimensions"):
        from_tensors(np.ones(3), np.array([0, 1, 1]))
    with pytest.raises(ValueError, match=r"labels >= 0"):
        from_tensors(np.ones((2, 2)), np.array([0, -1]))


def test_zero_shot_prior_checks():
    split = ru.SplitModel.from_sequential(
        nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    )
    forget = from_tensors(torch.randn(5, 4), torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match=r"class_prior must be 3 finite non-negative"):
        ru.Unlearner().fit_zero_shot(split, forget, [0], class_prior=[0.5, 0.5])
    with pytest.raises(ValueError, match=r"class_prior must be 3 finite non-negative"):
        ru.Unlearner().fit_zero_shot(split, forget, [0], class_prior=[0.5, -0.5, 1.0])


def test_zero_shot_needs_head_weights():
    split = ru.SplitModel.from_sequential(
        nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    )
    split.head.weight = None
    forget = from_tensors(torch.randn(5, 4), torch.zeros(5, dtype=torch.long))
    with pytest.raises(ValueError, match=r"needs the head's weights"):
        ru.Unlearner().fit_zero_shot(split, forget, [0])


def test_random_auto_needs_val(toy_random_task, toy_random_original):
    t = toy_random_task
    with pytest.raises(ValueError, match=r"val must be given for beta='auto'"):
        ru.Unlearner().fit(toy_random_original, t.retain, t.forget)
    with pytest.raises(ValueError, match=r"val must be given for lr='auto'"):
        ru.baselines.finetune(toy_random_original, t.retain, t.forget)


def test_train_mode_dropout_warns_once_and_switches_to_eval():
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2)).train()
    split = ru.SplitModel.from_sequential(net)
    retain, forget = _small()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        ru.Unlearner(beta=1.0, epochs=1).fit(split, retain, forget)
    msgs = [w for w in rec if "train mode with BatchNorm/Dropout" in str(w.message)]
    assert len(msgs) == 1
    assert not split.encoder.training


def test_parse_forget_and_tasks_errors():
    with pytest.raises(ValueError, match=r"forget must be 'class:K' or 'random:F'"):
        ru.data.parse_forget("subset:3")
    with pytest.raises(ValueError, match=r"forget fraction must be in \(0, 1\)"):
        ru.data.parse_forget("random:1.5")
    with pytest.raises(ValueError, match=r"forget class must be in \[0, 5\]"):
        ru.data.gaussian_clusters("class:9", n_per_class=20)
    with pytest.raises(ValueError, match=r"encoder must be one of 'mlp', 'cnn'"):
        ru.data.digits_task("class:0", encoder="vit")


def test_mia_auc_refuses_bad_scores():
    with pytest.raises(
        TypeError, match=r"member_scores must be real numbers, got dtype complex128"
    ):
        ru.mia_auc(np.array([1 + 1j, 2.0]), [0.0])
    with pytest.raises(TypeError, match=r"nonmember_scores must be real numbers, got dtype <U1"):
        ru.mia_auc([1.0], ["a"])
    with pytest.raises(ValueError, match=r"nonmember_scores must be finite, got nan at index 1"):
        ru.mia_auc([1.0], [0.0, float("nan")])
    with pytest.raises(ValueError, match=r"non-empty, got 0 and 1"):
        ru.mia_auc([], [0.0])
    assert ru.mia_auc(torch.tensor([2.0, 3.0]), np.array([[1.0]])) == 1.0


def test_js_divergence_refuses_bad_logits():
    a = torch.randn(5, 3)
    with pytest.raises(ValueError, match=r"logits_q must be finite, got NaN or inf in row 2"):
        ru.js_divergence(a, torch.where(torch.arange(5)[:, None] == 2, float("nan"), a))
    with pytest.raises(ValueError, match=r"same shape, got \(5, 3\) and \(5, 4\)"):
        ru.js_divergence(a, torch.randn(5, 4))
    with pytest.raises(ValueError, match=r"logits_p must have shape \(n, n_classes\).*got \(5,\)"):
        ru.js_divergence(a[:, 0], a[:, 0])
    with pytest.raises(TypeError, match=r"logits_p must be real logits, got dtype torch.complex64"):
        ru.js_divergence(a.to(torch.complex64), a)
    # numpy arrays are accepted and give the tensor result
    b = torch.randn(5, 3)
    assert ru.js_divergence(a.numpy(), b.numpy()) == pytest.approx(ru.js_divergence(a, b))
    assert 0 < ru.js_divergence(a, b) <= np.log(2)


def test_encoder_data_mismatch_names_both_sizes_and_dtypes():
    split = ru.SplitModel.from_sequential(
        nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
    )
    retain, forget = _small()  # 4 features per sample
    with pytest.raises(ValueError, match=r"first layer takes 6 input features, got 4 features"):
        ru.Unlearner(beta=1.0).fit(split, retain, forget)
    with pytest.raises(ValueError, match=r"forget.X must fit .* takes 6 input features, got 4"):
        ru.Unlearner(beta=1.0).fit_zero_shot(split, forget, [0])
    with pytest.raises(ValueError, match=r"takes 6 input features, got 4"):
        ru.baselines.finetune(split, retain, forget, lr=1e-3)
    double = ru.SplitModel.from_sequential(
        nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    ).double()
    with pytest.raises(
        TypeError, match=r"dtype of the model's parameters, torch.float64, got torch.float32"
    ):
        ru.Unlearner(beta=1.0).fit(double, retain, forget)


def test_evaluate_checks_the_model_against_the_data(toy_task, toy_original):
    wrong = nn.Sequential(nn.Linear(3, 6))
    with pytest.raises(
        ValueError, match=r"splits.test.X must fit .* takes 3 input features, got 10"
    ):
        ru.evaluate(wrong, toy_task, toy_original)


def test_fit_returns_the_model_and_keeps_it_on_the_unlearner():
    """fit returns the deployable nn.Module (not self, unlike scikit-learn); model_ holds it."""
    split = ru.SplitModel.from_sequential(
        nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    )
    retain, forget = _small()
    un = ru.Unlearner(beta=1.0, epochs=1)
    model = un.fit(split, retain, forget)
    assert isinstance(model, ru.RewiredModel) and un.model_ is model
    zs = un.fit_zero_shot(split, forget, [0])
    assert un.model_ is zs
