"""Human-AI collaborative conformal prediction sets with harm and complementarity guarantees."""

__all__: list[str] = []
__version__ = "0.1.0"
