"""BitTokens: one token per number, embedded by its IEEE-754 bits.

Kreitner, Hager et al., "Efficient numeracy in language models through single-token number
embeddings", ICML 2026, arXiv:2510.06824.

Core (torch): the codecs :func:`encode` / :func:`decode`, :class:`NumberEmbedding`,
:class:`BitHead`, :func:`bit_loss`, the :class:`BitTokens` scheme, a small :class:`TinyGPT`
trunk, :func:`fit` (also named :func:`train`; Muon with the paper's parameter groups or AdamW,
one process or DDP), :func:`log_smape` and :func:`field_accuracy`. Submodules: :mod:`bittokens.data`
(tasks), :mod:`bittokens.baselines` (single-digit, subword, xVal, FoNE) and :mod:`bittokens.hf`
(``transformers`` integration, ``pip install bittokens[hf]``).

Start with :func:`encode` / :func:`decode` to see a number's bits, then build a
``TinyGPT(BitTokens(128))`` and call :func:`fit` on a task from
:func:`bittokens.data.make_task` (``progress=None`` shows the steps).
"""

import importlib.metadata

from ._codec import PRECISIONS as PRECISIONS
from ._codec import bit_flip_errors as bit_flip_errors
from ._codec import decode as decode
from ._codec import decode_confidence as decode_confidence
from ._codec import encode as encode
from ._codec import encode_pm1 as encode_pm1
from ._layers import BitHead as BitHead
from ._layers import NumberEmbedding as NumberEmbedding
from ._layers import bit_loss as bit_loss
from ._layers import bit_weights as bit_weights
from ._metric import exact_match as exact_match
from ._metric import field_accuracy as field_accuracy
from ._metric import log_smape as log_smape
from ._metric import normalised_accuracy as normalised_accuracy
from ._metric import smape as smape
from ._model import Batch as Batch
from ._model import TinyGPT as TinyGPT
from ._schemes import NUM_TOKEN as NUM_TOKEN
from ._schemes import BitTokens as BitTokens
from ._schemes import NumberScheme as NumberScheme
from ._schemes import format_number as format_number
from ._schemes import parse_number as parse_number
from ._train import FitResult as FitResult
from ._train import fit as fit
from ._train import fit as train

__version__ = importlib.metadata.version("bittokens")

__all__ = [
    "NUM_TOKEN",
    "PRECISIONS",
    "Batch",
    "BitHead",
    "BitTokens",
    "FitResult",
    "NumberEmbedding",
    "NumberScheme",
    "TinyGPT",
    "bit_flip_errors",
    "bit_loss",
    "bit_weights",
    "decode",
    "decode_confidence",
    "encode",
    "encode_pm1",
    "exact_match",
    "field_accuracy",
    "fit",
    "format_number",
    "log_smape",
    "normalised_accuracy",
    "parse_number",
    "smape",
    "train",
]
