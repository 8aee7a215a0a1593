"""Baselines behind one signature, tuned by the shared rule; evaluation metrics vs references."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from torch.nn import functional as F

import rep_unlearn as ru
from rep_unlearn import baselines as B


def _acc(model, data):
    with torch.no_grad():
        return float((model(data.X).argmax(1) == data.y).float().mean())


def test_retrain_never_sees_forget_data(toy_task):
    t = toy_task
    m = B.retrain(lambda: t.make_model(5), t.retain, t.forget, recipe=t.recipe, seed=5)
    assert _acc(m, t.forget) == 0.0  # class 0 never seen: never predicted
    assert _acc(m, t.test.subset(t.test.y != 0)) >= 0.9
    # a model instead of a factory: re-initialised copy, input untouched
    base = t.make_model(6)
    before = [p.clone() for p in base.parameters()]
    m2 = B.retrain(base, t.retain, recipe=t.recipe, seed=6)
    assert all(torch.equal(a, b) for a, b in zip(before, base.parameters()))
    assert m2 is not base
    with pytest.raises(TypeError, match=r"model_factory_or_model must be"):
        B.retrain(3, t.retain)


@pytest.mark.parametrize("method", [B.finetune, B.neggrad, B.scrub])
def test_baselines_share_signature_and_rule(method, toy_task, toy_original):
    t = toy_task
    before = copy.deepcopy(toy_original.state_dict())
    m = method(toy_original, t.retain, t.forget, val=t.val, seed=0)
    (key,) = m.hyperparameters_
    assert m.hyperparameters_[key] in B.GRIDS[method.__name__][key]
    assert len(m.selection_) == len(B.GRIDS[method.__name__][key])
    # the chosen candidate is the rule's choice on validation
    ok = [r for r in m.selection_ if r["val_forget_acc"] <= 0.05]
    chosen = next(r for r in m.selection_ if r[key] == m.hyperparameters_[key])
    if ok:
        assert chosen["val_retained_acc"] == max(r["val_retained_acc"] for r in ok)
    for k, v in toy_original.state_dict().items():
        assert torch.equal(v, before[k])  # input model untouched


def test_neggrad_forgets_class_on_toy(toy_task, toy_original):
    t = toy_task
    m = B.neggrad(toy_original, t.retain, t.forget, alpha=0.9, epochs=5, seed=0)
    assert _acc(m, t.forget) <= 0.2
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\]"):
        B.neggrad(toy_original, t.retain, t.forget, alpha=1.5)


def test_mia_auc_matches_sklearn():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    m = np.round(rng.normal(0.5, 1, 70), 1)  # rounding creates ties
    n = np.round(rng.normal(0.0, 1, 90), 1)
    ref = roc_auc_score(np.r_[np.ones(70), np.zeros(90)], np.r_[m, n])
    assert ru.mia_auc(m, n) == pytest.approx(ref, abs=1e-12)
    with pytest.raises(ValueError, match=r"must be non-empty"):
        ru.mia_auc([], [1.0])
    with pytest.raises(ValueError, match=r"must be finite"):
        ru.mia_auc([np.nan], [1.0])


def test_js_divergence_against_numpy():
    torch.manual_seed(0)
    a, b = torch.randn(20, 5), torch.randn(20, 5)
    p, q = F.softmax(a, 1).numpy(), F.softmax(b, 1).numpy()
    mix = (p + q) / 2
    ref = np.mean(0.5 * (p * np.log(p / mix)).sum(1) + 0.5 * (q * np.log(q / mix)).sum(1))
    assert ru.js_divergence(a, b) == pytest.approx(ref, rel=1e-5)
    assert ru.js_divergence(a, a) == pytest.approx(0.0, abs=1e-7)
    assert ru.js_divergence(
        torch.tensor([[50.0, 0.0]]), torch.tensor([[0.0, 50.0]])
    ) == pytest.approx(np.log(2), rel=1e-4)


def test_evaluate_report(toy_task, toy_original):
    t = toy_task
    rep = ru.evaluate(toy_original, t, toy_original, toy_original)
    assert rep.forget_acc == pytest.approx(_acc(toy_original, t.forget))
    assert rep.js_to_retrain == pytest.approx(0.0, abs=1e-7)
    assert 0 <= rep.mia_auc <= 1
    assert rep.probe_z == rep.probe_z_prime  # same representation
    assert rep.test_acc_forgotten is not None
    assert set(rep.to_dict()) == {
        "forget_acc",
        "retain_acc",
        "test_acc_retained",
        "test_acc_forgotten",
        "mia_auc",
        "js_to_retrain",
        "probe_z",
        "probe_z_prime",
    }
    with pytest.raises(TypeError, match=r"splits must be a rep_unlearn.data.Task"):
        ru.evaluate(toy_original, (t.retain, t.forget))


def test_evaluate_random_forgetting(toy_random_task, toy_random_original):
    t = toy_random_task
    rep = ru.evaluate(toy_random_original, t)
    assert rep.test_acc_forgotten is None and rep.probe_z is None
    assert rep.test_acc_retained == pytest.approx(_acc(toy_random_original, t.test))
