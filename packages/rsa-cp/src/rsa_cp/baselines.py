"""The calibrations RSA-CP is compared with: split conformal (plain and randomised), SPI's fast
form (no alignment) and reference-only calibration. Plain functions taking the miscoverage
``alpha``."""

from ._rsa import randomized_split_threshold as randomized_split_threshold
from ._rsa import reference_threshold as reference_threshold
from ._rsa import spi_threshold as spi_threshold
from ._rsa import split_threshold as split_threshold

__all__ = [
    "randomized_split_threshold",
    "reference_threshold",
    "spi_threshold",
    "split_threshold",
]
