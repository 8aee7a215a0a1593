from __future__ import annotations

import numpy as np
import pytest
import torch

from brain_attrib import EncodingModel, Pipeline, masking_test


def test_lm_loads_from_folder_and_learns(small_lm):
    from transformers import AutoModelForCausalLM

    _, _, info, folder = small_lm
    lm = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True)
    assert lm.config.n_layer == 2
    assert info["heldout_ce"] < info["unigram_ce"]


def test_consistency_pipeline_vs_ridge(fitted):
    em, rd = fitted
    pl = Pipeline(em, voxels=np.arange(rd.data.shape[1]))
    rng = np.random.default_rng(0)
    for g in rng.choice(np.arange(10, len(rd.data)), size=20, replace=False):
        np.testing.assert_allclose(pl.predict(int(g)), em.pred_[g], atol=1e-5)


def test_subtoken_sum_and_gxi_matches_manual(fitted):
    em, rd = fitted
    pl = Pipeline(em)
    g = next(
        g
        for g in range(40, 120)
        if any(len(em._word_ids(rd.words[i])) == 2 for i in em.context_words(g)[0])
    )
    ws = pl.attribute(g, "ba", "gxi")
    ctx, _ = em.context_words(g)
    words = [rd.words[i] for i in ctx]
    ids, p, _, tw = em._encode(g, words, ctx, None)
    ids_t, p_t = em._pad([(ids, p, [], tw)])
    e = em.lm.get_input_embeddings()(ids_t).detach().requires_grad_(True)
    pl._ids = ids_t
    l_ba, _, _ = pl._objectives(g, e, p_t, [[]])
    (gr,) = torch.autograd.grad(-l_ba.sum(), e)
    tok = (e * gr).sum(-1)[0].detach().numpy()
    manual = np.array([tok[tw == k].sum() for k in range(len(words))])[::-1]
    np.testing.assert_allclose(ws.scores, manual, atol=1e-10)
    assert any(len(em._word_ids(w)) == 2 for w in words)


def test_ig_completeness_and_erasure(fitted):
    em, _ = fitted
    pl = Pipeline(em)
    ig = pl.attribute(80, "nwp", "ig", steps=20)
    assert abs(ig.extras["completeness_gap"]) < 0.05 * max(1e-3, np.abs(ig.scores).sum())
    er = pl.attribute(80, "ba", "erasure")
    assert np.isfinite(er.scores).all() and len(er.scores) == len(ig.scores)


def test_captum_cross_check(fitted):
    captum = pytest.importorskip("captum.attr")
    em, _ = fitted
    pl = Pipeline(em)
    g = 70
    for objective in ("ba", "nwp"):
        ctx, nxt = em.context_words(g)
        words = [em.rd_.words[i] for i in ctx]
        nw = em.rd_.words[nxt] if objective == "nwp" else None
        item = em._encode(g, words, ctx, nw)
        ids, p = em._pad([item])
        e = em.lm.get_input_embeddings()(ids).detach()

        def f(x, p=p, item=item, objective=objective, ids=ids):
            pl._ids = ids.expand(len(x), -1)
            lb, ln, _ = pl._objectives(g, x, p.expand(len(x), -1, -1), [item[2]] * len(x))
            return -(lb if objective == "ba" else ln)

        tw = item[3]
        n = len(words)
        base = torch.zeros_like(e)
        base[0, torch.as_tensor(tw < 0)] = e[0, torch.as_tensor(tw < 0)]  # next word held fixed
        cat = pl._baseline(e, ids, tw, words, [em.rd_.categories[i] for i in ctx], "category")
        for method, ours_kw, ref in (
            ("gxi", {}, captum.InputXGradient(f).attribute(e)),
            (
                "ig",
                {"steps": 20},
                captum.IntegratedGradients(f).attribute(
                    e, baselines=base, n_steps=20, method="riemann_middle"
                ),
            ),
            (
                "ig",
                {"steps": 20, "baseline": "category"},
                captum.IntegratedGradients(f).attribute(
                    e, baselines=cat, n_steps=20, method="riemann_middle"
                ),
            ),
        ):
            tok = ref.sum(-1)[0].detach().numpy()
            ref_words = np.array([tok[tw == k].sum() for k in range(n)])[::-1]
            ours = pl.attribute(g, objective, method, **ours_kw).scores
            np.testing.assert_allclose(ours, ref_words, atol=1e-6 if method == "gxi" else 1e-4)


def test_masking_runs(fitted):
    em, _ = fitted
    res = masking_test(Pipeline(em), np.arange(60, 80), k=2)
    assert res.k == 2 and np.isfinite(res.drop_top)


def test_bad_inputs(small_lm, fitted):
    lm, tok, _, _ = small_lm
    em, rd = fitted
    with pytest.raises(ValueError, match="layer"):
        EncodingModel(lm, tok, layer=9)
    with pytest.raises(ValueError, match="delays"):
        EncodingModel(lm, tok, layer=1, delays=())
    with pytest.raises(ValueError, match="delays"):
        EncodingModel(lm, tok, layer=1, delays=(-1,))
    with pytest.raises(ValueError, match="context"):
        EncodingModel(lm, tok, layer=1, context=0)

    class BigTok:
        def __len__(self):
            return 10_000

    with pytest.raises(ValueError, match=r"vocab|tokens"):
        EncodingModel(lm, BigTok(), layer=1)
    pl = Pipeline(em)
    with pytest.raises(ValueError, match="objective"):
        pl.attribute(60, "xx")
    with pytest.raises(ValueError, match="method"):
        pl.attribute(60, "ba", "xx")
    with pytest.raises(ValueError, match="k must"):
        masking_test(pl, np.arange(60, 70), k=1000)
    long = EncodingModel(lm, tok, layer=1, context=500)
    long.rd_, long._run_words = rd, em._run_words
    with pytest.raises(ValueError, match="positions"):
        long._encode(
            110,
            [rd.words[i] for i in long.context_words(110)[0]] * 10,
            long.context_words(110)[0],
            None,
        )
    base = lm.transformer

    class NoHead(torch.nn.Module):
        config = lm.config

        def get_output_embeddings(self):
            return None

    em2 = EncodingModel.__new__(EncodingModel)
    em2.__dict__.update(em.__dict__)
    pl2 = Pipeline(em2)
    pl2.lm = NoHead()
    with pytest.raises(ValueError, match="LM head"):
        pl2.attribute(60, "nwp")
    assert base is not None


def test_gxi_equals_finite_difference_of_embedding_scaling(fitted):
    """a_i = d/dε (−L)(e with word i's sub-token embeddings scaled by 1 + ε) at ε = 0."""
    em, rd = fitted
    pl = Pipeline(em)
    g = 90
    ws = pl.attribute(g, "ba", "gxi")
    ctx, _ = em.context_words(g)
    words = [rd.words[i] for i in ctx]
    item = em._encode(g, words, ctx, None)
    ids, p = em._pad([item])
    e = em.lm.get_input_embeddings()(ids).detach()
    pl._ids = ids

    def neg_loss(x):
        with torch.no_grad():
            return -float(pl._objectives(g, x, p, [[]])[0][0])

    h = 1e-5
    fd = []
    for k in range(len(words)):
        m = torch.zeros_like(e)
        m[0, torch.as_tensor(item[3] == k)] = 1.0
        fd.append((neg_loss(e * (1 + h * m)) - neg_loss(e * (1 - h * m))) / (2 * h))
    np.testing.assert_allclose(ws.scores, np.array(fd)[::-1], atol=1e-6)


def test_category_baseline(fitted):
    """b_t = the category's mean embedding: same-category words get b = their embedding's class
    mean; IG completeness holds against L(b); a bad baseline name is refused."""
    em, rd = fitted
    pl = Pipeline(em)
    g = 90
    gx = pl.attribute(g, "ba", "gxi", baseline="category")
    ig = pl.attribute(g, "ba", "ig", baseline="category")
    assert gx.extras["baseline"] == "category" and np.isfinite(gx.scores).all()
    assert abs(ig.extras["completeness_gap"]) < 0.05 * max(1e-3, np.abs(ig.scores).sum())
    ctx, _ = em.context_words(g)
    words = [rd.words[i] for i in ctx]
    cats = [rd.categories[i] for i in ctx]
    item = em._encode(g, words, ctx, None)
    ids, _ = em._pad([item])
    e = em.lm.get_input_embeddings()(ids).detach()
    b = pl._baseline(e, ids, item[3], words, cats, "category")
    k = next(k for k, c in enumerate(cats) if c == "punct")  # one-word category: b = e
    t = int(np.flatnonzero(item[3] == k)[0])
    torch.testing.assert_close(b[0, t], e[0, t])
    with pytest.raises(ValueError, match="baseline"):
        pl.attribute(g, "ba", "gxi", baseline="mean")
