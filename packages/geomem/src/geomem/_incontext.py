"""The in-context contrast (Bachmann & Nagarajan, "The pitfalls of next-token prediction", 2024).

Each example is a fresh path-star whose node labels are drawn per example from a pool of
``n_labels`` node tokens; the prompt lists its directed (parent, child) edges in shuffled order,
then asks for a leaf::

    [EDGE] u1 v1 , u2 v2 , ... , um vm [PATH] t <pause> = root , n1 , ... , t <eos>

With ``commas=False`` the path is written without commas (``= root n1 n2 ... t <eos>``), so
each later node is the prompt's child of the token just before it: a plain induction step,
which the GPT with rotary positions learns (the positive control of the shortcut).

The loss falls on the tokens after ``=``. Trained with teacher forcing, models learn the
"Clever Hans" shortcut (given the previous node, copy its child from the prompt), which solves
every later path token but leaves the first hop ``n1`` at chance ``1/d``; the same model trained
in-weights on one graph finds ``n1`` for unseen leaves (Noroozizadeh et al., arXiv:2510.26745).
"""

from __future__ import annotations

import numpy as np
import torch
from numpy.typing import NDArray

from icml26_shared.checks import SeedLike, check_positive_int, rng_from_seed

from ._graphs import path_star
from ._tasks import SPECIALS, Example

__all__ = ["InContextBatch", "make_dataset", "sequence_length"]


def sequence_length(d: int, l: int, commas: bool = True) -> int:
    """Tokens in one in-context example of a path-star(d, l) (``commas``: inside the path)."""
    d = check_positive_int(d, "d")
    l = check_positive_int(l, "l", minimum=2)
    m = d * (l - 1)
    return 1 + 3 * m - 1 + 4 + ((2 * l - 1) if commas else l) + 1


class InContextBatch:
    """Token ids ``(N, T)``, target masks, and the position of ``=`` (all examples align)."""

    def __init__(
        self, ids: torch.Tensor, target: torch.Tensor, eq: int, d: int, commas: bool = True
    ) -> None:
        self.ids, self.target, self.eq, self.d, self.commas = ids, target, eq, d, commas

    def __len__(self) -> int:
        return int(self.ids.shape[0])


def _one(d: int, l: int, n_labels: int, rng: np.random.Generator, commas: bool) -> Example:
    g = path_star(d, l, seed=int(rng.integers(2**31)))
    labels = rng.choice(n_labels, size=g.n_nodes, replace=False)
    sp = {s: n_labels + i for i, s in enumerate(SPECIALS)}
    pairs = [
        (g.root if j == 0 else int(arm[j - 1]), int(arm[j]))
        for arm in g.arms
        for j in range(len(arm))
    ]
    order = rng.permutation(len(pairs))
    ids: list[int] = [sp["[EDGE]"]]
    for i, p in enumerate(order):
        u, v = pairs[p]
        ids += ([sp[","]] if i else []) + [int(labels[u]), int(labels[v])]
    leaf = int(g.leaves[rng.integers(len(g.leaves))])
    path = [int(labels[x]) for x in g.path_to(leaf)]
    ids += [sp["[PATH]"], int(labels[leaf]), sp["<pause>"], sp["="]]
    eq = len(ids) - 1
    for i, x in enumerate(path):
        ids += [sp[","], x] if i and commas else [x]
    ids.append(sp["<eos>"])
    target = tuple(eq <= i < len(ids) - 1 for i in range(len(ids)))
    return Example(tuple(ids), target, "incontext")


def make_dataset(
    n: int, d: int = 5, l: int = 5, n_labels: int = 50, seed: SeedLike = 0, *, commas: bool = True
) -> InContextBatch:
    """``n`` in-context path-star examples (fresh graph and labels each); ``commas=False``
    writes the path without commas (the positive control).

    >>> b = make_dataset(4, d=3, l=3, n_labels=20, seed=0)
    >>> b.ids.shape, b.eq
    (torch.Size([4, 28]), 21)
    >>> make_dataset(4, d=3, l=3, n_labels=20, seed=0, commas=False).ids.shape
    torch.Size([4, 26])
    """
    n = check_positive_int(n, "n")
    d = check_positive_int(d, "d", minimum=2)
    l = check_positive_int(l, "l", minimum=2)
    n_labels = check_positive_int(n_labels, "n_labels", minimum=2)
    if n_labels < d * (l - 1) + 1:
        raise ValueError(f"n_labels must be >= the graph's {d * (l - 1) + 1} nodes, got {n_labels}")
    rng = rng_from_seed(seed)
    ex = [_one(d, l, n_labels, rng, bool(commas)) for _ in range(n)]
    ids = torch.tensor([e.ids for e in ex])
    tgt = torch.tensor([e.target for e in ex])
    eq = ex[0].target.index(True)
    return InContextBatch(ids, tgt, eq, d, bool(commas))


def node_positions(l: int, commas: bool = True) -> NDArray[np.int64]:
    """Offsets after ``=`` of the path's nodes ``root, n1, ..., t``."""
    l = check_positive_int(l, "l", minimum=2)
    return np.arange(0, 2 * l - 1, 2) if commas else np.arange(l)
