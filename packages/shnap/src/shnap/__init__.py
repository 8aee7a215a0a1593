"""shnap: interventional audits of 3D image risk models (SHNAP / SNAP, arXiv 2602.02560)."""

__version__ = "0.1.0"
