"""Parameter-free online conformal prediction via universal portfolios, with the online baseline zoo."""

__all__: list[str] = []
__version__ = "0.1.0"
