"""Datasets: the synthetic city with known ground truth and the city container."""

from ._city import CATEGORIES as CATEGORIES
from ._city import CityData as CityData
from ._city import make_city as make_city

__all__ = ["CATEGORIES", "CityData", "make_city"]
