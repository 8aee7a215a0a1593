"""Synthetic grammar corpus and its word-level tokenizer.

Four topics × 25 topic nouns (semantic cues), determiners and verbs that agree in number with the
subject noun (syntactic cues), adjectives and function words. A topic persists for 3–6 sentences.
Singular verbs (``stem + "s"``) are two sub-tokens (``stem``, ``##s``), so sub-token → word
pooling is exercised; nouns (singular and plural) are one token each.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from icml26_shared.checks import SeedLike, rng_from_seed
from icml26_shared.state import reading

__all__ = [
    "TOPICS",
    "Corpus",
    "WordTokenizer",
    "grammar_corpus",
    "number_flip",
    "replacement_pool",
]

TOPICS = ("sea", "farm", "city", "sky")
_SYL = ("ba", "ko", "mi", "tu", "re")
NOUNS = {t: [f"{t}{a}{b}" for a in _SYL for b in _SYL] for t in TOPICS}
DETS = {"sg": ("a", "this", "one"), "pl": ("some", "these", "many")}
ADJS = ("big", "small", "red", "old", "new", "quiet", "bright", "dark", "cold", "warm")
VERBS = ("see", "take", "find", "like", "move", "hold", "keep", "need", "make", "want")
FUNCS = ("and", "then", "near", "with", "under", "over")


@dataclass
class Corpus:
    """Words with their fine categories (``det_sg``, ``noun_pl``, ``adj`` ...) and topic ids."""

    words: list[str]
    categories: list[str]
    topics: np.ndarray


def _noun_phrase(rng: np.random.Generator, topic: str, out: list[tuple[str, str]]) -> None:
    num = "sg" if rng.random() < 0.5 else "pl"
    out.append((str(rng.choice(DETS[num])), f"det_{num}"))
    if rng.random() < 0.4:
        out.append((str(rng.choice(ADJS)), "adj"))
    stem = str(rng.choice(NOUNS[topic]))
    out.append((stem + ("s" if num == "pl" else ""), f"noun_{num}"))
    return None


def _sentence(rng: np.random.Generator, topic: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    _noun_phrase(rng, topic, out)
    num = out[-1][1].split("_")[1]
    verb = str(rng.choice(VERBS))
    out.append((verb + ("s" if num == "sg" else ""), f"verb_{num}"))
    _noun_phrase(rng, topic, out)
    if rng.random() < 0.5:
        out.append((str(rng.choice(FUNCS)), "func"))
        _noun_phrase(rng, topic, out)
    out.append((".", "punct"))
    return out


def grammar_corpus(n_words: int, *, seed: SeedLike = 0) -> Corpus:
    """Generate at least ``n_words`` words (whole sentences), topics switching every 3–6 sentences.

    >>> c = grammar_corpus(50, seed=1)
    >>> len(c.words) >= 50 and len(c.words) == len(c.categories)
    True
    """
    if int(n_words) < 1:
        raise ValueError(f"n_words must be a positive integer, got {n_words!r}")
    rng = rng_from_seed(seed)
    words: list[str] = []
    cats: list[str] = []
    topics: list[int] = []
    while len(words) < n_words:
        t = int(rng.integers(len(TOPICS)))
        for _ in range(int(rng.integers(3, 7))):
            for w, c in _sentence(rng, TOPICS[t]):
                words.append(w)
                cats.append(c)
                topics.append(t)
    return Corpus(words, cats, np.asarray(topics))


def replacement_pool() -> dict[str, list[str]]:
    """All words of each fine category (used for same-category replacement)."""
    pool: dict[str, list[str]] = {
        "det_sg": list(DETS["sg"]),
        "det_pl": list(DETS["pl"]),
        "adj": list(ADJS),
        "verb_pl": list(VERBS),
        "verb_sg": [v + "s" for v in VERBS],
        "func": list(FUNCS),
        "punct": ["."],
    }
    stems = [n for t in TOPICS for n in NOUNS[t]]
    pool["noun_sg"] = stems
    pool["noun_pl"] = [n + "s" for n in stems]
    return pool


def number_flip() -> dict[str, str]:
    """Each word that carries number → its other-number form (determiners paired by position,
    nouns and verbs by their ``s``); adjectives, function words and ``.`` are absent.

    >>> f = number_flip()
    >>> f["this"], f["these"], f["seababa"], f["seababas"], f["sees"], f["see"]
    ('these', 'this', 'seababas', 'seababa', 'see', 'sees')
    """
    out: dict[str, str] = {}
    for a, b in zip(DETS["sg"], DETS["pl"], strict=True):
        out[a], out[b] = b, a
    for n in (n for t in TOPICS for n in NOUNS[t]):
        out[n], out[n + "s"] = n + "s", n
    for v in VERBS:
        out[v + "s"], out[v] = v, v + "s"
    return out


class WordTokenizer:
    """Word-level tokenizer of the grammar: singular verbs ``stem + "s"`` split into two sub-tokens.

    >>> tok = WordTokenizer()
    >>> len(tok.encode_word("sees")), len(tok.encode_word("seababas"))
    (2, 1)
    """

    def __init__(self) -> None:
        vocab = ["<unk>", "##s", "."]
        vocab += list(DETS["sg"]) + list(DETS["pl"]) + list(ADJS) + list(VERBS) + list(FUNCS)
        vocab += [n for t in TOPICS for n in NOUNS[t]]
        vocab += [n + "s" for t in TOPICS for n in NOUNS[t]]
        self.vocab = vocab
        self.index = {w: i for i, w in enumerate(vocab)}
        self._plural_stems = set(VERBS)

    def __len__(self) -> int:
        return len(self.vocab)

    def encode_word(self, word: str) -> list[int]:
        """Sub-token ids of one word."""
        if word in self.index and word not in ("##s",):
            return [self.index[word]]
        if word.endswith("s") and word[:-1] in self._plural_stems:
            return [self.index[word[:-1]], self.index["##s"]]
        return [0]

    def save(self, folder: Path | str) -> None:
        """Write ``word_tokenizer.json`` into ``folder``."""
        path = Path(folder) / "word_tokenizer.json"
        path.write_text(json.dumps({"vocab": self.vocab}, allow_nan=False))

    @classmethod
    def load(cls, folder: Path | str) -> WordTokenizer:
        """Read a tokenizer saved by :meth:`save`, refusing a vocabulary that differs."""
        path = Path(folder) / "word_tokenizer.json"
        with reading(path, "a brain-attrib word tokenizer (WordTokenizer.save)"):
            data = json.loads(path.read_text(encoding="utf-8"))
            vocab = data["vocab"]
        tok = cls()
        if vocab != tok.vocab:
            raise ValueError("tokenizer: saved vocab differs from this version's grammar vocab")
        return tok
