"""Benchmark: our window-1 Node2Vec (the paper's model) beside random-walk skip-gram peers.

Run: ``.venv/bin/python packages/geomem/benchmarks/run.py [--quick] [--out reports/bench/geomem.json]``

Every method embeds the same graphs (path-star d=20 l=5; full adds d=50 and cycle N=16) and the
same probes score the embeddings: navigation, spectral share and alignment (k = d, or 2 on the
cycle), geometric score, and edge recovery (from the model's own scores for ours, from cosine
similarity for the skip-gram peers, which have no pair scorer of window 1). Peers: ``node2vec`` 0.5.0
(random walks + gensim skip-gram) and ``gensim`` skip-gram on uniform random walks (what
DeepWalk/karateclub do) and ``pecanpy`` (node2vec, p = q = 1) when it imports. A peer that
cannot import is reported as skipped with the reason (pecanpy 2.0.9 needs ``nptyping``, which
fails under numpy 2 with ``AttributeError``; karateclub 1.3.3 pins networkx 2.6 and pandas 1.3).
"""

from __future__ import annotations

import argparse
import importlib
import os
from pathlib import Path

import numpy as np

from geomem import train
from geomem.graphs import Graph, cycle, path_star
from geomem.models import AssociativeControl, Node2Vec
from geomem.probes import (
    edge_recovery,
    geometric_score,
    navigation,
    spectral_alignment,
    spectral_share,
)
from icml26_shared.bench import BenchReport, time_call


def probes(emb: np.ndarray, g: Graph, k: int, scores: np.ndarray | None = None) -> dict:
    u = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    out = {
        "edge_recovery": edge_recovery(u @ u.T if scores is None else scores, g),
        "spectral_share": spectral_share(emb, g, k),
        "spectral_alignment": spectral_alignment(emb, g, k),
        "geometric_score": geometric_score(emb, g),
    }
    if g.root >= 0:
        out["navigation"] = navigation(emb, g)
    return {key: round(v, 4) for key, v in out.items()}


def timed(fn, repeats: int):
    """``time_call`` keeping the last result."""
    box = []
    timing = time_call(lambda: box.append(fn()), repeats=repeats, warmup=0)
    return timing, box[-1]


def ours(g: Graph, steps: int) -> Node2Vec:
    m = Node2Vec(g.n_nodes, dim=100, seed=0)
    train(m, g, steps=steps, log_every=steps)
    return m


def assoc(g: Graph, steps: int) -> AssociativeControl:
    m = AssociativeControl(g.n_nodes, dim=100, seed=0)
    train(m, g, steps=steps, log_every=steps)
    return m


def peer_node2vec(g: Graph, quick: bool) -> np.ndarray:
    import networkx as nx
    from node2vec import Node2Vec as N2V

    nxg = nx.relabel_nodes(nx.from_numpy_array(g.adj), {i: str(i) for i in range(g.n_nodes)})
    walks = 5 if quick else 10
    n2v = N2V(nxg, dimensions=100, walk_length=20, num_walks=walks, workers=1, quiet=True, seed=0)
    model = n2v.fit(window=5, min_count=1, seed=0, workers=1)
    return np.stack([model.wv[str(i)] for i in range(g.n_nodes)]).astype(np.float64)


def peer_deepwalk(g: Graph, quick: bool) -> np.ndarray:
    from gensim.models import Word2Vec

    rng = np.random.default_rng(0)
    nbrs = [g.neighbours(u) for u in range(g.n_nodes)]
    walks = []
    for _ in range(5 if quick else 10):
        for start in range(g.n_nodes):
            w = [start]
            for _ in range(19):
                w.append(int(rng.choice(nbrs[w[-1]])))
            walks.append([str(x) for x in w])
    model = Word2Vec(walks, vector_size=100, window=5, min_count=1, sg=1, workers=1, seed=0)
    return np.stack([model.wv[str(i)] for i in range(g.n_nodes)]).astype(np.float64)


def load_peer(module: str) -> tuple[object | None, str | None]:
    """Import a peer, or return why it cannot run. Any exception counts: pecanpy 2.0.9 fails
    with ``AttributeError`` (``np.bool8``, via ``nptyping``) under numpy 2, not ImportError."""
    try:
        return importlib.import_module(module), None
    except Exception as exc:  # the reason is reported, never swallowed
        return None, f"{module} unavailable: {type(exc).__name__}: {exc}"[:160]


def peer_pecanpy(g: Graph, quick: bool) -> np.ndarray:
    """pecanpy's node2vec (p = q = 1, same walks and window as the other peers)."""
    mod, why = load_peer("pecanpy.pecanpy")
    if mod is None:
        raise ImportError(why)
    ids = [str(i) for i in range(g.n_nodes)]
    walker = mod.DenseOTF.from_mat(g.adj.astype(np.float32), ids, p=1, q=1, workers=1)
    emb = walker.embed(dim=100, num_walks=5 if quick else 10, walk_length=20, window_size=5)
    order = {str(n): i for i, n in enumerate(walker.nodes)}
    return np.asarray(emb, np.float64)[[order[i] for i in ids]]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="reports/bench/geomem.json")
    args = ap.parse_args()
    os.environ.setdefault("PYTHONHASHSEED", "0")
    report = BenchReport("geomem", quick=args.quick)
    cases = [("path_star d=20 l=5", path_star(20, 5, 0), 20)]
    if not args.quick:
        cases += [("path_star d=50 l=5", path_star(50, 5, 0), 50), ("cycle N=16", cycle(16), 2)]
    steps = 10_000 if args.quick else 30_000
    repeats = 1 if args.quick else 3
    for name, g, k in cases:
        ours_name = f"geomem Node2Vec ({steps} GD steps)"
        t, m = timed(lambda g=g: ours(g, steps), repeats)
        report.add(name, ours_name, t, **probes(m.embeddings(), g, k, m.scores()))
        t, a = timed(lambda g=g: assoc(g, steps), 1)
        report.add(
            name, "geomem associative control", t, **probes(a.embeddings(), g, k, a.scores())
        )
        for peer, fn in (
            ("node2vec 0.5.0", peer_node2vec),
            ("gensim skip-gram walks", peer_deepwalk),
            ("pecanpy", peer_pecanpy),
        ):
            try:
                t, e = timed(lambda fn=fn, g=g: fn(g, args.quick), repeats)
            except ImportError as exc:
                report.add(name, peer, None, skipped=f"not installed: {exc}"[:160])
                continue
            report.add(name, peer, t, **probes(e, g, k))
            report.ratio(name, ours_name, peer)
        _, why = load_peer("karateclub")  # not installed: 1.3.3 pins networkx 2.6, pandas 1.3
        if why:
            report.add(name, "karateclub", None, skipped=why)
    print(report.to_text())
    path = report.write(Path(args.out))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
