"""The adapter, the objective, both regimes and the β rule."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

import rep_unlearn as ru
from rep_unlearn._selection import select_candidate

# the toy's 2-D representation has a scale of ~35 (digits: ~23 in 32-D) and only 36 forget
# samples, so it takes a larger step size and smaller batches than the digits defaults
TOY = dict(batch_size=8, lr=1e-2)


def _acc(model, data):
    with torch.no_grad():
        return float((model(data.X).argmax(1) == data.y).float().mean())


@pytest.mark.parametrize("kind", ["mlp", "linear"])
def test_identity_init_reproduces_logits_exactly(kind, toy_task, toy_original):
    ad = ru.Adapter(toy_original.dim, kind, hidden=(64,))
    rewired = ru.RewiredModel(toy_original.encoder, ad, toy_original.head)
    with torch.no_grad():
        assert torch.equal(rewired(toy_task.test.X), toy_original(toy_task.test.X))
    # digits MLP too (32-D ReLU features)
    net = ru.data.digits_task("class:0", seed=0).make_model(0)
    X = torch.rand(50, 64)
    ad = ru.Adapter(32, kind)
    with torch.no_grad():
        assert torch.equal(ru.RewiredModel(net.encoder, ad, net.head)(X), net(X))


def test_plain_mlp_is_not_identity():
    ad = ru.Adapter(4, "mlp", residual=False, generator=torch.Generator().manual_seed(0))
    z = torch.randn(3, 4)
    assert not torch.allclose(ad(z), z)


def test_loss_matches_hand_value_on_three_points():
    ad = ru.Adapter(2, "linear")
    with torch.no_grad():
        ad.weights[0].copy_(torch.tensor([[[2.0, 0.0], [0.0, 2.0]]]))
        ad.biases[0].copy_(torch.tensor([[0.5, 0.0]]))
    z_r = torch.tensor([[1.0, 0.0]])
    z_f = torch.tensor([[0.0, 1.0], [1.0, 1.0]])
    z_ref = torch.tensor([[1.0, 1.0], [0.0, 0.0]])
    # f(z) = 2z + (0.5, 0): f(z_r) = (2.5, 0) → L_r = 1.5² = 2.25
    # f(z_f1) = (0.5, 2) vs (1, 1): 0.25 + 1 = 1.25; f(z_f2) = (2.5, 2) vs (0, 0): 6.25 + 4 = 10.25
    # L_f = (1.25 + 10.25) / 2 = 5.75; L = 2.25 + 0.2 * 5.75 = 3.4
    loss, l_r, l_f = (v.detach() for v in ru.standard_loss(ad, z_r, z_f, z_ref, 0.2))
    assert float(l_r) == pytest.approx(2.25)
    assert float(l_f) == pytest.approx(5.75)
    assert float(loss) == pytest.approx(3.4)


def test_monte_carlo_noise_averages_draws():
    ad = ru.Adapter(3, "linear")
    z = torch.zeros(1, 3)
    gen = torch.Generator().manual_seed(0)
    _, l_r, _ = ru.standard_loss(ad, z, z, z, 1.0, sigma=0.5, n_mc=4000, generator=gen)
    l_r = l_r.detach()
    # identity adapter: L_r = E‖σε‖² = σ² d = 0.75; ‖σε‖² = σ² χ²_3 has variance 2 d σ⁴ = 0.375,
    # so the mean of 4000 draws has sd sqrt(0.375 / 4000); allow 4 sd
    assert float(l_r) == pytest.approx(0.75, abs=4 * (0.375 / 4000) ** 0.5)


def test_zero_shot_head_row_targets_are_rescaled_head_rows():
    head = nn.Linear(3, 4)
    z_f = torch.randn(6, 3)
    w = head.weight.detach()
    expected = z_f.norm(dim=1).mean() * w / w.norm(dim=1, keepdim=True)
    torch.testing.assert_close(ru.zero_shot_targets(head, z_f, prototypes="head_rows"), expected)
    torch.testing.assert_close(ru.zero_shot_targets(head, z_f, prototypes="raw"), w)
    # rows keep their directions, all have norm s
    norms = ru.zero_shot_targets(head, z_f, prototypes="head_rows").norm(dim=1)
    torch.testing.assert_close(norms, torch.full((4,), float(z_f.norm(dim=1).mean())))


def test_reflected_targets_hand_value():
    """Two classes in 2-D, W = I, b = 0, forget mean (3, 1) in class 0: m_1 = 3 − 1 = 2,
    d_1 = (−1, 1), p_1 = (3, 1) + 2·2·(−1, 1)/2 = (1, 3), the mirror image across z_0 = z_1."""
    head = nn.Linear(2, 2)
    with torch.no_grad():
        head.weight.copy_(torch.eye(2))
        head.bias.zero_()
    z_f = torch.tensor([[2.0, 0.0], [4.0, 2.0]])  # mean (3, 1)
    protos = ru.zero_shot_targets(head, z_f, [0])
    torch.testing.assert_close(protos, torch.tensor([[3.0, 1.0], [1.0, 3.0]]))
    # with a bias the reflection uses the full logits: b = (0, 1) gives m_1 = 1, p_1 = (2, 2)
    with torch.no_grad():
        head.bias.copy_(torch.tensor([0.0, 1.0]))
    protos = ru.zero_shot_targets(head, z_f, [0], clamp=False)
    torch.testing.assert_close(protos[1], torch.tensor([2.0, 2.0]))


def test_reflected_targets_clamp_only_relu_features():
    head = nn.Linear(2, 2)
    with torch.no_grad():
        head.weight.copy_(torch.tensor([[1.0, 0.0], [-1.0, 1.0]]))
        head.bias.zero_()
    relu_like = torch.tensor([[1.0, 0.0], [3.0, 0.0]])  # ≥ 0 with exact zeros: clamped
    # mean (2, 0), logits (2, −2): m_1 = 4, d_1 = (−2, 1), p_1 = (2, 0) + 8·(−2, 1)/5
    unclamped = torch.tensor([2.0 - 3.2, 1.6])
    torch.testing.assert_close(
        ru.zero_shot_targets(head, relu_like, [0], clamp=False)[1], unclamped
    )
    torch.testing.assert_close(
        ru.zero_shot_targets(head, relu_like, [0])[1], torch.tensor([0.0, 1.6])
    )
    positive = relu_like + 0.5  # no exact zeros: not read as ReLU features, not clamped
    assert float(ru.zero_shot_targets(head, positive, [0])[1, 0]) < 0


@pytest.mark.parametrize("forget", [[0], [3], [0, 5]])
def test_original_head_classifies_each_reflected_prototype_as_its_class(forget, digits_original):
    task, original = digits_original
    X = task.test.X[torch.isin(task.test.y, torch.tensor(forget))]
    z_f = original.encoder(X).detach()
    protos = ru.zero_shot_targets(original.head, z_f, forget)
    with torch.no_grad():
        pred = original.head(protos).argmax(1)
    kept = [c for c in range(10) if c not in forget]
    assert pred[kept].tolist() == kept
    assert (protos >= 0).all()  # ReLU features: clamped


def test_reflected_prototypes_on_the_toy_are_classified_as_their_class(toy_task, toy_original):
    """2-D linear representation, 6 classes: the plain reflection lands in a third class's
    region for some classes; the lead projection moves it back into its own."""
    z_f = toy_original.encoder(toy_task.forget.X).detach()
    protos = ru.zero_shot_targets(toy_original.head, z_f, [0])
    with torch.no_grad():
        pred = toy_original.head(protos).argmax(1)
    assert pred[1:].tolist() == [1, 2, 3, 4, 5]


def test_reflected_targets_need_forget_classes():
    head = nn.Linear(3, 4)
    with pytest.raises(ValueError, match=r"forget_classes must name the forgotten classes"):
        ru.zero_shot_targets(head, torch.rand(5, 3))
    with pytest.raises(ValueError, match=r"head classes in \[0, 3\], got \[7\]"):
        ru.zero_shot_targets(head, torch.rand(5, 3), [7])
    with pytest.raises(ValueError, match=r"prototypes must be one of"):
        ru.zero_shot_targets(head, torch.rand(5, 3), [0], prototypes="rows")


def test_zero_shot_loss_hand_value():
    ad = ru.Adapter(2, "linear")  # identity
    protos = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    kept = torch.tensor([False, True, True])
    p = torch.tensor([0.5, 0.5])
    pi = torch.full((3,), 1 / 3)
    z_f = torch.tensor([[1.0, 1.0]])
    loss, l_r, l_f = (v.detach() for v in ru.zero_shot_loss(ad, protos, kept, p, pi, z_f, 2.0))
    # identity: L_r = 0; L_f = (1 + 1 + 5) / 3
    assert float(l_r) == 0.0
    assert float(l_f) == pytest.approx(7 / 3)
    assert float(loss) == pytest.approx(14 / 3)


def test_batched_candidates_follow_their_own_trajectories(toy_task, toy_original):
    t = toy_task
    grid = (0.01, 0.3)
    auto = ru.Unlearner(beta="auto", beta_grid=grid, epochs=3, seed=4)
    auto.fit(toy_original, t.retain, t.forget)
    one = ru.Unlearner(beta=0.3, epochs=3, seed=4)
    single = one.fit(toy_original, t.retain, t.forget)
    for w_all, w_one in zip(auto.candidates_.weights, single.adapter.weights):
        torch.testing.assert_close(w_all[1:2], w_one, atol=1e-5, rtol=1e-4)


def test_standard_class_forgetting_on_toy(toy_task, toy_original):
    t = toy_task
    before = [p.detach().clone() for p in toy_original.parameters()]
    un = ru.Unlearner(seed=0, **TOY)
    model = un.fit(toy_original, t.retain, t.forget, val=t.val)
    assert un.mode_ == "class" and un.beta_ in ru.BETA_GRID
    assert _acc(model, t.forget) <= 0.05
    keep = t.test.subset(t.test.y != 0)
    assert _acc(model, keep) >= _acc(toy_original, keep) - 0.05
    # no original weight changed
    for a, b in zip(before, toy_original.parameters()):
        assert torch.equal(a, b)
    assert model.encoder is toy_original.encoder and model.head is toy_original.head


def test_beta_zero_leaves_the_model_unchanged(toy_task, toy_original):
    t = toy_task
    model = ru.Unlearner(beta=0.0, seed=0).fit(toy_original, t.retain, t.forget)
    with torch.no_grad():
        assert torch.equal(model(t.test.X), toy_original(t.test.X))


def test_zero_shot_needs_no_retain_data(toy_task, toy_original):
    """Zero-shot reads only forget samples and the head: no retain split is passed at all."""
    t = toy_task
    un = ru.Unlearner(seed=0, **TOY)
    model = un.fit_zero_shot(toy_original, t.forget, [0])
    assert un.mode_ == "zero-shot"
    assert _acc(model, t.forget) <= 0.05
    # uniform prior: changing retain data cannot matter, and a user prior changes the targets' mix
    skewed = un.fit_zero_shot(toy_original, t.forget, [0], class_prior=[1, 5, 1, 1, 1, 1])
    assert isinstance(skewed, ru.RewiredModel)


def test_zero_shot_with_deepcopied_head_is_deterministic(toy_task, toy_original):
    t = toy_task
    a = ru.Unlearner(seed=3, beta=0.1).fit_zero_shot(toy_original, t.forget, [0])
    b = ru.Unlearner(seed=3, beta=0.1).fit_zero_shot(copy.deepcopy(toy_original), t.forget, [0])
    with torch.no_grad():
        assert torch.equal(a(t.test.X), b(t.test.X))


def test_class_rule_prefers_retained_accuracy_under_forget_cap():
    y = torch.tensor([0, 0, 1, 1, 2, 2])

    def logits(pred):
        return torch.nn.functional.one_hot(torch.tensor(pred), 3).float() * 5

    cands = [
        logits([0, 0, 1, 1, 2, 2]),  # forget acc 1.0
        logits([1, 1, 1, 2, 2, 2]),  # forget 0, retained 3/4
        logits([1, 2, 1, 1, 2, 2]),  # forget 0, retained 1.0
    ]
    best, rec = select_candidate("class", cands, y, forget_classes=(0,))
    assert best == 2 and rec[2]["val_retained_acc"] == 1.0
    best, _ = select_candidate("class", cands[:1], y, forget_classes=(0,))
    assert best == 0  # none meets the cap: lowest forget accuracy wins


def test_random_rule_picks_candidate_closest_to_unseen_data():
    torch.manual_seed(0)
    y_v = torch.randint(0, 3, (200,))
    y_f = torch.randint(0, 3, (100,))
    noisy = lambda y, p: torch.where(torch.rand(len(y)) < p, (y + 1) % 3, y)  # noqa: E731
    oh = lambda y: torch.nn.functional.one_hot(y, 3).float() * 3  # noqa: E731
    val = oh(noisy(y_v, 0.1))
    cands_v = [val, val, val]
    cands_f = [oh(y_f), oh(noisy(y_f, 0.1)), oh(noisy(y_f, 0.6))]
    best, rec = select_candidate("random", cands_v, y_v, cands_f, y_f)
    assert best == 1
    assert rec[1]["score"] < rec[0]["score"] and rec[1]["score"] < rec[2]["score"]


def test_features_are_cached_not_recomputed_per_epoch(toy_task, toy_original):
    """The encoder runs once per split (retain, forget, then val/forget for the β rule)."""
    t = toy_task
    calls = []
    handle = toy_original.encoder.register_forward_hook(lambda *a: calls.append(1))
    try:
        ru.Unlearner(seed=0, epochs=7, **TOY).fit(toy_original, t.retain, t.forget, val=t.val)
        n_auto = len(calls)
        calls.clear()
        ru.Unlearner(seed=0, epochs=7, beta=0.1, **TOY).fit(toy_original, t.retain, t.forget)
        n_fixed = len(calls)
    finally:
        handle.remove()
    assert n_fixed == 2  # retain and forget, once each, whatever the number of epochs
    assert n_auto == 4  # + validation and forget features for the selection rule


def test_class_never_first_on_relu_features_warns_and_stays_unclamped():
    head = nn.Linear(2, 2)
    with torch.no_grad():  # class 1 loses to class 0 everywhere in the non-negative quadrant
        head.weight.copy_(torch.tensor([[1.0, 1.0], [0.0, 0.0]]))
        head.bias.copy_(torch.tensor([0.0, -1.0]))
    z_f = torch.tensor([[1.0, 0.0], [3.0, 2.0]])
    with pytest.warns(UserWarning, match=r"never ranks class 1 first on non-negative features"):
        protos = ru.zero_shot_targets(head, z_f, [0])
    with torch.no_grad():
        assert int(head(protos[1]).argmax()) == 1
