"""MetaStreet (ICML 2026): street encoder (image LSTM + text MLP), attention fusion, two-layer
GAT, geography-aware contrast with pseudo-labels; epochs and ``w`` selected on validation only.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import torch
from numpy.typing import NDArray
from torch import Tensor, nn

from icml26_shared.checks import (
    SeedLike,
    check_choice,
    check_positive,
    check_positive_int,
    int_from_seed,
)

from ._city import CityData
from ._features import batch_image_features, check_map, skipgram_embeddings, top_categories
from ._graph import (
    GATLayer,
    GCNLayer,
    info_nce,
    knn_edges,
    pseudo_labels,
    with_self_loops,
)
from ._text import HashingEncoder, TextEncoder, encode_texts

__all__ = ["MetaStreet", "classification_metrics", "street_features"]

W_GRID = (0.1, 0.5, 0.9)
_FORMAT = "metastreet-model-1"


def city_fingerprint(city: CityData) -> str:
    """A digest of a city's streets, graph and image-to-street assignment (not its labels):
    tells the fitted city apart from any other."""
    import hashlib

    h = hashlib.sha256()
    h.update(np.int64(city.n_streets).tobytes())
    h.update(np.ascontiguousarray(city.edges, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(city.image_street, dtype=np.int64).tobytes())
    return h.hexdigest()[:16]


def classification_metrics(y: NDArray, logits: NDArray) -> dict[str, float]:
    """Accuracy, weighted F1, macro F1 and mean reciprocal rank of the true class."""
    from sklearn.metrics import accuracy_score, f1_score  # on first use: slow to import

    pred = logits.argmax(1)
    rank = 1 + (logits > logits[np.arange(y.size), y][:, None]).sum(1)
    return {
        "accuracy": float(accuracy_score(y, pred)),
        "weighted_f1": float(f1_score(y, pred, average="weighted", zero_division=0)),
        "macro_f1": float(f1_score(y, pred, average="macro", zero_division=0)),
        "mrr": float(np.mean(1.0 / rank)),
    }


def weighted_f1(y: NDArray, pred: NDArray, n_classes: int) -> float:
    r"""Support-weighted mean of the per-class F1 scores,
    :math:`\sum_c \frac{n_c}{n} \frac{2\,tp_c}{n_c + \hat n_c}` (``n_c`` true and
    :math:`\hat n_c` predicted members of class ``c``; 0 where both are 0): scikit-learn's
    ``f1_score(average="weighted", zero_division=0)`` in three ``bincount`` calls, for the
    per-epoch validation score (scikit-learn's input checks cost milliseconds per call)."""
    y = np.asarray(y, dtype=np.int64)
    pred = np.asarray(pred, dtype=np.int64)
    support = np.bincount(y, minlength=n_classes)
    if support.sum() == 0:
        return 0.0
    tp = np.bincount(y[y == pred], minlength=n_classes)
    denom = (support + np.bincount(pred, minlength=n_classes)).astype(float)
    f1 = np.divide(2.0 * tp, denom, out=np.zeros(denom.size), where=denom > 0)
    return float((f1 * support).sum() / support.sum())


def street_features(
    city: CityData, n_categories: int = 48, *, use_adjacency: bool = True, seed: SeedLike = 0
) -> tuple[Tensor, Tensor]:
    """Padded per-street image-vector sequences ``(n_streets, L, K*16)`` and lengths.

    Unsupervised: categories and skip-gram embeddings come from all images, never labels.
    Cached on ``city`` per (``n_categories``, ``use_adjacency``, ``seed``).
    """
    cache = city.__dict__.setdefault("_feature_cache", {})
    key = (n_categories, use_adjacency, seed)
    if key in cache:
        return cache[key]
    maps = [check_map(m, city.n_all, f"maps[{i}]") for i, m in enumerate(city.maps)]
    keep = top_categories(maps, city.n_all, n_categories)
    emb = skipgram_embeddings(maps, keep, city.n_all, seed=seed)
    if not maps:
        raise ValueError("city has no images")
    if len({m.shape for m in maps}) > 1:
        raise ValueError("all maps must share one shape")
    vecs = batch_image_features(maps, emb, keep, city.n_all, use_adjacency=use_adjacency)
    lengths = np.bincount(city.image_street, minlength=city.n_streets)
    seq = np.zeros((city.n_streets, max(int(lengths.max()), 1), vecs.shape[1]), dtype=np.float32)
    pos = np.zeros(city.n_streets, dtype=np.int64)
    for i, s in enumerate(city.image_street):
        seq[s, pos[s]] = vecs[i]
        pos[s] += 1
    out = (torch.as_tensor(seq), torch.as_tensor(lengths))
    cache[key] = out
    return out


class _Net(nn.Module):
    def __init__(self, d_img: int, d_txt: int, n_classes: int, cfg: dict[str, Any]) -> None:
        super().__init__()
        d, hid = cfg["d"], cfg["hidden"]
        self.cfg = cfg
        self.lstm = nn.LSTM(d_img, hid, batch_first=True)
        self.missing = nn.Parameter(torch.zeros(hid))
        self.vis_proj = nn.Linear(hid, d) if hid != d else nn.Identity()
        self.text = nn.Sequential(nn.Linear(d_txt, 512), nn.ReLU(), nn.Linear(512, d))
        self.att_w = nn.Linear(d, d)
        self.att_q = nn.Parameter(torch.randn(d) / d**0.5)
        heads, dh = cfg["heads"], cfg["head_dim"]
        g = cfg["graph"]
        if g == "gat":
            self.l1: nn.Module = GATLayer(d, dh, heads, dropout=cfg["dropout"])
            self.l2: nn.Module = GATLayer(heads * dh, n_classes, 1, dropout=cfg["dropout"])
        elif g == "gcn":
            self.l1, self.l2 = GCNLayer(d, heads * dh), GCNLayer(heads * dh, n_classes)
        else:
            self.l1, self.l2 = nn.Linear(d, heads * dh), nn.Linear(heads * dh, n_classes)

    def visual(self, seq: Tensor, lengths: Tensor) -> Tensor:
        """Last LSTM state of each street's image sequence (``aggregate="lstm"``), or the
        mean / max / sum of its LSTM outputs; ``missing`` for streets without images.

        With ``lstm_buckets = B > 0`` the streets are sorted by length and cut into ``B``
        groups, each run padded to its own longest sequence; the state at step ``length - 1``
        is read from the outputs, which equals the packed sequence's final state (padding
        comes after it) and runs about twice as fast on a CPU as ``pack_padded_sequence``,
        whose backward fills large zero buffers. ``B = 0`` runs the packed sequence."""
        agg = self.cfg["aggregate"]
        n = seq.shape[0]
        has = lengths > 0
        out = self.missing.expand(n, -1).clone()
        buckets = self.cfg.get("lstm_buckets", 0)
        if agg == "lstm" and buckets > 0:
            idx = torch.nonzero(has).squeeze(1)
            lens = lengths[idx]
            order = torch.argsort(lens, descending=True, stable=True)
            for part in torch.tensor_split(order, min(buckets, max(len(order), 1))):
                if part.numel() == 0:
                    continue
                rows, ln = idx[part], lens[part]
                z, _ = self.lstm(seq[rows, : int(ln.max())])
                out[rows] = z[torch.arange(rows.numel(), device=seq.device), ln - 1]
        elif agg == "lstm":
            packed = nn.utils.rnn.pack_padded_sequence(
                seq[has], lengths[has].cpu(), batch_first=True, enforce_sorted=False
            )
            _, (h, _) = self.lstm(packed)
            out[has] = h[-1]
        else:
            z, _ = self.lstm(seq[has])
            valid = torch.arange(seq.shape[1], device=seq.device)[None, :] < lengths[has][:, None]
            z = z * valid.unsqueeze(-1)
            if agg == "max":
                z = z.masked_fill(~valid.unsqueeze(-1), -torch.inf).amax(1)
            else:
                z = z.sum(1) / (lengths[has][:, None] if agg == "mean" else 1)
            out[has] = z
        return self.vis_proj(out)

    def uses_images(self) -> bool:
        return self.cfg["modalities"] in ("both", "visual")

    def forward(
        self, seq: Tensor, lengths: Tensor, txt: Tensor, ei: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        vis = self.visual(seq, lengths) if self.uses_images() else None
        return self.head(vis, txt, ei)

    def head(self, vis: Tensor | None, txt: Tensor, ei: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Everything after the image LSTM: fusion, dropout, the two graph layers."""
        mods = [] if vis is None else [vis]
        if self.cfg["modalities"] in ("both", "text"):
            mods.append(self.text(txt))
        hm = torch.stack(mods, 1)  # (n, M, d)
        s = torch.tanh(self.att_w(hm)) @ self.att_q
        a = torch.softmax(s, 1)
        h = (a.unsqueeze(-1) * hm).sum(1)
        p = self.cfg["dropout"]
        h = nn.functional.dropout(h, p, self.training)
        graph = self.cfg["graph"] != "mlp"
        pre = self.l1(h, ei) if graph else self.l1(h)
        h1 = nn.functional.elu(pre)
        z = nn.functional.dropout(h1, p, self.training)
        logits = self.l2(z, ei) if graph else self.l2(z)
        # the contrast's h¹: the layer-1 output (before ELU) or the activation after it
        return logits, (pre if self.cfg["contrast_on"] == "layer" else h1), a


class MetaStreet:
    """Semi-supervised street classifier (MetaStreet, ICML 2026).

    Loss ``w·CE(train labels) + (1 - w)·InfoNCE`` on L2-normalised layer-1 embeddings; anchors
    are labelled training streets and their unlabelled 1-hop neighbours (pseudo-labelled by the
    majority of labelled neighbours), positive = mean embedding of the anchor's neighbours,
    negatives = up to ``n_negatives`` labelled training streets of a different label, cosine
    similarity over ``tau``. ``w="auto"`` picks ``w`` in {0.1, 0.5, 0.9} and the epoch by
    validation weighted F1; the test mask is never read by ``fit``.

    Args:
        n_classes: number of classes.
        n_categories: segmentation categories kept (most frequent).
        text_encoder: callable ``list[str] -> (n, D)``; default ``HashingEncoder`` when texts
            are given (pass ``MiniLMEncoder()`` for the paper's setting).
        w: CE weight in ``[0, 1]`` or ``"auto"`` (``w = 1`` disables the contrast).
        tau: InfoNCE temperature ``> 0``.
        modalities: ``"both"``, ``"visual"`` or ``"text"``.
        graph: ``"gat"``, ``"gcn"`` or ``"mlp"`` (no message passing).
        use_adjacency: ``False`` gives proportion-only image vectors.
        contrast_on: ``"layer"`` (default) contrasts the layer-1 GAT output ``h¹`` itself, before
            the ELU (the spec lists ELU as the step after layer 1; the authors' script contrasts
            ``conv1``'s output); ``"elu"`` contrasts ``ELU(h¹)`` (0.1.0's behaviour), whose
            coordinates are >= -1, so cosines between different-class streets cannot reach -1.
        device: torch device for training (``"cpu"``, ``"cuda"``); features and text are
            computed on the CPU, the negative draws on a CPU generator (same draws on any device).
        restarts: independent initialisations per candidate ``w`` (seeds ``seed + 1000 r``);
            the (w, restart, epoch) with the best validation weighted F1 is kept. ``w=1,
            restarts=3`` gives the no-contrast ablation the same validation-selection budget
            as ``w="auto"`` (three candidates), a control for the selection effect.
        progress: a bar per candidate ``w`` over the epochs; ``None`` (default): a bar on a
            terminal, a start and an end line per candidate when stderr is piped; ``False``:
            silent.
        adjacency: the street graph: ``"intersection"`` (default; streets sharing an
            intersection, undirected) or ``"knn"`` (each street's ``k_neighbors`` nearest
            streets by midpoint, directed: the authors' graph, k = 5). Both the GAT and the
            contrast's positives use it.
        k_neighbors: ``k`` of the k-NN graph.
        contrast_positive: ``"geographic"`` (default; the mean embedding of the anchor's
            neighbours) or ``"random"``: the mean of as many random streets as the anchor has
            neighbours, drawn once per fit (the control that removes geography from the
            contrast and keeps everything else).
        lstm_buckets: length groups of the image LSTM (see ``_Net.visual``); 0 runs a packed
            sequence. Results agree to float rounding.

    A fitted model is saved with :meth:`save` and read back with :meth:`load` (weights, the
    fitted city's inputs and the settings; the text encoder is not stored, as the encoded
    texts are).
    """

    def __init__(
        self,
        n_classes: int,
        n_categories: int = 48,
        text_encoder: TextEncoder | None = None,
        w: float | str = "auto",
        tau: float = 0.1,
        *,
        modalities: str = "both",
        graph: str = "gat",
        use_adjacency: bool = True,
        aggregate: str = "lstm",
        hidden: int = 256,
        d: int = 256,
        heads: int = 8,
        head_dim: int = 64,
        dropout: float = 0.6,
        epochs: int = 200,
        lr: float = 5e-3,
        weight_decay: float = 5e-4,
        n_negatives: int = 64,
        restarts: int = 1,
        contrast_on: str = "layer",
        device: str | torch.device = "cpu",
        progress: bool | None = None,
        adjacency: str = "intersection",
        k_neighbors: int = 5,
        contrast_positive: str = "geographic",
        lstm_buckets: int = 8,
    ) -> None:
        self.n_classes = check_positive_int(n_classes, "n_classes", minimum=2)
        self.n_categories = check_positive_int(n_categories, "n_categories")
        if isinstance(w, str):
            check_choice(w, "w", ["auto"])
        else:
            if not (isinstance(w, float | int) and 0.0 <= float(w) <= 1.0):
                raise ValueError(f"w must lie in [0, 1] or be 'auto', got {w!r}")
            w = float(w)
        self.w = w
        self.tau = check_positive(tau, "tau")
        self.text_encoder = text_encoder
        self.use_adjacency = bool(use_adjacency)
        self.cfg = {
            "modalities": check_choice(modalities, "modalities", ["both", "visual", "text"]),
            "graph": check_choice(graph, "graph", ["gat", "gcn", "mlp"]),
            "aggregate": check_choice(aggregate, "aggregate", ["lstm", "mean", "max", "sum"]),
            "hidden": check_positive_int(hidden, "hidden"),
            "d": check_positive_int(d, "d"),
            "heads": check_positive_int(heads, "heads"),
            "head_dim": check_positive_int(head_dim, "head_dim"),
            "dropout": dropout,
            "contrast_on": check_choice(contrast_on, "contrast_on", ["layer", "elu"]),
            "lstm_buckets": check_positive_int(lstm_buckets, "lstm_buckets", minimum=0),
        }
        self.adjacency = check_choice(adjacency, "adjacency", ["intersection", "knn"])
        self.k_neighbors = check_positive_int(k_neighbors, "k_neighbors")
        self.contrast_positive = check_choice(
            contrast_positive, "contrast_positive", ["geographic", "random"]
        )
        self.device = torch.device(device)
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must lie in [0, 1), got {dropout}")
        self.epochs = check_positive_int(epochs, "epochs")
        self.lr = check_positive(lr, "lr")
        self.weight_decay = check_positive(weight_decay, "weight_decay", strict=False)
        self.n_negatives = check_positive_int(n_negatives, "n_negatives")
        self.restarts = check_positive_int(restarts, "restarts")
        self.progress = progress

    # ------------------------------------------------------------------ inputs
    def graph_pairs(self, city: CityData) -> NDArray[np.int64]:
        """The street graph as ``(E, 2)`` pairs: ``city.edges`` (undirected) or, with
        ``adjacency="knn"``, directed pairs ``(i, j)``, ``j`` among ``i``'s nearest streets."""
        if self.adjacency == "intersection":
            return city.edges
        if city.coords is None:
            raise ValueError("adjacency='knn' needs city.coords (street midpoints)")
        return knn_edges(city.coords, self.k_neighbors)

    def _inputs(
        self, city: CityData, pairs: NDArray[np.int64]
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        seq, lengths = street_features(city, self.n_categories, use_adjacency=self.use_adjacency)
        if city.text_emb is not None:
            txt = encode_texts(lambda _: city.text_emb, [""] * city.n_streets)
        else:
            enc = self.text_encoder or HashingEncoder()
            cache = city.__dict__.setdefault("_text_cache", {})
            if id(enc) not in cache:
                cache[id(enc)] = (enc, encode_texts(enc, list(city.texts or [])))
            txt = cache[id(enc)][1]
        ei = with_self_loops(pairs, city.n_streets, directed=self.adjacency == "knn")
        dev = self.device
        txt_t = torch.as_tensor(txt, dtype=torch.float32)
        return seq.to(dev), lengths.to(dev), txt_t.to(dev), ei.to(dev)

    @staticmethod
    def training_labels(city: CityData) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(y_train, y_val)``: labels with every street outside the split set to -1.
        Reads only the train and validation masks."""
        tr, va = city.mask("train"), city.mask("val")
        return np.where(tr, city.labels, -1), np.where(va, city.labels, -1)

    # ------------------------------------------------------------------ fit
    def fit(self, city: CityData, seed: SeedLike = 0) -> MetaStreet:
        """Train on ``city`` (full batch, Adam); keep the (w, epoch) with best validation F1.

        ``seed``: an integer (the same run every time), a numpy integer, a
        ``numpy.random.Generator`` (one draw from it) or ``None`` (fresh entropy)."""
        seed = int_from_seed(seed, "seed", bits=52)
        if not isinstance(city, CityData):
            raise TypeError(f"city must be a metastreet CityData, got {type(city).__name__}")
        y_tr, y_va = self.training_labels(city)
        if np.unique(y_tr[y_tr >= 0]).size < 2:
            raise ValueError("training labels must contain at least two classes")
        if not np.any(y_va >= 0):
            raise ValueError("no validation labels: epochs are never selected on test")
        if y_tr.max() >= self.n_classes or y_va.max() >= self.n_classes:
            raise ValueError(f"labels must lie in [0, {self.n_classes})")
        pairs = self.graph_pairs(city)
        inputs = self._inputs(city, pairs)
        grid = W_GRID if self.w == "auto" else (self.w,)
        best: tuple[float, Any] = (-1.0, None)
        self.history_: dict[float, list[float]] = {}
        for w in grid:
            for r in range(self.restarts):
                score, state, hist = self._fit_one(
                    inputs, pairs, y_tr, y_va, float(w), seed + 1000 * r
                )
                if r == 0:
                    self.history_[float(w)] = hist
                if score > best[0]:
                    best = (score, (float(w), state))
        self.w_, state = best[1]
        self.val_f1_ = best[0]
        self.net_ = state
        self.city_inputs_ = inputs
        self.city_fingerprint_ = city_fingerprint(city)
        return self

    def _fit_one(
        self, inputs: tuple, pairs: NDArray, y_tr: NDArray, y_va: NDArray, w: float, seed: int
    ) -> tuple[float, _Net, list[float]]:
        """One training run. Each epoch runs the image LSTM once: its output (no dropout in the
        LSTM) first scores validation with the rest of the network in eval mode, then carries
        the training loss. Validation F1 at epoch ``e`` is therefore that of the weights after
        ``e`` steps; the weights after the last step are scored once at the end."""
        from icml26_shared.experiment import progress

        seq, lengths, txt, ei = inputs
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            net = _Net(seq.shape[-1], txt.shape[1], self.n_classes, self.cfg).to(self.device)
            opt = torch.optim.Adam(net.parameters(), lr=self.lr, weight_decay=self.weight_decay)
            gen = torch.Generator().manual_seed(seed)
            dev = self.device
            tr = torch.as_tensor(np.flatnonzero(y_tr >= 0), device=dev)
            ytr = torch.as_tensor(y_tr[y_tr >= 0], device=dev)
            va = np.flatnonzero(y_va >= 0)
            contrast = w < 1.0
            if contrast:
                anc, plab = pseudo_labels(
                    pairs, y_tr, self.n_classes, directed=self.adjacency == "knn"
                )
                anc_t = torch.as_tensor(anc, device=dev)
                plab_t = torch.as_tensor(plab, device=dev)
                pos_mat, deg = self._positive_matrix(ei, len(y_tr), seed)
                diff = plab_t[:, None] != ytr[None, :]  # (A, T)
                keep_anc = diff.any(1) & (deg[anc_t] > 0)
                anc_t, diff = anc_t[keep_anc], diff[keep_anc]
                m = min(self.n_negatives, tr.numel())
            best, best_state, hist = -1.0, None, []

            def score(logits: Tensor) -> None:
                nonlocal best, best_state
                pred = logits[va].argmax(1).cpu().numpy()
                f1 = weighted_f1(y_va[va], pred, self.n_classes)
                hist.append(f1)
                if f1 > best:
                    best, best_state = f1, copy.deepcopy(net.state_dict())

            show = self.progress  # None: a bar on a terminal, a line per stage when piped
            legacy = getattr(self, "_separate_validation_pass", False)  # benchmarks only
            gathered = getattr(self, "_gathered_negatives", False)  # benchmarks only
            for epoch in progress(range(self.epochs), enabled=show, desc=f"w={w}"):
                net.train()
                vis = net.visual(seq, lengths) if net.uses_images() else None
                if epoch > 0 and not legacy:  # the weights after `epoch` steps
                    net.eval()
                    with torch.no_grad():
                        score(net.head(None if vis is None else vis.detach(), txt, ei)[0])
                    net.train()
                logits, h1, _ = net.head(vis, txt, ei)
                loss = nn.functional.cross_entropy(logits[tr], ytr)
                if contrast and anc_t.numel():
                    keys = torch.rand(diff.shape, generator=gen).to(dev).masked_fill(~diff, -1.0)
                    val, idx = keys.topk(m, dim=1)
                    pos = torch.sparse.mm(pos_mat, h1)[anc_t]
                    if gathered:  # earlier loop: A x M gathered copies, each normalised
                        nce = info_nce(h1[anc_t], pos, h1[tr[idx]], val >= 0, self.tau)
                    else:
                        bank = h1[tr]
                        nce = info_nce(h1[anc_t], pos, bank, val >= 0, self.tau, neg_index=idx)
                    loss = w * loss + (1 - w) * nce
                opt.zero_grad()
                loss.backward()
                opt.step()
                if legacy and epoch < self.epochs - 1:  # the earlier separate validation pass
                    net.eval()
                    with torch.no_grad():
                        score(net(seq, lengths, txt, ei)[0])
            net.eval()
            with torch.no_grad():
                score(net(seq, lengths, txt, ei)[0])
            net.load_state_dict(best_state)
        net.eval()
        return best, net, hist

    def _positive_matrix(self, ei: Tensor, n: int, seed: int) -> tuple[Tensor, Tensor]:
        """Sparse ``(n, n)`` row-averaging matrix of each street's contrast positive and the
        in-degree (self-loops excluded). Geographic: the street's graph neighbours. Random: as
        many streets drawn uniformly from the others, once per fit (seeded)."""
        dev = self.device
        src, dst = ei
        nb = src != dst
        deg = torch.zeros(n, device=dev).index_add(
            0, dst[nb], torch.ones(int(nb.sum()), device=dev)
        )
        if self.contrast_positive == "geographic":
            rows, cols = dst[nb], src[nb]
        else:
            rng = np.random.default_rng(seed + 7919)
            d = deg.long().cpu().numpy()
            rows_np = np.repeat(np.arange(n), d)
            cols_np = np.concatenate(
                [(i + 1 + rng.choice(n - 1, k, replace=False)) % n for i, k in enumerate(d)]
                or [np.zeros(0, np.int64)]
            )
            rows = torch.as_tensor(rows_np, device=dev)
            cols = torch.as_tensor(cols_np.astype(np.int64), device=dev)
        vals = 1.0 / deg.clamp(min=1)[rows]
        mat = torch.sparse_coo_tensor(
            torch.stack([rows, cols]), vals, (n, n), check_invariants=True
        ).coalesce()
        return mat, deg

    # ------------------------------------------------------------------ persistence
    def _settings(self) -> dict[str, Any]:
        return {
            "n_classes": self.n_classes,
            "n_categories": self.n_categories,
            "w": self.w,
            "tau": self.tau,
            "use_adjacency": self.use_adjacency,
            **self.cfg,
            "epochs": self.epochs,
            "lr": self.lr,
            "weight_decay": self.weight_decay,
            "n_negatives": self.n_negatives,
            "restarts": self.restarts,
            "adjacency": self.adjacency,
            "k_neighbors": self.k_neighbors,
            "contrast_positive": self.contrast_positive,
        }

    def save(self, path: str | Path) -> None:
        """Write the fitted model to ``path``: weights, selected ``w`` and validation F1, the
        fitted city's inputs (features, encoded texts, graph) and the settings."""
        self._check_fitted()
        torch.save(
            {
                "format": _FORMAT,
                "settings": self._settings(),
                "w_": self.w_,
                "val_f1_": self.val_f1_,
                "history_": self.history_,
                "city_fingerprint_": self.city_fingerprint_,
                "state": {k: v.detach().cpu() for k, v in self.net_.state_dict().items()},
                "inputs": [t.detach().cpu() for t in self.city_inputs_],
            },
            path,
        )

    @classmethod
    def load(cls, path: str | Path, *, device: str | torch.device = "cpu") -> MetaStreet:
        """Read a model written by :meth:`save` (onto ``device``); a missing, unreadable or
        foreign file raises an error naming it and what is wrong."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(
                f"path must be a file written by MetaStreet.save, got {str(path)!r} (not found)"
            )
        try:
            blob = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as exc:
            raise ValueError(
                f"path {str(path)!r} is not a readable MetaStreet file (corrupt, truncated or "
                f"another format): {type(exc).__name__}: {exc}"
            ) from exc
        found = blob.get("format") if isinstance(blob, dict) else type(blob).__name__
        if found != _FORMAT:
            raise ValueError(
                f"path {str(path)!r} must be a file written by MetaStreet.save (format "
                f"{_FORMAT!r}), got {found!r}"
            )
        model = cls(**blob["settings"], device=device)
        seq, lengths, txt, ei = (t.to(model.device) for t in blob["inputs"])
        net = _Net(seq.shape[-1], txt.shape[1], model.n_classes, model.cfg)
        try:
            net.load_state_dict(blob["state"])
        except RuntimeError as exc:
            raise ValueError(
                f"path {str(path)!r}: weights do not match its settings ({exc})"
            ) from exc
        model.net_ = net.to(model.device).eval()
        model.city_inputs_ = (seq, lengths, txt, ei)
        model.w_, model.val_f1_, model.history_ = blob["w_"], blob["val_f1_"], blob["history_"]
        model.city_fingerprint_ = blob.get("city_fingerprint_")
        return model

    # ------------------------------------------------------------------ predict
    def _check_fitted(self) -> None:
        if not hasattr(self, "net_"):
            raise RuntimeError("call fit before predict")

    def predict_logits(self) -> NDArray[np.float64]:
        """Class logits of every street of the fitted city."""
        self._check_fitted()
        with torch.no_grad():
            out = self.net_(*self.city_inputs_)
        self.modality_weights_ = out[2].cpu().numpy()
        return out[0].double().cpu().numpy()

    def predict(self) -> NDArray[np.int64]:
        """Predicted class of every street of the fitted city."""
        return self.predict_logits().argmax(1)

    def evaluate(self, city: CityData, split: str = "test") -> dict[str, float]:
        """Accuracy, weighted/macro F1 and MRR on ``split`` of ``city``, which must be the
        fitted city (the model predicts the streets it was fitted on); another city raises."""
        check_choice(split, "split", ["train", "val", "test"])
        self._check_fitted()
        fitted = getattr(self, "city_fingerprint_", None)
        if fitted is not None and city_fingerprint(city) != fitted:
            raise ValueError(
                "city must be the city the model was fitted on (MetaStreet is transductive: it "
                f"predicts the fitted city's streets); got a different city ({city.n_streets} "
                f"streets, fingerprint {city_fingerprint(city)} != {fitted}). Fit on that city."
            )
        mask = city.mask(split)
        return classification_metrics(city.labels[mask], self.predict_logits()[mask])

    def state_vector(self) -> NDArray[np.float32]:
        """All trained weights concatenated (for leakage tests)."""
        self._check_fitted()
        state = self.net_.state_dict().values()
        return torch.cat([p.detach().ravel() for p in state]).cpu().numpy()
