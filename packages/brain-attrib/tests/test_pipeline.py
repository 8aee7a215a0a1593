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
    ws = pl.attribute(g, "ba", "gxi", baseline="zero")
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
    ig = pl.attribute(80, "nwp", "ig", n_steps=20)
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
            ("gxi", {"baseline": "zero"}, captum.InputXGradient(f).attribute(e)),
            ("gxi", {}, (e - cat) * captum.Saliency(f).attribute(e, abs=False)),
            (
                "ig",
                {"n_steps": 20, "baseline": "zero"},
                captum.IntegratedGradients(f).attribute(
                    e, baselines=base, n_steps=20, method="riemann_middle"
                ),
            ),
            (
                "ig",
                {"n_steps": 20},  # the default baseline
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
    ws = pl.attribute(g, "ba", "gxi", baseline="zero")
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


def test_transformers_tokenizer_and_auto_model(small_lm, tmp_path):
    """Any local causal LM + a ``transformers`` tokenizer (no ``encode_word``), both read back
    with ``local_files_only=True``: fit, pipeline = ridge, GxI of BA and NWP."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerFast

    from brain_attrib.synthetic import fmri

    _, tok, _, folder = small_lm
    hf = Tokenizer(models.WordLevel({w: i for i, w in enumerate(tok.vocab)}, unk_token="<unk>"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=hf, unk_token="<unk>").save_pretrained(tmp_path)
    hf_tok = AutoTokenizer.from_pretrained(tmp_path, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True).double()
    rd = fmri(n_trs=120, n_runs=1, n_voxels=6, n_noise=2, seed=4)
    em = EncodingModel(model, hf_tok, layer=2, context=16).fit(rd, folds=3)
    assert em._word_ids(rd.words[0]) == tok.encode_word(rd.words[0])
    pl = Pipeline(em, voxels=np.arange(6))
    for g in (50, 70):
        np.testing.assert_allclose(pl.predict(g), em.pred_[g], atol=1e-5)
    for objective in ("ba", "nwp"):
        ws = pl.attribute(60, objective, "gxi")
        assert len(ws.scores) == 16 and np.isfinite(ws.scores).all()


def test_per_word_features_and_consistency_gap(small_lm, fitted, record_property):
    """``features="per_word"``: each word's feature from its own pass over the L words ending at
    it (checked by hand for one TR); the fit-vs-pipeline gap is finite and reported; with the
    default one-pass-per-TR features the gap is ≤ 1e-5."""
    from brain_attrib import consistency_gap
    from brain_attrib.synthetic import fmri

    em, rd = fitted
    gap0 = consistency_gap(Pipeline(em, voxels=np.arange(rd.data.shape[1])))
    assert gap0.features == "per_tr" and gap0.max_abs <= 1e-5 and gap0.corr > 1 - 1e-9

    lm, tok, _, _ = small_lm
    rd2 = fmri(n_trs=120, n_runs=1, n_voxels=6, n_noise=2, seed=4)
    pw = EncodingModel(lm.double(), tok, layer=1, context=16, features="per_word").fit(rd2, folds=3)
    g, d = 60, 2  # X_g's block for delay 2 = mean over words of TR g − 2 of their own-pass state
    words = np.flatnonzero(np.floor(rd2.onsets / rd2.tr).astype(int) == g - d)
    hand = []
    for i in words:
        ids = [t for k in range(max(0, i - 15), i + 1) for t in tok.encode_word(rd2.words[k])]
        with torch.no_grad():
            hs = lm(input_ids=torch.as_tensor([ids]), output_hidden_states=True).hidden_states
        hand.append(hs[1][0, -1].double().numpy())
    h = pw.X_.shape[1] // 4
    np.testing.assert_allclose(pw.X_[g, h : 2 * h], np.mean(hand, axis=0), atol=1e-10)
    assert np.isfinite(pw.score()).all()
    from brain_attrib._perword import word_features

    mean = EncodingModel(lm, tok, layer=1, context=16, pool="mean", features="per_word")
    mean._run_words = pw._run_words
    i = next(i for i in range(40, 200) if len(tok.encode_word(rd2.words[i])) == 2)
    ids = [t for k in range(i - 15, i + 1) for t in tok.encode_word(rd2.words[k])]
    with torch.no_grad():
        hs = lm(input_ids=torch.as_tensor([ids]), output_hidden_states=True).hidden_states[1]
    np.testing.assert_allclose(
        word_features(mean, rd2, np.array([i]))[0], hs[0, -2:].mean(0).numpy(), atol=1e-10
    )

    gap = consistency_gap(Pipeline(pw, voxels=np.arange(6)))
    print(f"\nper-word fit vs single-pass pipeline: {gap}\ndefault: {gap0}")
    record_property("per_word_gap_max_abs", gap.max_abs)
    record_property("per_word_gap_rel_rms", gap.rel_rms)
    assert gap.features == "per_word"
    assert np.isfinite([gap.max_abs, gap.rel_rms, gap.corr, gap.r_pipeline]).all()
    assert gap.max_abs > 1e-5  # the per-word fit is not the pipeline's function
    with pytest.raises(ValueError, match=r"features must be one of \('per_tr', 'per_word'\)"):
        EncodingModel(lm, tok, layer=1, features="per_sentence")
    with pytest.raises(ValueError, match="trs"):
        consistency_gap(Pipeline(pw), trs=np.array([5000, 1]))


def test_encode_context_pools_the_words_of_each_delayed_tr(fitted):
    """``encode_context``: row d of P averages the last sub-token of the words with onset in
    TR j − d (rows sum to 1, or 0 where that TR has no word); own words = default."""
    em, rd = fitted
    g = 60
    ctx, _ = em.context_words(g)
    ids, p, tw = em.encode_context(g)
    assert p.shape == (len(em.delays), len(ids)) and len(tw) == len(ids)
    j = rd.tr_local[g]
    bucket = (rd.onsets[ctx] // rd.tr).astype(int)
    for di, d in enumerate(em.delays):
        in_tr = np.flatnonzero(bucket == j - d)
        np.testing.assert_allclose(p[di].sum(), 1.0 if len(in_tr) else 0.0)
        assert set(tw[p[di] > 0]) == set(in_tr)
    same = em.encode_context(g, [str(rd.words[i]) for i in ctx])
    assert same[0] == ids and np.array_equal(same[1], p)
    with pytest.raises(ValueError, match="words must have"):
        em.encode_context(g, ["the"])


def test_number_flip_erasure(fitted):
    """``method="flip"``: words without number score exactly 0; a flip of the subject noun
    changes L_NWP before a verb; a missing flip table is named."""
    em, rd = fitted
    pl = Pipeline(em)
    g = next(
        g
        for g in range(60, 200)
        if (nx := em.context_words(g)[1]) is not None and rd.categories[nx].startswith("verb")
    )
    ws = pl.attribute(g, "nwp", "flip")
    table = rd.extras["number_flip"]
    assert all((s == 0.0) == (w not in table) for s, w in zip(ws.scores, ws.words, strict=True))
    assert ws.scores[0] != 0.0  # the subject noun right before the verb
    with pytest.raises(ValueError, match=r"method='flip' needs flip"):
        pl.attribute(g, "nwp", "flip", flip=[("a", "some")])
    custom = pl.attribute(g, "nwp", "flip", flip={ws.words[0]: table[ws.words[0]]})
    assert custom.scores[0] == ws.scores[0] and np.count_nonzero(custom.scores) == 1


def test_oracle_encoder_is_a_pipeline_without_nwp():
    from brain_attrib.metrics import recovery
    from brain_attrib.synthetic import fmri, oracle_lm, planted_words

    rd = fmri(n_trs=2000, n_runs=2, n_voxels=10, n_noise=2, seed=5)
    lm, tok = oracle_lm()
    em = EncodingModel(lm, tok, layer=0).fit(rd, folds=3)
    assert em.score()[:8].mean() > 0.4 and abs(em.score()[8:].mean()) < 0.2
    pl = Pipeline(em, voxels=np.arange(8))
    np.testing.assert_allclose(pl.predict(200), em.pred_[200, :8], atol=1e-9)
    g = next(g for g in range(150, 300) if len(planted_words(rd, g)) >= 2)
    ws = pl.attribute(g, "ba", "ig")
    nouns = np.array([c.startswith("noun") for c in ws.categories])
    assert np.all(ws.scores[~nouns] == 0.0)  # non-nouns: e = b = 0
    pos = {int(np.flatnonzero(ws.word_index == i)[0]) for i in planted_words(rd, g)}
    assert 0.0 <= recovery(ws.scores, pos) <= 1.0
    with pytest.raises(ValueError, match="LM head"):
        pl.attribute(g, "nwp")
