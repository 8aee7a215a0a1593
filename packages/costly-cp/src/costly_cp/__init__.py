"""Conformal calibration with costly labels: an online rule for when to stop labelling."""

__all__: list[str] = []
__version__ = "0.1.0"
