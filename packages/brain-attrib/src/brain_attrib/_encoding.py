"""Encoding model (LM hidden states → TR features with delays → ridge) and the differentiable
pipeline tokens → LM → features → ridge → voxels with word-level attributions (Proietti,
Capobianco & Toneva, "Fine-grained Analysis of Brain–LLM Alignment through Input Attribution",
ICML 2026, arXiv 2510.12355; reconstructed from the paper's description).

Features of target TR j come from **one** forward pass over the last ``context`` words ending
with the last word of TR j−1; a word's feature is the layer-ℓ hidden state of its last sub-token
(or the sub-token mean); ``F_{j−d}`` is the mean over words with onset in TR j−d (zeros if none);
``X_j = [F_{j−d}]_{d ∈ delays}``. The pipeline folds each fold's standardisation into per-delay
blocks ``W_d`` so ``ŷ_j = b + Σ_d F_{j−d} W_d`` is differentiable down to ``inputs_embeds``.
``features="per_word"`` fits instead on per-word contexts, as the paper does (``_perword``); the
pipeline keeps the one pass per TR and ``consistency_gap`` reports the difference.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from icml26_shared.checks import SeedLike, int_from_seed
from icml26_shared.experiment import progress as progress_bar
from icml26_shared.state import StateFileError, reading

from ._fmri import RunData
from ._lmconfig import n_layers as _n_layers
from ._lmconfig import n_positions as _n_positions
from ._perword import per_word_design
from ._ridge import LAMBDAS, RidgeFold, blocked_folds, check_lambdas, fit_ridge, pearson_cols

__all__ = ["BASELINES", "FEATURES", "METHODS", "EncodingModel", "Pipeline", "WordScores"]

FEATURES = ("per_tr", "per_word")
METHODS = ("gxi", "ig", "erasure", "flip")
BASELINES = ("category", "zero")
_FORMAT = "brain-attrib-encoding-model-2"
#: the classes a saved model may hold (anything else is refused on load: no code runs)
_CLASSES = {"RunData": RunData, "RidgeFold": RidgeFold}


def _encode(obj: Any, arrays: dict[str, np.ndarray]) -> Any:
    """``obj`` as JSON values, its arrays stored in ``arrays`` (an ``.npz`` without pickles)."""
    if isinstance(obj, np.ndarray):
        if obj.dtype == object or obj.dtype.kind not in "biufU":
            raise TypeError(f"cannot save an array of dtype {obj.dtype}")
        key = f"a{len(arrays)}"
        arrays[key] = obj
        return {"__array__": key}
    if dataclasses.is_dataclass(obj) and type(obj).__name__ in _CLASSES:
        fields = {f.name: _encode(getattr(obj, f.name), arrays) for f in dataclasses.fields(obj)}
        return {"__class__": type(obj).__name__, "fields": fields}
    if isinstance(obj, dict):
        return {"__dict__": [[_encode(k, arrays), _encode(v, arrays)] for k, v in obj.items()]}
    if isinstance(obj, tuple):
        return {"__tuple__": [_encode(v, arrays) for v in obj]}
    if isinstance(obj, list):
        return [_encode(v, arrays) for v in obj]
    if isinstance(obj, np.generic):
        return _encode(obj.item(), arrays)
    if isinstance(obj, float) and not np.isfinite(obj):
        return {"__float__": repr(obj)}
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    raise TypeError(f"cannot save a {type(obj).__name__} in an EncodingModel file")


def _decode(obj: Any, arrays: Any) -> Any:
    if isinstance(obj, list):
        return [_decode(v, arrays) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if "__array__" in obj:
        return arrays[obj["__array__"]]
    if "__class__" in obj:
        cls = _CLASSES[obj["__class__"]]  # KeyError for a foreign class: refused
        return cls(**{k: _decode(v, arrays) for k, v in obj["fields"].items()})
    if "__dict__" in obj:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in obj["__dict__"]}
    if "__tuple__" in obj:
        return tuple(_decode(v, arrays) for v in obj["__tuple__"])
    if "__float__" in obj:
        return float(obj["__float__"])
    raise ValueError(f"unknown entry {sorted(obj)}")


class EncodingModel:
    """Voxelwise ridge encoding model on one causal LM layer.

    Args:
        lm: a ``transformers`` causal LM (e.g. ``AutoModelForCausalLM.from_pretrained(folder,
            local_files_only=True)``); its dtype is used throughout.
        tokenizer: an object with ``encode_word(word) -> list[int]`` or a ``transformers``
            tokenizer (words are encoded with a leading space).
        layer: hidden-state index, 0 (embeddings) … number of layers.
        context: words per forward pass (L; default 32: on the synthetic fMRI L = 128 halves the
            held-out r of the tiny LM's layer 1, 0.151 against 0.388).
        delays: TR delays d ≥ 1 of the design ``[F_{j−d}]``.
        pool: ``"last"`` (last sub-token) or ``"mean"``.
        features: ``"per_tr"`` (default: one pass per TR over the ``context`` words ending with
            the last word of TR j−1, the function the pipeline differentiates) or ``"per_word"``
            (one pass per word over the ``context`` words ending with that word, the paper's fit;
            see ``brain_attrib.consistency_gap`` for the resulting fit/pipeline gap).
    """

    def __init__(
        self,
        lm: Any,
        tokenizer: Any,
        layer: int,
        context: int = 32,
        delays: tuple[int, ...] = (1, 2, 3, 4),
        pool: str = "last",
        features: str = "per_tr",
    ) -> None:
        n_layer = _n_layers(lm)
        if not isinstance(layer, (int, np.integer)) or not 0 <= int(layer) <= n_layer:
            raise ValueError(f"layer must be an integer in [0, {n_layer}], got {layer!r}")
        if not isinstance(context, (int, np.integer)) or int(context) < 1:
            raise ValueError(f"context must be a positive integer, got {context!r}")
        delays = tuple(int(d) for d in delays)
        if not delays or min(delays) < 1:
            raise ValueError(f"delays must be a non-empty tuple of integers ≥ 1, got {delays!r}")
        if pool not in ("last", "mean"):
            raise ValueError(f"pool must be 'last' or 'mean', got {pool!r}")
        if features not in FEATURES:
            raise ValueError(f"features must be one of {FEATURES}, got {features!r}")
        n_vocab = lm.get_input_embeddings().num_embeddings
        if len(tokenizer) > n_vocab:
            raise ValueError(
                f"tokenizer has {len(tokenizer)} tokens but the model's embedding has {n_vocab}"
            )
        self.lm, self.tokenizer, self.layer = lm.eval(), tokenizer, int(layer)
        self.context, self.delays, self.pool = int(context), delays, pool
        self.features = features
        self.dtype = next(lm.parameters()).dtype
        self._cache: dict[str, list[int]] = {}

    # ---- encoding of contexts -------------------------------------------------------------
    def _word_ids(self, word: str) -> list[int]:
        if word not in self._cache:
            if hasattr(self.tokenizer, "encode_word"):
                ids = list(self.tokenizer.encode_word(word))
            else:
                ids = list(self.tokenizer(" " + word, add_special_tokens=False)["input_ids"])
            self._cache[word] = ids or [0]
        return self._cache[word]

    def context_words(self, g: int) -> tuple[np.ndarray, int | None]:
        """Global word indices of TR ``g``'s context and the index of the next word (or None)."""
        rd = self.rd_
        r, j = rd.tr_run[g], rd.tr_local[g]
        idx = self._run_words[r]
        n = int(np.searchsorted(rd.onsets[idx], j * rd.tr, side="left"))
        nxt = int(idx[n]) if n < len(idx) else None
        return idx[max(0, n - self.context) : n], nxt

    def encode_context(
        self, g: int, words: list[str] | None = None
    ) -> tuple[list[int], np.ndarray, np.ndarray]:
        """TR ``g``'s context as the pipeline feeds it to the LM: token ids, the pooling matrix
        ``P`` (|delays| × T; row d averages, over the words with onset in TR j − d, their last
        sub-token, or all of them with ``pool="mean"``) and each token's word index. ``words``
        replaces the context's words (same count), as erasure does."""
        ctx, _ = self.context_words(g)
        if words is None:
            words = [str(self.rd_.words[i]) for i in ctx]
        elif len(words) != len(ctx):
            raise ValueError(f"words must have the context's {len(ctx)} entries, got {len(words)}")
        ids, p, _, tw = self._encode(g, list(words), ctx, None)
        return ids, p, tw

    def _encode(
        self, g: int, words: list[str], ctx: np.ndarray, nxt: str | None
    ) -> tuple[list[int], np.ndarray, list[int], np.ndarray]:
        """Token ids, pooling matrix P (D × T), NWP target positions, token → word index."""
        rd = self.rd_
        j = rd.tr_local[g]
        ids: list[int] = []
        tw: list[int] = []
        for k, w in enumerate(words):
            t = self._word_ids(w)
            ids += t
            tw += [k] * len(t)
        tgt: list[int] = []
        if nxt is not None:
            t = self._word_ids(nxt)
            tgt = list(range(len(ids), len(ids) + len(t)))
            ids += t
            tw += [-1] * len(t)
        if len(ids) > _n_positions(self.lm):
            raise ValueError(
                f"context of {len(words)} words is {len(ids)} tokens, longer than the model's "
                f"{_n_positions(self.lm)} positions; lower context"
            )
        p = np.zeros((len(self.delays), len(ids)))
        tw_arr = np.asarray(tw)
        bucket = (rd.onsets[ctx] // rd.tr).astype(int) if len(ctx) else np.zeros(0, int)
        for di, d in enumerate(self.delays):
            ws = np.flatnonzero(bucket == j - d)
            for k in ws:
                toks = np.flatnonzero(tw_arr == k)
                if self.pool == "last":
                    p[di, toks[-1]] += 1.0 / len(ws)
                else:
                    p[di, toks] += 1.0 / (len(ws) * len(toks))
        return ids, p, tgt, tw_arr

    def _pad(self, items: list[tuple[list[int], np.ndarray, list[int], Any]]):
        """Right-pad token ids and pooling matrices (rows: delays, or 1 per word) to a batch."""
        t = max(len(it[0]) for it in items)
        ids = torch.zeros((len(items), t), dtype=torch.long)
        p = torch.zeros((len(items), items[0][1].shape[0], t), dtype=self.dtype)
        for b, (i, pm, _, _) in enumerate(items):
            ids[b, : len(i)] = torch.as_tensor(i)
            p[b, :, : len(i)] = torch.as_tensor(pm, dtype=self.dtype)
        return ids, p

    def _features(self, emb: torch.Tensor, p: torch.Tensor) -> tuple[torch.Tensor, Any]:
        out = self.lm(inputs_embeds=emb, output_hidden_states=True)
        h = out.hidden_states[self.layer]
        return torch.einsum("bdt,bth->bdh", p, h), out

    # ---- fitting ----------------------------------------------------------------------------
    def fit(
        self,
        run_data: RunData,
        folds: int = 4,
        *,
        gap: int = 5,
        batch: int = 32,
        lambdas: np.ndarray = LAMBDAS,
        progress: bool | None = None,
    ) -> EncodingModel:
        """Compute the design for every TR (``features``) and fit outer-CV ridge (per-voxel λ
        by inner CV)."""
        if not isinstance(run_data, RunData):
            raise TypeError("run_data must be a RunData (see brain_attrib.data)")
        lambdas = check_lambdas(lambdas)
        self.rd_ = run_data
        self._run_words = {
            r: np.flatnonzero(run_data.word_run == r) for r in np.unique(run_data.tr_run)
        }
        n = len(run_data.data)
        if self.features == "per_word":
            self.X_ = per_word_design(self, run_data, batch=batch, progress=progress)
        else:
            self.X_ = self._per_tr_design(run_data, batch=batch, progress=progress)
        y = run_data.data
        self.folds_: list[RidgeFold] = []
        self.fold_of_ = np.zeros(n, dtype=int)
        pred = np.zeros_like(y)
        for k, (tr, te) in enumerate(blocked_folds(n, folds, gap)):
            m = fit_ridge(self.X_[tr], y[tr], lambdas=lambdas)
            self.folds_.append(m)
            self.fold_of_[te] = k
            pred[te] = m.predict(self.X_[te])
        self.pred_ = pred
        self.r_ = pearson_cols(pred, y)
        return self

    def _per_tr_design(self, run_data: RunData, *, batch: int, progress: bool | None) -> np.ndarray:
        """X (TRs × |delays|·H): row j from the one pass over TR j's context."""
        n = len(run_data.data)
        feats = []
        with torch.no_grad():
            for a in progress_bar(
                range(0, n, batch),
                enabled=progress,
                total=(n + batch - 1) // batch,
                desc=f"features L{self.layer}",
            ):
                items = []
                for g in range(a, min(n, a + batch)):
                    ctx, _ = self.context_words(g)
                    items.append(
                        self._encode(g, [run_data.words[i] for i in ctx] or ["."], ctx, None)
                    )
                ids, p = self._pad(items)
                f, _ = self._features(self.lm.get_input_embeddings()(ids), p)
                feats.append(f.reshape(len(items), -1).double().numpy())
        return np.concatenate(feats)

    # ---- persistence ------------------------------------------------------------------------
    def _lm_fingerprint(self) -> list[float]:
        emb = self.lm.get_input_embeddings().weight.detach()
        return [float(emb.shape[0]), float(emb.shape[1]), float(emb.double().sum())]

    def save(self, path: str | Path) -> None:
        """Write the fitted model to ``path``: one ``.npz`` archive of plain arrays (no
        pickles) and JSON settings, holding the designs, ridge folds, scores, run data and
        settings; not the LM or tokenizer, which :meth:`load` takes again. Loading such a file
        runs no code."""
        if not hasattr(self, "r_"):
            raise RuntimeError("call fit first")
        state = {k: v for k, v in self.__dict__.items() if k.endswith("_") or k == "_run_words"}
        settings = {
            "layer": self.layer,
            "context": self.context,
            "delays": list(self.delays),
            "pool": self.pool,
            "features": self.features,
        }
        arrays: dict[str, np.ndarray] = {}
        meta = {
            "format": _FORMAT,
            "settings": settings,
            "lm": self._lm_fingerprint(),
            "state": _encode(state, arrays),
        }
        with open(path, "wb") as f:  # the exact name (np.savez would append ".npz")
            np.savez(f, __meta__=np.array(json.dumps(meta, allow_nan=False)), **arrays)

    @classmethod
    def load(cls, path: str | Path, lm: Any, tokenizer: Any) -> EncodingModel:
        """Read a model written by :meth:`save`, with the ``lm`` and ``tokenizer`` it was fitted
        with (checked against the saved embedding's shape and sum). A missing, unreadable or
        foreign file, or another LM, raises an error naming the file and what is wrong. Files
        of earlier versions (pickles) are refused, never unpickled: fit and save again."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(
                f"path must be a file written by EncodingModel.save, got {str(path)!r} (not found)"
            )
        what = "an EncodingModel file (EncodingModel.save)"
        with open(path, "rb") as f:
            head = f.read(1)
        if head == b"\x80":  # pickle protocol >= 2
            raise StateFileError(
                f"path {str(path)!r} is not a readable EncodingModel file: it is a pickle (an "
                "EncodingModel saved by brain-attrib 0.1 or another program's file), which is "
                "never loaded since loading one can run code; path must be a file written by "
                "EncodingModel.save of this version (an .npz archive): fit the model and save it "
                "again"
            )
        with reading(path, what):
            with np.load(path, allow_pickle=False) as z:
                meta = json.loads(str(z["__meta__"]))
                found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
                if found != _FORMAT:
                    raise ValueError(f"its format must be {_FORMAT!r}, got {found!r}")
                arrays = {k: z[k] for k in z.files if k != "__meta__"}
            state = _decode(meta["state"], arrays)
            settings = meta["settings"]
            saved = meta["lm"]
        model = cls(lm, tokenizer, **settings)
        got = model._lm_fingerprint()
        if saved[:2] != got[:2] or not np.isclose(saved[2], got[2], rtol=1e-6, atol=1e-6):
            raise ValueError(
                f"lm must be the model {str(path)!r} was fitted with: its input embedding "
                f"(rows, width, sum) was {tuple(saved)}, got {tuple(got)}"
            )
        model.__dict__.update(state)
        return model

    def score(self) -> np.ndarray:
        """Held-out Pearson r per voxel (BA)."""
        if not hasattr(self, "r_"):
            raise RuntimeError("call fit first")
        return self.r_


@dataclass
class WordScores:
    """Word-level scores of −L, indexed by position (0 = the most recent context word)."""

    tr: int
    objective: str
    method: str
    scores: np.ndarray
    words: list[str]
    categories: list[str] | None
    word_index: np.ndarray
    extras: dict = field(default_factory=dict)


class Pipeline:
    """tokens → LM → TR features → fixed ridge → voxels, for attribution.

    The ridge of the outer fold whose test block holds the TR is used (held-out TRs).
    ``voxels``: voxel indices in L_BA (default: held-out r ≥ 0.2, else all).
    """

    def __init__(self, encoding_model: EncodingModel, voxels: np.ndarray | None = None) -> None:
        if not hasattr(encoding_model, "folds_"):
            raise RuntimeError("the encoding model must be fitted first")
        self.em = encoding_model
        if voxels is None:
            voxels = np.flatnonzero(encoding_model.r_ >= 0.2)
            if len(voxels) == 0:
                voxels = np.arange(len(encoding_model.r_))
        self.voxels = np.asarray(voxels, dtype=int)
        self._w = []
        d, h = len(encoding_model.delays), encoding_model.X_.shape[1] // len(encoding_model.delays)
        for f in encoding_model.folds_:
            w, b = f.folded()
            self._w.append(
                (
                    torch.as_tensor(
                        w[:, self.voxels].reshape(d, h, -1), dtype=encoding_model.dtype
                    ),
                    torch.as_tensor(b[self.voxels], dtype=encoding_model.dtype),
                )
            )
        self.lm = encoding_model.lm

    def _items(self, g: int, words: list[list[str]], ctx: np.ndarray, nxt: str | None):
        return [self.em._encode(g, w, ctx, nxt) for w in words]

    def _objectives(
        self, g: int, emb: torch.Tensor, p: torch.Tensor, tgts: list[list[int]]
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]:
        w, b = self._w[self.em.fold_of_[g]]
        f, out = self.em._features(emb, p)
        yhat = b + torch.einsum("bdh,dhv->bv", f, w)
        y = torch.as_tensor(self.em.rd_.data[g, self.voxels], dtype=yhat.dtype)
        l_ba = ((yhat - y) ** 2).mean(1)
        l_nwp = None
        logits = getattr(out, "logits", None)
        if logits is not None and tgts[0]:
            lp = torch.log_softmax(logits, -1)
            ids = self._ids
            l_nwp = torch.stack(
                [
                    -torch.stack([lp[bi, t - 1, ids[bi, t]] for t in tg]).mean()
                    for bi, tg in enumerate(tgts)
                ]
            )
        return l_ba, l_nwp, yhat

    def predict(self, tr: int, words: list[str] | None = None) -> np.ndarray:
        """ŷ of TR ``tr`` on the pipeline voxels (optionally with replaced context words)."""
        ctx, _ = self.em.context_words(tr)
        ws = words if words is not None else [self.em.rd_.words[i] for i in ctx]
        ids, p = self.em._pad(self._items(tr, [ws or ["."]], ctx, None))
        self._ids = ids
        with torch.no_grad():
            _, _, yhat = self._objectives(tr, self.lm.get_input_embeddings()(ids), p, [[]])
        return yhat[0].double().numpy()

    def _loss_batch(self, tr: int, variants: list[list[str]], objective: str) -> np.ndarray:
        ctx, nxt = self.em.context_words(tr)
        nw = self.em.rd_.words[nxt] if (objective == "nwp" and nxt is not None) else None
        items = self._items(tr, variants, ctx, nw)
        ids, p = self.em._pad(items)
        self._ids = ids
        with torch.no_grad():
            l_ba, l_nwp, _ = self._objectives(
                tr, self.lm.get_input_embeddings()(ids), p, [it[2] for it in items]
            )
        return (l_ba if objective == "ba" else l_nwp).double().numpy()

    def attribute(
        self,
        tr: int,
        objective: str = "ba",
        method: str = "gxi",
        *,
        baseline: str = "category",
        n_steps: int = 20,
        seed: SeedLike = 0,
        flip: dict[str, str] | None = None,
    ) -> WordScores:
        """Word scores of −L_objective on TR ``tr``'s context (positive = the word helps).

        Args:
            tr: global TR index (a TR with context words; for ``"nwp"`` also a next word).
            objective: ``"ba"`` (L_BA = mean squared error over the pipeline voxels) or
                ``"nwp"`` (L_NWP = mean cross-entropy of the next word's sub-tokens).
            method: ``"gxi"``: a_t = Σ_k (e_{t,k} − b_{t,k}) ∂(−L)/∂e_{t,k}; ``"ig"``:
                (e_t − b_t) · mean over midpoints α_s = (s + ½)/n_steps of ∂(−L)/∂e_t at
                b + α_s (e − b) (``extras["completeness_gap"]``); ``"erasure"``:
                L(word i replaced by a random word of its category) − L(original); ``"flip"``:
                L(word i replaced by its other-number form) − L(original), 0 for words without
                one (number-flip erasure: the agreement cue alone, topic kept).
            baseline: reference b of gxi / ig. ``"category"`` (default): b_t = the mean input
                embedding, at the same sub-token index, of the words of the word's category —
                the counterfactual "another word of this category", the one erasure and the
                planted truth ask; needs ``RunData.categories``. ``"zero"``: b = 0 (the paper's
                default; it ranks words by embedding norm as much as by effect).
            n_steps: IG steps (captum's name; midpoint rule = captum ``riemann_middle``).
            seed: seed of the erasure replacements.
            flip: word → other-number word for ``"flip"`` (default
                ``run_data.extras["number_flip"]``, set by ``synthetic.fmri``).

        Sub-token scores are summed per word; the next word's sub-tokens (NWP teacher forcing)
        are held at their embedding on the IG path.
        """
        seed = int_from_seed(seed, "seed", bits=62)
        if objective not in ("ba", "nwp"):
            raise ValueError(f"objective must be 'ba' or 'nwp', got {objective!r}")
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        if baseline not in BASELINES:
            raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")
        if not isinstance(n_steps, (int, np.integer)) or int(n_steps) < 1:
            raise ValueError(f"n_steps must be a positive integer, got {n_steps!r}")
        rd = self.em.rd_
        if not 0 <= int(tr) < len(rd.data):
            raise ValueError(f"tr must be in [0, {len(rd.data)}), got {tr!r}")
        if objective == "nwp" and self.lm.get_output_embeddings() is None:
            raise ValueError(
                "objective='nwp' needs a model with an LM head (get_output_embeddings)"
            )
        ctx, nxt = self.em.context_words(tr)
        if len(ctx) == 0:
            raise ValueError(f"TR {tr} has no context words")
        if objective == "nwp" and nxt is None:
            raise ValueError(f"TR {tr} has no next word for objective='nwp'")
        words = [rd.words[i] for i in ctx]
        cats = [rd.categories[i] for i in ctx] if rd.categories is not None else None
        extras: dict[str, Any] = {}
        if method in ("erasure", "flip"):
            if method == "erasure":
                if cats is None:
                    raise ValueError("method='erasure' needs word categories (RunData.categories)")
                rng = np.random.default_rng(seed + int(tr))  # seed: int_from_seed above
                subs = {i: _replacement(rd, cats[i], words[i], rng) for i in range(len(words))}
            else:
                table = rd.extras.get("number_flip") if flip is None else flip
                if not isinstance(table, dict):
                    raise ValueError(
                        "method='flip' needs flip (a dict word -> other-number word) or "
                        "run_data.extras['number_flip']"
                    )
                subs = {i: table[w] for i, w in enumerate(words) if w in table}
            pos = sorted(subs)
            variants = [words] + [[*words[:i], subs[i], *words[i + 1 :]] for i in pos]
            loss = np.concatenate(
                [
                    self._loss_batch(tr, variants[a : a + 64], objective)
                    for a in range(0, len(variants), 64)
                ]
            )
            scores = np.zeros(len(words))
            scores[pos] = loss[1:] - loss[0]
        else:
            if baseline == "category" and cats is None:
                raise ValueError(
                    "baseline='category' needs word categories (RunData.categories); "
                    "pass baseline='zero' for data without them"
                )
            nw = rd.words[nxt] if (objective == "nwp") else None
            item = self.em._encode(tr, words, ctx, nw)
            ids, p = self.em._pad([item])
            self._ids = ids
            e = self.lm.get_input_embeddings()(ids).detach()
            tw = item[3]
            b = self._baseline(e, ids, tw, words, cats, baseline)
            if method == "gxi":
                alphas = torch.ones(1, dtype=e.dtype)
            else:
                alphas = (torch.arange(int(n_steps), dtype=e.dtype) + 0.5) / int(n_steps)
            x = (b + alphas[:, None, None] * (e - b)).requires_grad_(True)
            self._ids = ids.expand(len(alphas), -1)
            l_ba, l_nwp, _ = self._objectives(
                tr, x, p.expand(len(alphas), -1, -1), [item[2]] * len(alphas)
            )
            loss = l_ba if objective == "ba" else l_nwp
            (grad,) = torch.autograd.grad(-loss.sum(), x)
            tok = ((e - b)[0] * grad.mean(0)).sum(-1).double().numpy()
            scores = np.array([tok[tw == k].sum() for k in range(len(words))])
            extras["baseline"] = baseline
            if method == "ig":
                with torch.no_grad():
                    lb, ln, _ = self._objectives(
                        tr, torch.cat([e, b]), p.expand(2, -1, -1), [item[2]] * 2
                    )
                    lo = (lb if objective == "ba" else ln).double().numpy()
                extras["completeness_gap"] = float(tok.sum() - (-lo[0] + lo[1]))
        rev = slice(None, None, -1)
        return WordScores(
            int(tr),
            objective,
            method,
            np.asarray(scores)[rev],
            words[rev],
            cats[rev] if cats is not None else None,
            ctx[rev],
            extras,
        )

    def _baseline(
        self,
        e: torch.Tensor,
        ids: torch.Tensor,
        tw: np.ndarray,
        words: list[str],
        cats: list[str] | None,
        baseline: str,
    ) -> torch.Tensor:
        """Baseline embeddings b (1 × T × H); NWP target sub-tokens (tw = −1) keep b = e."""
        b = torch.zeros_like(e)
        keep = torch.as_tensor(tw < 0)
        b[0, keep] = e[0, keep]
        if baseline == "zero":
            return b
        if cats is None:
            raise ValueError("baseline='category' needs word categories")
        table = self.lm.get_input_embeddings().weight.detach()
        pool = _pool(self.em.rd_)
        means: dict[tuple[str, int, int], torch.Tensor] = {}
        for k, w in enumerate(words):
            toks = np.flatnonzero(tw == k)
            for q, t in enumerate(toks):
                key = (cats[k], len(toks), q)
                if key not in means:
                    rows = [
                        ids_w[q]
                        for ids_w in (self.em._word_ids(v) for v in pool.get(cats[k], [w]))
                        if len(ids_w) == len(toks)
                    ] or [int(ids[0, t])]
                    means[key] = table[torch.as_tensor(rows)].mean(0)
                b[0, t] = means[key].to(e.dtype)
        return b


def _pool(rd: RunData) -> dict[str, list[str]]:
    pool = rd.extras.get("_pool")
    if pool is None:
        pool = {}
        for w, c in zip(rd.words, rd.categories or [], strict=False):
            pool.setdefault(c, set()).add(w)
        pool = {c: sorted(v) for c, v in pool.items()}
        rd.extras["_pool"] = pool
    return pool


def _replacement(rd: RunData, cat: str, word: str, rng: np.random.Generator) -> str:
    pool = _pool(rd)
    cands = [w for w in pool.get(cat, [word]) if w != word] or [word]
    return str(cands[int(rng.integers(len(cands)))])
