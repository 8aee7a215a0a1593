"""Sequence spaces held as layered state graphs: a trie (:class:`SequenceSpace`) or a graph of
keys (:class:`FactoredSpace`).

A state is prompt ⊕ prefix. States are numbered depth by depth (depth = prefix length), so every
map of the package runs as one vectorised step per depth over the ``children`` table:

* ``children[s, a] >= 0``: the state reached by emitting ``a`` at ``s``;
* ``children[s, a] == TERMINAL`` (−1): emitting ``a`` ends the sequence (EOS, or length T);
* ``children[s, a] == MASKED`` (−2): ``a`` is not allowed at ``s`` (q = r = −inf there).

Without EOS every sequence has ``max_len`` tokens. With EOS a sequence ends with EOS and has at
most ``max_len`` tokens: a prefix of ``max_len − 1`` tokens may only emit EOS.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from icml26_shared.checks import check_positive_int

__all__ = ["MASKED", "TERMINAL", "FactoredSpace", "SequenceSpace"]

TERMINAL = -1
MASKED = -2
DEFAULT_MAX_STATES = 10**7

MaskFn = Callable[[NDArray[np.int64], NDArray[np.int64]], ArrayLike]


def _check_common(vocab_size: Any, max_len: Any, eos: Any, n_prompts: Any) -> tuple:
    A = check_positive_int(vocab_size, "vocab_size")
    T = check_positive_int(max_len, "max_len")
    P = check_positive_int(n_prompts, "n_prompts")
    if eos is not None:
        if isinstance(eos, bool) or not isinstance(eos, int | np.integer):
            raise TypeError(f"eos must be None or an integer token id, got {eos!r}")
        if not 0 <= int(eos) < A:
            raise ValueError(f"eos must be a token id in [0, {A}) (the vocabulary), got {eos}")
        eos = int(eos)
    return A, T, eos, P


def _structural(A: int, T: int, eos: int | None, d: int, n: int) -> tuple[NDArray, NDArray]:
    """Allowed and terminal action tables of ``n`` states at depth ``d`` before any mask."""
    allowed = np.ones((n, A), dtype=bool)
    terminal = np.zeros((n, A), dtype=bool)
    if eos is not None:
        terminal[:, eos] = True
        if d == T - 1:
            allowed[:] = False
            allowed[:, eos] = True
    if d == T - 1:
        terminal[:] = True
    return allowed, terminal


class _Layered:
    """Common part of the two spaces: the layered ``children`` table and path walking."""

    vocab_size: int
    max_len: int
    eos: int | None
    n_prompts: int
    children: NDArray[np.int64]
    offsets: NDArray[np.int64]
    depth: NDArray[np.int64]
    prompt: NDArray[np.int64]

    @property
    def n_states(self) -> int:
        """Number of non-terminal states (rows of every q or r table)."""
        return int(self.children.shape[0])

    @property
    def shape(self) -> tuple[int, int]:
        """Shape ``(n_states, vocab_size)`` of the logit and step-reward tables."""
        return (self.n_states, self.vocab_size)

    @property
    def allowed(self) -> NDArray[np.bool_]:
        return self.children != MASKED

    @property
    def roots(self) -> NDArray[np.int64]:
        """The root state of each prompt (depth 0)."""
        return np.arange(self.n_prompts, dtype=np.int64)

    def depth_slices(self) -> list[slice]:
        """``[slice of depth-0 states, slice of depth-1 states, ...]``."""
        return [slice(int(self.offsets[d]), int(self.offsets[d + 1])) for d in range(self.max_len)]

    # -- sequences given by the user -------------------------------------------------------
    def _token_array(
        self, sequences: Any, name: str = "sequences"
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Padded ``(n, max_len)`` token array (−1 pads) and lengths, structurally checked."""
        if isinstance(sequences, np.ndarray) and sequences.ndim == 2:
            if sequences.dtype.kind not in "iu":
                raise TypeError(f"{name} must hold integer token ids, got dtype {sequences.dtype}")
            rows = [tuple(int(t) for t in row if t >= 0) for row in sequences]
        else:
            try:
                rows = [tuple(seq) for seq in sequences]
            except TypeError:
                raise TypeError(
                    f"{name} must be a list of token sequences, got {type(sequences).__name__}"
                ) from None
        n = len(rows)
        if n == 0:
            raise ValueError(f"{name} must not be empty, got 0 sequences")
        A, T, eos = self.vocab_size, self.max_len, self.eos
        tokens = np.full((n, T), -1, dtype=np.int64)
        lengths = np.zeros(n, dtype=np.int64)
        for i, row in enumerate(rows):
            for t in row:
                if isinstance(t, bool) or not isinstance(t, int | np.integer):
                    raise TypeError(f"{name}[{i}] must hold integer token ids, got {t!r}")
            if len(row) == 0 or len(row) > T:
                raise ValueError(
                    f"{name}[{i}] must have 1 to max_len={T} tokens, got {len(row)}: {row}"
                )
            arr = np.asarray(row, dtype=np.int64)
            if arr.min() < 0 or arr.max() >= A:
                raise ValueError(
                    f"{name}[{i}] must hold token ids in [0, {A}) (the vocabulary), got {row}"
                )
            if eos is None:
                if len(row) != T:
                    raise ValueError(
                        f"{name}[{i}] must have exactly max_len={T} tokens (no EOS), got {row}"
                    )
            else:
                if (arr[:-1] == eos).any():
                    raise ValueError(f"{name}[{i}] has tokens after EOS={eos}: {row}")
                if arr[-1] != eos:
                    raise ValueError(
                        f"{name}[{i}] is incomplete: a sequence must end with EOS={eos}, got {row}"
                    )
            tokens[i, : len(row)] = arr
            lengths[i] = len(row)
        return tokens, lengths

    def _prompt_array(self, prompts: Any, n: int) -> NDArray[np.int64]:
        if prompts is None:
            return np.zeros(n, dtype=np.int64)
        p = np.asarray(prompts)
        if p.ndim == 0:
            p = np.full(n, p)
        if p.dtype.kind not in "iu" or p.shape != (n,):
            raise ValueError(
                f"prompts must be None, an int or {n} integer prompt ids, got {np.asarray(prompts)!r}"
            )
        if p.min() < 0 or p.max() >= self.n_prompts:
            raise ValueError(f"prompts must lie in [0, {self.n_prompts}), got {p.min()}..{p.max()}")
        return p.astype(np.int64)

    def walk(
        self, sequences: Any, prompts: Any = None, *, name: str = "sequences"
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
        """Follow token sequences through the graph (``name``: the argument named in errors).

        Returns:
            ``states`` ``(n, max_len)``: the state at each step (−1 past the end or after a
            masked action), ``actions`` ``(n, max_len)`` (−1 pads) and ``supported`` ``(n,)``:
            False where a sequence takes a masked action (probability exactly 0).
        """
        tokens, lengths = self._token_array(sequences, name)
        n = tokens.shape[0]
        p = self._prompt_array(prompts, n)
        states = np.full(tokens.shape, -1, dtype=np.int64)
        supported = np.ones(n, dtype=bool)
        cur = p.copy()
        for t in range(self.max_len):
            active = supported & (t < lengths)
            if not active.any():
                break
            idx = np.nonzero(active)[0]
            states[idx, t] = cur[idx]
            nxt = self.children[cur[idx], tokens[idx, t]]
            supported[idx[nxt == MASKED]] = False
            cur[idx] = np.where(nxt >= 0, nxt, 0)
        return states, tokens, supported


class SequenceSpace(_Layered):
    """All sequences over a vocabulary of ``vocab_size`` tokens, held in a trie.

    Args:
        vocab_size: A, the number of tokens (EOS included when there is one).
        max_len: T, the maximal number of tokens of a sequence (EOS included).
        eos: the EOS token id, or None (then every sequence has exactly T tokens).
        mask: None, or a vectorised callable ``mask(prompts, prefixes) -> bool (n, A)`` called
            once per depth d with the prompt ids ``(n,)`` and prefixes ``(n, d)`` of that depth's
            states; False forbids an action (q = r = −inf there; the trie omits its subtree).
        n_prompts: number of prompts (roots of the trie).
        max_states: enumeration limit on the number of trie nodes (leaves included).

    ``sequences()`` lists the complete sequences ordered by prompt, then length, then
    lexicographically; arrays over sequences (rewards R) follow that order.

    >>> space = SequenceSpace(3, 2)
    >>> space.n_states, space.n_sequences, space.sequences()[:2]
    (4, 9, [(0, 0), (0, 1)])
    """

    def __init__(
        self,
        vocab_size: int,
        max_len: int,
        eos: int | None = None,
        mask: MaskFn | None = None,
        n_prompts: int = 1,
        *,
        max_states: int = DEFAULT_MAX_STATES,
    ) -> None:
        A, T, eos, P = _check_common(vocab_size, max_len, eos, n_prompts)
        max_states = check_positive_int(max_states, "max_states")
        if mask is not None and not callable(mask):
            raise TypeError(f"mask must be None or a callable, got {type(mask).__name__}")
        self.vocab_size, self.max_len, self.eos, self.n_prompts = A, T, eos, P
        self.max_states = max_states
        self._mask = mask
        bound = P * _count_nodes(A, T, eos)
        if mask is None and bound > max_states:
            raise ValueError(_too_big(bound, max_states))
        self._build(mask, max_states)
        self._cache: dict[str, Any] = {}

    def _build(self, mask: MaskFn | None, max_states: int) -> None:
        A, T, eos, P = self.vocab_size, self.max_len, self.eos, self.n_prompts
        n = P
        prompts = np.arange(P, dtype=np.int64)
        prefix = np.zeros((P, 0), dtype=np.int64)
        offsets = [0]
        ch_blocks, parent_blocks, paction_blocks, prompt_blocks = [], [], [], []
        parent = np.full(P, -1, dtype=np.int64)
        paction = np.full(P, -1, dtype=np.int64)
        leaf_state, leaf_action = [], []
        nodes = P
        for d in range(T):
            allowed, terminal = _structural(A, T, eos, d, n)
            if mask is not None:
                allowed &= _call_mask(mask, prompts, prefix, A)
                dead = ~allowed.any(axis=1)
                if dead.any():
                    i = int(np.argmax(dead))
                    raise ValueError(
                        "mask must leave an allowed action at every reachable state, got every "
                        f"action masked at prompt {int(prompts[i])}, prefix {tuple(prefix[i].tolist())}"
                    )
            cont = allowed & ~terminal
            pi, ai = np.nonzero(cont)
            li, la = np.nonzero(allowed & terminal)
            nodes += pi.size + li.size
            if nodes > max_states:
                raise ValueError(_too_big(nodes, max_states, at_least=True))
            base = offsets[-1]
            ch = np.full((n, A), MASKED, dtype=np.int64)
            ch[allowed & terminal] = TERMINAL
            ch[pi, ai] = base + n + np.arange(pi.size)
            ch_blocks.append(ch)
            parent_blocks.append(parent)
            paction_blocks.append(paction)
            prompt_blocks.append(prompts)
            leaf_state.append(base + li)
            leaf_action.append(la)
            offsets.append(base + n)
            parent, paction, prompts = base + pi, ai.astype(np.int64), prompts[pi]
            if mask is not None:
                prefix = np.concatenate([prefix[pi], ai[:, None]], axis=1)
            n = pi.size
        self.children = np.concatenate(ch_blocks)
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.parent = np.concatenate(parent_blocks)
        self.parent_action = np.concatenate(paction_blocks)
        self.prompt = np.concatenate(prompt_blocks)
        self.depth = np.repeat(np.arange(T), np.diff(self.offsets))
        ls, la = np.concatenate(leaf_state), np.concatenate(leaf_action)
        order = np.argsort(self.prompt[ls], kind="stable")
        self.leaf_state, self.leaf_action = ls[order], la[order]
        self.leaf = np.full(self.children.shape, -1, dtype=np.int64)
        self.leaf[self.leaf_state, self.leaf_action] = np.arange(order.size)

    @property
    def n_sequences(self) -> int:
        return int(self.leaf_state.size)

    @property
    def sequence_prompt(self) -> NDArray[np.int64]:
        """Prompt id of each complete sequence."""
        return self.prompt[self.leaf_state]

    @property
    def sequence_length(self) -> NDArray[np.int64]:
        return self.depth[self.leaf_state] + 1

    def prefixes(self, d: int) -> NDArray[np.int64]:
        """Prefixes ``(n_d, d)`` of the depth-``d`` states, in state order."""
        sl = self.depth_slices()[d]
        return self._prefix_of(np.arange(sl.start, sl.stop), d)

    def _prefix_of(self, states: NDArray[np.int64], d: int) -> NDArray[np.int64]:
        out = np.empty((states.size, d), dtype=np.int64)
        cur = states
        for j in range(d - 1, -1, -1):
            out[:, j] = self.parent_action[cur]
            cur = self.parent[cur]
        return out

    def prefix(self, state: int) -> tuple[int, ...]:
        """The prefix (token tuple, prompt excluded) of one state."""
        s = int(state)
        return tuple(self._prefix_of(np.array([s]), int(self.depth[s]))[0].tolist())

    def sequence_array(self) -> NDArray[np.int64]:
        """Complete sequences as a ``(n_sequences, max_len)`` array padded with −1."""
        if "tokens" not in self._cache:
            out = np.full((self.n_sequences, self.max_len), -1, dtype=np.int64)
            dl = self.depth[self.leaf_state]
            for d in range(self.max_len):
                idx = np.nonzero(dl == d)[0]
                if idx.size:
                    out[idx, :d] = self._prefix_of(self.leaf_state[idx], d)
                    out[idx, d] = self.leaf_action[idx]
            self._cache["tokens"] = out
        return self._cache["tokens"]

    def sequences(self) -> list[tuple[int, ...]]:
        """Complete sequences (token tuples, EOS included where emitted) in the fixed order."""
        if "tuples" not in self._cache:
            arr, lengths = self.sequence_array(), self.sequence_length
            self._cache["tuples"] = [
                tuple(row[:n].tolist()) for row, n in zip(arr, lengths, strict=True)
            ]
        return self._cache["tuples"]

    def paths(self) -> NDArray[np.int64]:
        """States ``(n_sequences, max_len)`` visited by each complete sequence (−1 pads)."""
        if "paths" not in self._cache:
            out = np.full((self.n_sequences, self.max_len), -1, dtype=np.int64)
            dl = self.depth[self.leaf_state]
            cur = self.leaf_state.copy()
            for d in range(self.max_len - 1, -1, -1):
                idx = np.nonzero(dl >= d)[0]
                out[idx, d] = cur[idx]
                cur[idx] = self.parent[cur[idx]]
            self._cache["paths"] = out
        return self._cache["paths"]

    def sequence_index(self, sequences: Any, prompts: Any = None) -> NDArray[np.int64]:
        """Index in ``sequences()`` of each given sequence (−1 where it takes a masked action)."""
        states, tokens, supported = self.walk(sequences, prompts)
        lengths = (tokens >= 0).sum(axis=1)
        rows = np.arange(tokens.shape[0])
        last_s = states[rows, lengths - 1]
        last_a = tokens[rows, lengths - 1]
        idx = np.where(supported, self.leaf[np.maximum(last_s, 0), last_a], -1)
        return idx

    def __repr__(self) -> str:
        return (
            f"SequenceSpace(vocab_size={self.vocab_size}, max_len={self.max_len}, eos={self.eos}, "
            f"n_prompts={self.n_prompts}; {self.n_states} states, {self.n_sequences} sequences)"
        )


def _call_mask(mask: MaskFn, prompts: NDArray, prefix: NDArray, A: int) -> NDArray[np.bool_]:
    out = np.asarray(mask(prompts, prefix))
    if out.shape != (prompts.size, A) or out.dtype != np.bool_:
        raise ValueError(
            f"mask must return a boolean array of shape ({prompts.size}, {A}) for prefixes of "
            f"length {prefix.shape[1]}, got dtype {out.dtype} and shape {out.shape}"
        )
    return out


def _count_nodes(A: int, T: int, eos: int | None) -> int:
    """Trie nodes (leaves included) of one prompt without a mask (Python ints, no overflow)."""
    if eos is None:
        return sum(A**d for d in range(T + 1))
    return 2 * sum((A - 1) ** d for d in range(T))


def _too_big(n: int, limit: int, at_least: bool = False) -> str:
    word = "at least " if at_least else ""
    return (
        f"the space must have at most max_states={limit} trie nodes to be enumerated, got "
        f"{word}{n}: raise max_states, or use FactoredSpace when rewards depend on a prefix only "
        "through a key"
    )


class FactoredSpace(_Layered):
    """A sequence space whose rewards depend on a prefix only through a key.

    States are (depth, prompt, key) triples; emitting ``a`` moves key k to ``step(k, a)`` (or
    to ``key_fn(prompt, prefix + (a,))`` computed on one representative prefix when ``step`` is
    None, which assumes the key is Markov). Backups run over keys in O(T·|keys|·A) instead of the
    trie's A^T. Every map of the package accepts a factored space in place of a trie except those
    that enumerate sequences (``reward_to_steps``, ``sequences()``, R over sequences).

    Args:
        vocab_size, max_len, eos, n_prompts: as in :class:`SequenceSpace`.
        key_fn: ``key_fn(prompt, prefix) -> hashable``; with ``step`` given it is called on the
            empty prefix only.
        step: optional ``step(key, token) -> key``.
        mask: optional ``mask(depth, key) -> bool (A,)``.
        max_states: limit on the number of keyed states.

    >>> fs = FactoredSpace(3, 200, key_fn=lambda p, y: 0, step=lambda k, a: k + (a == 0))
    >>> fs.n_states
    20100
    """

    def __init__(
        self,
        vocab_size: int,
        max_len: int,
        key_fn: Callable[[int, tuple[int, ...]], Hashable],
        eos: int | None = None,
        n_prompts: int = 1,
        *,
        step: Callable[[Hashable, int], Hashable] | None = None,
        mask: Callable[[int, Hashable], ArrayLike] | None = None,
        max_states: int = DEFAULT_MAX_STATES,
    ) -> None:
        A, T, eos, P = _check_common(vocab_size, max_len, eos, n_prompts)
        max_states = check_positive_int(max_states, "max_states")
        for name, fn in (("key_fn", key_fn), ("step", step), ("mask", mask)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{name} must be a callable, got {type(fn).__name__}")
        if key_fn is None:
            raise TypeError("key_fn must be a callable key_fn(prompt, prefix) -> key, got None")
        self.vocab_size, self.max_len, self.eos, self.n_prompts = A, T, eos, P
        keys: list[Hashable] = [key_fn(p, ()) for p in range(P)]
        reps: list[tuple[int, ...]] = [()] * P
        prompts = list(range(P))
        offsets, blocks = [0], []
        for d in range(T):
            lo = offsets[-1]
            hi = len(keys)
            index: dict[tuple[int, Hashable], int] = {}
            allowed0, terminal = _structural(A, T, eos, d, 1)
            ch = np.full((hi - lo, A), MASKED, dtype=np.int64)
            for s in range(lo, hi):
                allowed = allowed0[0].copy()
                if mask is not None:
                    m = np.asarray(mask(d, keys[s]))
                    if m.shape != (A,) or m.dtype != np.bool_:
                        raise ValueError(
                            f"mask must return a boolean array of shape ({A},), got dtype "
                            f"{m.dtype} and shape {m.shape} at depth {d}, key {keys[s]!r}"
                        )
                    allowed &= m
                    if not allowed.any():
                        raise ValueError(
                            "mask must leave an allowed action at every reachable state, got "
                            f"every action masked at depth {d}, prompt {prompts[s]}, key {keys[s]!r}"
                        )
                for a in np.nonzero(allowed)[0]:
                    if terminal[0, a]:
                        ch[s - lo, a] = TERMINAL
                        continue
                    a = int(a)
                    if step is not None:
                        k = step(keys[s], a)
                        rep: tuple[int, ...] = ()
                    else:
                        rep = (*reps[s], a)
                        k = key_fn(prompts[s], rep)
                    tag = (prompts[s], k)
                    j = index.get(tag)
                    if j is None:
                        j = len(keys)
                        if j >= max_states:
                            raise ValueError(
                                f"the factored space must have at most max_states={max_states} "
                                f"keyed states, got more at depth {d + 1}"
                            )
                        index[tag] = j
                        keys.append(k)
                        reps.append(rep)
                        prompts.append(prompts[s])
                    ch[s - lo, a] = j
            blocks.append(ch)
            offsets.append(hi)
            if step is not None:
                reps = [()] * len(keys)
        self.children = np.concatenate(blocks)
        n = self.children.shape[0]
        self.keys = keys[:n]
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.prompt = np.asarray(prompts[:n], dtype=np.int64)
        self.depth = np.repeat(np.arange(T), np.diff(self.offsets))

    def tabulate(self, fn: Callable[[int, Hashable], ArrayLike]) -> NDArray[np.float64]:
        """Table ``(n_states, A)`` with row ``fn(depth, key)`` (e.g. a step reward or logits)."""
        rows = [np.asarray(fn(int(d), k), dtype=np.float64) for d, k in zip(self.depth, self.keys)]
        out = np.stack(rows)
        if out.shape != self.shape:
            raise ValueError(
                f"fn must return arrays of shape ({self.vocab_size},), got {out.shape}"
            )
        return out

    def states_of(self, space: SequenceSpace) -> NDArray[np.int64]:
        """The keyed state of every state of a trie over the same space (``(space.n_states,)``)."""
        if not isinstance(space, SequenceSpace):
            raise TypeError(f"space must be a SequenceSpace, got {type(space).__name__}")
        same = (space.vocab_size, space.max_len, space.eos, space.n_prompts)
        mine = (self.vocab_size, self.max_len, self.eos, self.n_prompts)
        if same != mine:
            raise ValueError(
                f"space must have (vocab_size, max_len, eos, n_prompts) = {mine}, got {same}"
            )
        out = np.empty(space.n_states, dtype=np.int64)
        out[: space.n_prompts] = self.roots
        for sl in space.depth_slices()[1:]:
            par = out[space.parent[sl]]
            out[sl] = self.children[par, space.parent_action[sl]]
        if (out < 0).any():
            raise ValueError("space allows an action that the factored space masks")
        return out

    def __repr__(self) -> str:
        return (
            f"FactoredSpace(vocab_size={self.vocab_size}, max_len={self.max_len}, eos={self.eos}, "
            f"n_prompts={self.n_prompts}; {self.n_states} keyed states)"
        )


def as_space(space: Any, name: str = "space") -> _Layered:
    if not isinstance(space, _Layered):
        raise TypeError(
            f"{name} must be a SequenceSpace or FactoredSpace, got {type(space).__name__}"
        )
    return space


def as_trie(space: Any, what: str) -> SequenceSpace:
    if not isinstance(space, SequenceSpace):
        raise TypeError(
            f"{what} enumerates sequences: space must be a SequenceSpace, got {type(space).__name__}"
        )
    return space
