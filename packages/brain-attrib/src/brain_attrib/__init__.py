"""brain-attrib: which words drive brain alignment, and which drive next-word prediction.

Reconstructs Proietti, Capobianco & Toneva (ICML 2026, arXiv 2510.12355): a voxelwise encoding
model on a causal LM's hidden states, made one differentiable pipeline, with word-level
attributions of brain alignment (BA) and next-word prediction (NWP).

Start with :func:`brain_attrib.synthetic.tiny_lm` (the shipped tiny GPT-2) and
:func:`brain_attrib.synthetic.fmri` (or :func:`brain_attrib.data.load_naturalistic` for your
own recordings), fit an :class:`EncodingModel` on them, then wrap it in a :class:`Pipeline` and
call ``Pipeline.attribute`` for word scores and :func:`masking_test` to check them.
"""

import importlib.metadata

from . import data as data
from . import metrics as metrics
from . import ridge as ridge
from . import synthetic as synthetic
from ._consistency import ConsistencyGap as ConsistencyGap
from ._consistency import consistency_gap as consistency_gap
from ._encoding import EncodingModel as EncodingModel
from ._encoding import Pipeline as Pipeline
from ._encoding import WordScores as WordScores
from ._masking import MaskingResult as MaskingResult
from ._masking import masking_test as masking_test
from ._ridge import RidgeFold as RidgeFold
from ._ridge import fit_ridge as fit_ridge
from .data import RunData as RunData
from .data import load_naturalistic as load_naturalistic

__version__ = importlib.metadata.version("brain-attrib")

__all__ = [
    "ConsistencyGap",
    "EncodingModel",
    "MaskingResult",
    "Pipeline",
    "RidgeFold",
    "RunData",
    "WordScores",
    "__version__",
    "consistency_gap",
    "data",
    "fit_ridge",
    "load_naturalistic",
    "masking_test",
    "metrics",
    "ridge",
    "synthetic",
]
