"""Differentiable convex QP layers by a smooth penalty backward (torch + JAX), any QP solver."""

__all__: list[str] = []
__version__ = "0.1.0"
