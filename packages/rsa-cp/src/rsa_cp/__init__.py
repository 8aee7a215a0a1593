"""Small-sample conformal prediction by optimal-transport alignment of reference scores."""

__all__: list[str] = []
__version__ = "0.1.0"
