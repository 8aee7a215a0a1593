"""Hugging Face integration (``pip install bittokens[hf]``): tokenizer and causal-LM wrapper."""

from ._hf import NUMBER_PATTERN as NUMBER_PATTERN
from ._hf import BitTokensForCausalLM as BitTokensForCausalLM
from ._hf import BitTokensOutput as BitTokensOutput
from ._hf import NumberTokenizer as NumberTokenizer

__all__ = ["NUMBER_PATTERN", "BitTokensForCausalLM", "BitTokensOutput", "NumberTokenizer"]
