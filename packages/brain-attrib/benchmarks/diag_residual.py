"""Is L_BA's gradient driven by the held-out residual? Recovery IoU of GxI / IG / erasure under
three objectives on the setting of ``reproduce --quick`` (cached tiny LM, synthetic fMRI seed 0,
layer 1, L = 32, the same 40 held-out TRs with P_j ≠ ∅, signal voxels):

(a) the spec's L_BA = mean_v (ŷ_jv − y_jv)²;
(b) the residual-free response energy mean_v (ŷ_jv − b_v)², b = the fold's ridge intercept
    (the mean training response, so ŷ − b = the standardised design times W);
(c) L_BA with y replaced by the noise-free planted signal s (``rd.extras["signal"]``).

∂L/∂e = (2/V) Jᵀ(ŷ − target), J = ∂ŷ/∂e, so (a) = (c) + a noise part (2/V) Jᵀ(s − y); the script
reports that split, an explicit-Jacobian check of the algebra on a few TRs, and erasure's
ΔL_BA = mean(Δŷ²) + 2·mean((ŷ − y)Δŷ) term by term.

The forward pass (tokens → LM → TR features → folded ridge) is rebuilt here from public
attributes (``context_words``, ``folds_``, ``fold_of_``, ``rd_``) and checked against
``Pipeline.predict`` / ``Pipeline.attribute`` on the first TRs.

Run from the repo root: ``python packages/brain-attrib/benchmarks/diag_residual.py``.
"""

from __future__ import annotations

import time

import numpy as np
import torch
from scipy.stats import hypergeom, spearmanr

from brain_attrib import EncodingModel, Pipeline
from brain_attrib.metrics import iou, top_k
from brain_attrib.synthetic import fmri, planted_words, tiny_lm

LAYER, CONTEXT, N_ATTR = 1, 32, 40  # reproduce's QUICK config, its first layer
STEPS = 20  # IG midpoints, as the package
N_CHECK = 3  # TRs cross-checked against Pipeline.attribute
N_JAC = 3  # TRs with the explicit Jacobian
OBJECTIVES = ("a", "b", "c")
LABELS = {
    "a": "(a) L_BA = mean (ŷ−y)²",
    "b": "(b) energy mean (ŷ−b)²",
    "c": "(c) L_BA, y := signal s",
}


class Forward:
    """The pipeline's differentiable map, from public attributes of a fitted EncodingModel."""

    def __init__(self, em: EncodingModel, voxels: np.ndarray) -> None:
        self.em, self.rd, self.vox = em, em.rd_, np.asarray(voxels)
        self.lm = em.lm
        self.table = self.lm.get_input_embeddings().weight.detach()
        self.n_d = len(em.delays)
        self.h = em.X_.shape[1] // self.n_d
        pool: dict[str, set[str]] = {}
        for w, c in zip(self.rd.words, self.rd.categories, strict=True):
            pool.setdefault(c, set()).add(w)
        self.pool = {c: sorted(v) for c, v in pool.items()}

    def word_ids(self, w: str) -> list[int]:
        return list(self.em.tokenizer.encode_word(w)) or [0]

    def encode(self, g: int, words: list[str]) -> tuple[list[int], np.ndarray, np.ndarray]:
        """Token ids, pooling matrix P (D × T) and token → word index, as the package builds them."""
        return self.em.encode_context(g, words)

    def weights(self, g: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Folded W (D × H × V), folded intercept b', and the ridge intercept b (mean response)."""
        fold = self.em.folds_[self.em.fold_of_[g]]
        w, b_folded = fold.folded()
        w = w[:, self.vox].reshape(self.n_d, self.h, -1)
        return (
            torch.as_tensor(w, dtype=torch.float64),
            torch.as_tensor(b_folded[self.vox], dtype=torch.float64),
            torch.as_tensor(fold.b[self.vox], dtype=torch.float64),
        )

    def yhat(self, g: int, x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        """ŷ (B × V) from input embeddings x (B × T × H) and pooling P (B × D × T)."""
        w, b_folded, _ = self.weights(g)
        out = self.lm(inputs_embeds=x, output_hidden_states=True)
        f = torch.einsum("bdt,bth->bdh", p, out.hidden_states[self.em.layer])
        return b_folded + torch.einsum("bdh,dhv->bv", f, w)

    def category_baseline(self, ids: list[int], tw: np.ndarray, words, cats) -> torch.Tensor:
        """b_t = mean embedding of the word's category at the same sub-token index."""
        b = torch.zeros(len(ids), self.table.shape[1], dtype=self.table.dtype)
        for k, w in enumerate(words):
            toks = np.flatnonzero(tw == k)
            for q, t in enumerate(toks):
                rows = [
                    iw[q]
                    for iw in (self.word_ids(v) for v in self.pool.get(cats[k], [w]))
                    if len(iw) == len(toks)
                ] or [ids[t]]
                b[t] = self.table[torch.as_tensor(rows)].mean(0)
        return b

    def replacement(self, cat: str, word: str, rng: np.random.Generator) -> str:
        """A random other word of the same category (the package's erasure draw)."""
        cands = [w for w in self.pool.get(cat, [word]) if w != word] or [word]
        return str(cands[int(rng.integers(len(cands)))])


def losses(yh: torch.Tensor, y: torch.Tensor, s: torch.Tensor, b: torch.Tensor) -> dict:
    """The three objectives per batch row."""
    return {
        "a": ((yh - y) ** 2).mean(1),
        "b": ((yh - b) ** 2).mean(1),
        "c": ((yh - s) ** 2).mean(1),
    }


def per_word(tok_scores: np.ndarray, tw: np.ndarray, n: int) -> np.ndarray:
    """Sum sub-token scores per word and reverse (position 0 = most recent word)."""
    return np.array([tok_scores[tw == k].sum() for k in range(n)])[::-1]


def cos(u: np.ndarray, v: np.ndarray) -> float:
    d = np.linalg.norm(u) * np.linalg.norm(v)
    return float(np.dot(u.ravel(), v.ravel()) / d) if d > 0 else 0.0


def mse(v: list[float]) -> str:
    a = np.asarray(v, dtype=float)
    return f"{a.mean():.3f} ± {a.std(ddof=1) / np.sqrt(len(a)):.3f}"


def random_iou(k: int, n: int) -> float:
    """Expected IoU of a uniformly random k-subset of n positions with a fixed k-subset."""
    m = np.arange(k + 1)
    return float(np.sum(hypergeom.pmf(m, n, k, k) * m / (2 * k - m)))


def main() -> None:
    t0 = time.perf_counter()
    torch.set_num_threads(2)
    lm, tok, info = tiny_lm()  # cached: the same folder reproduce uses, nothing retrains
    rd = fmri(seed=0)
    run(lm.double(), tok, info, rd, LAYER, CONTEXT, N_ATTR, t0)


def run(lm, tok, info: dict, rd, layer: int, context: int, n_attr: int, t0: float) -> dict:
    """Fit the encoding model as reproduce does, attribute ``n_attr`` TRs, print the table."""
    sig_vox = rd.extras["signal_voxels"]
    signal = rd.extras["signal"]
    em = EncodingModel(lm, tok, layer=layer, context=context).fit(rd)
    pl = Pipeline(em, voxels=sig_vox)
    fw = Forward(em, pl.voxels)
    rng = np.random.default_rng(0)
    cand = [
        g
        for g in range(len(rd.data))
        if len(em.context_words(g)[0]) == context
        and em.context_words(g)[1] is not None
        and planted_words(rd, g)
    ]
    trs = [int(g) for g in rng.choice(cand, size=min(n_attr, len(cand)), replace=False)]
    t_fit = time.perf_counter() - t0
    print(
        f"tiny LM CE {info['heldout_ce']:.3f} / unigram {info['unigram_ce']:.3f}; layer {layer}, "
        f"L = {context}, {len(trs)} TRs; held-out r signal {em.score()[sig_vox].mean():.3f}, "
        f"noise {em.score()[rd.extras['noise_voxels']].mean():.3f}; load + fit {t_fit:.1f} s"
    )

    rec: dict[str, list[float]] = {}
    rho: dict[str, list[float]] = {o: [] for o in OBJECTIVES}
    stat: dict[str, list[float]] = {}
    check: dict[str, float] = {}

    def add(d: dict, k: str, v: float) -> None:
        d.setdefault(k, []).append(float(v))

    for n_tr, g in enumerate(trs):
        ctx, _ = em.context_words(g)
        words = [rd.words[i] for i in ctx]
        cats = [rd.categories[i] for i in ctx]
        n = len(words)
        pos = {int(np.flatnonzero(ctx[::-1] == i)[0]) for i in planted_words(rd, g)}
        k = len(pos)
        y = torch.as_tensor(rd.data[g, fw.vox], dtype=torch.float64)
        s = torch.as_tensor(signal[g, fw.vox], dtype=torch.float64)
        _, _, b_mean = fw.weights(g)
        ids, p_np, tw = fw.encode(g, words)
        p = torch.as_tensor(p_np)[None]
        e = fw.table[torch.as_tensor(ids)][None]
        b_cat = fw.category_baseline(ids, tw, words, cats)[None]

        # GxI (zero and category baselines) at e, for the three objectives
        x = e.clone().requires_grad_(True)
        yh = fw.yhat(g, x, p)
        ls = losses(yh, y, s, b_mean)
        grads = {
            o: torch.autograd.grad(-ls[o].sum(), x, retain_graph=True)[0][0] for o in OBJECTIVES
        }
        gxi = {o: per_word((e[0] * grads[o]).sum(-1).numpy(), tw, n) for o in OBJECTIVES}
        gxc = {o: per_word(((e - b_cat)[0] * grads[o]).sum(-1).numpy(), tw, n) for o in OBJECTIVES}
        yh0 = yh.detach()[0]
        add(stat, "L_BA mean (ŷ−y)²", ((yh0 - y) ** 2).mean())
        add(stat, "noise mean (y−s)²", ((y - s) ** 2).mean())
        add(stat, "fit error mean (ŷ−s)²", ((yh0 - s) ** 2).mean())
        add(stat, "energy mean (ŷ−b)²", ((yh0 - b_mean) ** 2).mean())
        add(stat, "signal energy mean (s−b)²", ((s - b_mean) ** 2).mean())
        # (a) = (c) + noise part, linear in the residual: ∂(−L_a) − ∂(−L_c) = −(2/V) Jᵀ(s − y)
        g_noise = (grads["a"] - grads["c"]).numpy()
        add(stat, "|cos| ∇L_a, noise part", abs(cos(grads["a"].numpy(), g_noise)))
        add(stat, "|cos| ∇L_a, ∇L_c (fit part)", abs(cos(grads["a"].numpy(), grads["c"].numpy())))
        add(stat, "‖noise part‖/‖fit part‖", np.linalg.norm(g_noise) / np.linalg.norm(grads["c"]))
        add(stat, "|cos| GxI_a, GxI noise part", abs(cos(gxi["a"], gxi["a"] - gxi["c"])))
        add(stat, "|cos| GxI_a, GxI_c", abs(cos(gxi["a"], gxi["c"])))

        # IG, zero baseline, m midpoints
        alphas = (torch.arange(STEPS, dtype=torch.float64) + 0.5) / STEPS
        xi = (alphas[:, None, None] * e).requires_grad_(True)
        li = losses(fw.yhat(g, xi, p.expand(STEPS, -1, -1)), y, s, b_mean)
        ig = {}
        for o in OBJECTIVES:
            (gi,) = torch.autograd.grad(-li[o].sum(), xi, retain_graph=True)
            ig[o] = per_word((e[0] * gi.mean(0)).sum(-1).numpy(), tw, n)

        # erasure: same-category replacement, the package's draw (seed 0 + tr)
        er_rng = np.random.default_rng(g)
        variants = [words] + [
            [*words[:i], fw.replacement(cats[i], words[i], er_rng), *words[i + 1 :]]
            for i in range(n)
        ]
        enc = [fw.encode(g, v) for v in variants]
        t_max = max(len(it[0]) for it in enc)
        ids_v = torch.zeros((len(enc), t_max), dtype=torch.long)
        p_v = torch.zeros((len(enc), fw.n_d, t_max), dtype=torch.float64)
        for bi, (iv, pv, _) in enumerate(enc):
            ids_v[bi, : len(iv)] = torch.as_tensor(iv)
            p_v[bi, :, : len(iv)] = torch.as_tensor(pv)
        with torch.no_grad():
            yv = fw.yhat(g, fw.table[ids_v], p_v)
        lv = losses(yv, y, s, b_mean)
        er = {o: (lv[o][1:] - lv[o][0]).numpy()[::-1] for o in OBJECTIVES}
        dy = yv[1:] - yv[0]
        er["a: mean Δŷ² term"] = (dy**2).mean(1).numpy()[::-1]
        er["a: 2 mean (ŷ−y)Δŷ term"] = (2 * ((yv[0] - y) * dy).mean(1)).numpy()[::-1]
        er["b: 2 mean (ŷ−b)Δŷ term"] = (2 * ((yv[0] - b_mean) * dy).mean(1)).numpy()[::-1]
        er["c: 2 mean (ŷ−s)Δŷ term"] = (2 * ((yv[0] - s) * dy).mean(1)).numpy()[::-1]
        quad, lin = er["a: mean Δŷ² term"], er["a: 2 mean (ŷ−y)Δŷ term"]
        add(
            stat,
            "erasure (a): Δŷ² term / |2(ŷ−y)Δŷ| term",
            quad.mean() / np.abs(lin).mean(),
        )

        for o in OBJECTIVES:
            add(rec, f"{o} gxi", iou(top_k(gxi[o], k), pos))
            add(rec, f"{o} ig", iou(top_k(ig[o], k), pos))
            add(rec, f"{o} gxi_cat", iou(top_k(gxc[o], k), pos))
            add(rec, f"{o} erasure", iou(top_k(er[o], k), pos))
            rho[o].append(float(spearmanr(gxi[o], ig[o]).statistic))
        for key in er:
            if ":" in key:
                add(rec, key, iou(top_k(er[key], k), pos))
        add(rec, "random", random_iou(k, n))

        if n_tr < N_CHECK:  # the rebuilt map = the package's
            ref = pl.predict(g)
            check["ŷ vs Pipeline.predict"] = max(
                check.get("ŷ vs Pipeline.predict", 0.0), float(np.abs(ref - yh0.numpy()).max())
            )
            for name, mine, kw in (
                ("GxI", gxi["a"], {"method": "gxi", "baseline": "zero"}),
                ("GxI category", gxc["a"], {"method": "gxi", "baseline": "category"}),
                ("IG", ig["a"], {"method": "ig", "baseline": "zero"}),
                ("erasure", er["a"], {"method": "erasure"}),
            ):
                pk = pl.attribute(g, "ba", **kw).scores
                rel = float(np.abs(pk - mine).max() / max(np.abs(pk).max(), 1e-300))
                check[f"{name} (a) vs Pipeline.attribute, rel"] = max(
                    check.get(f"{name} (a) vs Pipeline.attribute, rel", 0.0), rel
                )
        if n_tr < N_JAC:  # explicit Jacobian: ∇L_a = (2/V) Σ_v (ŷ_v − y_v) ∂ŷ_v/∂e
            xj = e.clone().requires_grad_(True)
            yj = fw.yhat(g, xj, p)[0]
            jac = torch.stack(
                [torch.autograd.grad(yj[v], xj, retain_graph=True)[0][0] for v in range(len(yj))]
            )
            r = (yj.detach() - y).numpy()
            pred = 2.0 / len(r) * np.tensordot(r, jac.numpy(), axes=1)
            add(stat, "cos ∇L_a, (2/V) Σ r_v ∂ŷ_v/∂e (Jacobian)", cos(-grads["a"].numpy(), pred))

    t_all = time.perf_counter() - t0
    print("\ncross-checks vs the package (first TRs): ")
    for key, v in check.items():
        print(f"  {key}: {v:.2e}")
    print(f"\nRecovery IoU(top-|P_j|, P_j), mean ± s.e. over {len(trs)} TRs; ρ = median Spearman")
    head = f"{'objective':<26} {'GxI':>13} {'IG':>13} {'GxI cat-bl':>13} {'erasure':>13} {'ρ(GxI,IG)':>10}"
    print(head)
    print("-" * len(head))
    for o in OBJECTIVES:
        print(
            f"{LABELS[o]:<26} {mse(rec[f'{o} gxi']):>13} {mse(rec[f'{o} ig']):>13} "
            f"{mse(rec[f'{o} gxi_cat']):>13} {mse(rec[f'{o} erasure']):>13} "
            f"{np.median(rho[o]):>10.3f}"
        )
    print("\nErasure ΔL split into its terms (recovery IoU of each term alone):")
    for key in rec:
        if ":" in key:
            print(f"  {key:<28} {mse(rec[key])}")
    print(f"  {'random top-|P_j| (expected)':<28} {mse(rec['random'])}")
    print("\nPer-TR quantities (mean over TRs):")
    for key, v in stat.items():
        print(f"  {key:<44} {np.mean(v):.4g}")
    print(f"\ntime: load + fit {t_fit:.1f} s, total {t_all:.1f} s")
    return {"rec": rec, "rho": rho, "stat": stat, "check": check}


if __name__ == "__main__":
    main()
