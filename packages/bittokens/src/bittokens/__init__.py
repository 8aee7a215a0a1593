"""Single-token IEEE-754 number embeddings for language models, with baselines and HF integration."""

__all__: list[str] = []
__version__ = "0.1.0"
