"""Baseline number schemes with BitTokens' interface: single-digit, subword, xVal, FoNE."""

from ._baselines import DigitTokens as DigitTokens
from ._baselines import FoNE as FoNE
from ._baselines import SubwordTokens as SubwordTokens
from ._baselines import XVal as XVal

__all__ = ["DigitTokens", "FoNE", "SubwordTokens", "XVal"]
