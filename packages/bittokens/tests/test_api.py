"""The public API is exactly what __init__ exports; extras import lazily."""

from __future__ import annotations

import bittokens
import bittokens.baselines
import bittokens.data
import bittokens.hf
from icml26_shared.testing import assert_import_is_light


def test_public_api_exact():
    assert bittokens.__all__ == [
        "NUM_TOKEN", "PRECISIONS", "Batch", "BitHead", "BitTokens", "FitResult", "NumberEmbedding",
        "NumberScheme", "TinyGPT", "bit_flip_errors", "bit_loss", "bit_weights", "decode",
        "decode_confidence", "encode", "encode_pm1", "exact_match", "field_accuracy", "fit",
        "format_number", "log_smape", "normalised_accuracy", "parse_number", "smape", "train",
    ]  # fmt: skip
    assert bittokens.baselines.__all__ == ["DigitTokens", "FoNE", "SubwordTokens", "XVal"]
    assert bittokens.data.__all__ == [
        "PAPER_RANGE", "SAMPLINGS", "TASKS", "WORDS", "Task", "make_task", "sample_numbers",
        "score", "significant_bits",
    ]  # fmt: skip
    assert bittokens.train is bittokens.fit
    assert bittokens.hf.__all__ == [
        "NUMBER_PATTERN",
        "BitTokensForCausalLM",
        "BitTokensOutput",
        "NumberTokenizer",
    ]
    for mod in (bittokens, bittokens.baselines, bittokens.data, bittokens.hf):
        for name in mod.__all__:
            assert hasattr(mod, name)


def test_core_import_does_not_load_transformers():
    assert_import_is_light(
        "bittokens", ["transformers", "tokenizers", "scipy.stats", "sklearn", "matplotlib"]
    )
