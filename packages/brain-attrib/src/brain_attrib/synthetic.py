"""Synthetic data: the grammar corpus, the tiny LM trained on it, the planted-word fMRI, and the
oracle encoder's stand-in LM."""

from ._fmri import fmri as fmri
from ._fmri import hrf as hrf
from ._fmri import planted_words as planted_words
from ._grammar import NOUNS as NOUNS
from ._grammar import TOPICS as TOPICS
from ._grammar import Corpus as Corpus
from ._grammar import WordTokenizer as WordTokenizer
from ._grammar import grammar_corpus as grammar_corpus
from ._grammar import number_flip as number_flip
from ._lm import OracleLM as OracleLM
from ._lm import oracle_lm as oracle_lm
from ._lm import tiny_lm as tiny_lm

__all__ = [
    "NOUNS",
    "TOPICS",
    "Corpus",
    "OracleLM",
    "WordTokenizer",
    "fmri",
    "grammar_corpus",
    "hrf",
    "number_flip",
    "oracle_lm",
    "planted_words",
    "tiny_lm",
]
