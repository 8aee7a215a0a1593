"""SE(3)-equivariant flow matching for 3D trajectory prediction (JAX, e3nn-jax, equinox)."""

__all__: list[str] = []
__version__ = "0.1.0"
