"""The memorisation tasks as token sequences and as text.

Vocabulary: one token per node (ids ``0 .. n-1``) followed by ``[EDGE]``, ``[PATH]``, ``=``,
``,``, ``<pause>``, ``<eos>`` and ``<pad>``. Edge memorisation is ``[EDGE] u = v <eos>`` per
directed edge; a path query is ``[PATH] t <pause> = root , n1 , ... , t <eos>`` for a leaf ``t``.
The loss falls on the tokens after ``=`` only (for ``hardest_token`` recipes, on ``n1`` only).
Following Noroozizadeh et al., arXiv:2510.26745.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from icml26_shared.checks import check_choice

from ._graphs import Graph

__all__ = [
    "SPECIALS",
    "Example",
    "Vocab",
    "edge_examples",
    "from_text",
    "path_examples",
    "to_text",
]

SPECIALS = ("[EDGE]", "[PATH]", "=", ",", "<pause>", "<eos>", "<pad>")
DIRECTIONS = ("forward", "backward", "both")


@dataclass(frozen=True)
class Vocab:
    """Node tokens ``0 .. n_nodes-1`` then :data:`SPECIALS`."""

    n_nodes: int

    def __len__(self) -> int:
        return self.n_nodes + len(SPECIALS)

    def id(self, special: str) -> int:
        return self.n_nodes + SPECIALS.index(special)

    @property
    def pad(self) -> int:
        return self.id("<pad>")

    def token(self, i: int) -> str:
        return str(i) if i < self.n_nodes else SPECIALS[i - self.n_nodes]


@dataclass(frozen=True)
class Example:
    """One training or query sequence: token ids and the mask of positions whose *next* token is
    a target, i.e. ``target[i]`` says ``ids[i + 1]`` is predicted from ``ids[: i + 1]``."""

    ids: tuple[int, ...]
    target: tuple[bool, ...]
    kind: str  # "edge" or "path"


def edge_examples(graph: Graph, direction: str = "both", self_edges: bool = False) -> list[Example]:
    """``[EDGE] u = v <eos>`` for every directed edge.

    ``direction``: ``"forward"`` (away from the root, or ``u < v`` without a root),
    ``"backward"`` or ``"both"``; ``self_edges`` adds ``[EDGE] u = u <eos>`` for every node.

    >>> from geomem.graphs import path_star
    >>> len(edge_examples(path_star(3, 3), "both"))
    12
    """
    check_choice(direction, "direction", DIRECTIONS)
    v = Vocab(graph.n_nodes)
    depth = _depths(graph)
    pairs: list[tuple[int, int]] = []
    for a, b in graph.edges():
        fwd = (a, b) if depth[a] < depth[b] or (depth[a] == depth[b] and a < b) else (b, a)
        if direction in ("forward", "both"):
            pairs.append(fwd)
        if direction in ("backward", "both"):
            pairs.append(fwd[::-1])
    if self_edges:
        pairs += [(u, u) for u in range(graph.n_nodes)]
    out = []
    for a, b in pairs:
        ids = (v.id("[EDGE]"), int(a), v.id("="), int(b), v.id("<eos>"))
        out.append(Example(ids, (False, False, True, True, False), "edge"))
    return out


def path_examples(
    graph: Graph, leaves: NDArray[np.int64] | list[int] | None = None, hardest_token: bool = False
) -> list[Example]:
    """``[PATH] t <pause> = root , n1 , ... , t <eos>`` for each leaf (default: train leaves).

    With ``hardest_token`` only ``n1`` is a target.
    """
    v = Vocab(graph.n_nodes)
    chosen = graph.train_leaves if leaves is None else np.asarray(leaves, np.int64)
    out = []
    for t in chosen:
        path = graph.path_to(int(t))
        body: list[int] = []
        for i, node in enumerate(path):
            body += [node] if i == 0 else [v.id(","), node]
        ids = (v.id("[PATH]"), int(t), v.id("<pause>"), v.id("="), *body, v.id("<eos>"))
        if hardest_token:
            target = [False] * len(ids)
            target[ids.index(path[1]) - 1] = True  # predict n1 from "... root ,"
        else:
            target = [i >= 3 and i < len(ids) - 1 for i in range(len(ids))]
        out.append(Example(tuple(ids), tuple(target), "path"))
    return out


def _depths(graph: Graph) -> NDArray[np.int64]:
    depth = np.zeros(graph.n_nodes, np.int64)
    if graph.root >= 0:
        for arm in graph.arms:
            depth[arm] = np.arange(1, len(arm) + 1)
    return depth


def to_text(example: Example, n_nodes: int) -> str:
    """Space-separated tokens, e.g. ``"[EDGE] 3 = 7 <eos>"``."""
    v = Vocab(n_nodes)
    return " ".join(v.token(i) for i in example.ids)


def from_text(text: str, n_nodes: int) -> Example:
    """Inverse of :func:`to_text` (targets rebuilt from the task's rule).

    >>> from geomem.graphs import path_star
    >>> g = path_star(3, 3)
    >>> ex = path_examples(g)[0]
    >>> from_text(to_text(ex, g.n_nodes), g.n_nodes) == ex
    True
    """
    v = Vocab(n_nodes)
    ids = []
    for tok in text.split():
        if tok in SPECIALS:
            ids.append(v.id(tok))
        else:
            try:
                i = int(tok)
            except ValueError:
                raise ValueError(f"text must hold node ids or {SPECIALS}, got {tok!r}") from None
            if not 0 <= i < n_nodes:
                raise ValueError(f"node ids in text must be in [0, {n_nodes}), got {i}")
            ids.append(i)
    if not ids or ids[0] not in (v.id("[EDGE]"), v.id("[PATH]")):
        raise ValueError(f"text must start with [EDGE] or [PATH], got {text[:20]!r}")
    kind = "edge" if ids[0] == v.id("[EDGE]") else "path"
    eq = ids.index(v.id("="))
    target = tuple(eq <= i < len(ids) - 1 for i in range(len(ids)))
    return Example(tuple(ids), target, kind)
